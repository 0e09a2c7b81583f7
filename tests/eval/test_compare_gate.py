"""eval --compare's statistics and gate, and recorded answers, without a server.

The statistics are checked against this file's own arithmetic (McNemar's exact p from binomial
coefficients, Wilson from its formula, the bootstrap by scipy with the same seed); the gate's
exit codes are checked end to end through the CLI on constructed recordings (a recording is the
--replay input format: test data, each answer written out), so no network is involved. The same
statistics against the real llm2jev server are in tests/served/test_gates.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.decoder.record import FORMAT, FORMAT_VERSION, Recording, ReplayBackend, request_key
from auditor.errors import UsageError
from auditor.eval.compare import compare_question, mcnemar_exact, paired_bootstrap
from support import FIXTURES, scipy_paired_interval

REQUEST = FIXTURES / "served" / "ticket_triage.json"
KEYS = ["billing", "shipping", "technical"]


def own_mcnemar(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


@pytest.mark.parametrize("b,c", [(0, 0), (1, 0), (3, 9), (23, 21), (0, 12), (40, 61)])
def test_mcnemar_exact_is_the_two_sided_binomial_on_the_flips(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(own_mcnemar(b, c), abs=1e-12)


def test_paired_bootstrap_resamples_rows_together_with_a_fixed_seed():

    a = [True, False, True, True, False, False, True, False] * 4
    b = [True, True, False, True, True, False, True, True] * 4
    first = paired_bootstrap(a, b, seed=7)
    assert first == paired_bootstrap(a, b, seed=7)  # the same seed, the same interval
    assert first != paired_bootstrap(a, b, seed=8)
    # pairs kept together: a paired resample of identical sides has no spread at all
    assert paired_bootstrap(a, a, seed=7) == (0.0, 0.0)
    own = scipy_paired_interval(a, b, 7)
    assert first == pytest.approx((own.low, own.high), abs=1e-12)
    low, high = first
    assert low <= sum(b) / len(b) - sum(a) / len(a) <= high


def test_compare_question_lists_flips_and_agreement():
    rows_a = [
        {"id": "r1", "labels": {"q": "x"}, "answers": {"q": "x"}},
        {"id": "r2", "labels": {"q": "y"}, "answers": {"q": "x"}},
        {"id": "r3", "labels": {"q": "y"}, "answers": {"q": "y"}},
        {"id": "r4", "labels": {}, "answers": {"q": "y"}},  # unlabeled: agreement only
        {"id": "r5", "labels": {"q": "x"}, "answers": None},  # failed on A: not paired
    ]
    rows_b = [
        {"id": "r1", "labels": {"q": "x"}, "answers": {"q": "y"}},
        {"id": "r2", "labels": {"q": "y"}, "answers": {"q": "y"}},
        {"id": "r3", "labels": {"q": "y"}, "answers": {"q": "y"}},
        {"id": "r4", "labels": {}, "answers": {"q": "x"}},
        {"id": "r5", "labels": {"q": "x"}, "answers": {"q": "x"}},
    ]
    got = compare_question("q", rows_a, rows_b, seed=0, margin=0.1, alpha=0.05)
    assert got["paired"] == 3 and got["answered_by_both"] == 4
    assert got["flips"]["right_to_wrong"] == [{"id": "r1", "label": "x", "a": "x", "b": "y"}]
    assert got["flips"]["wrong_to_right"] == [{"id": "r2", "label": "y", "a": "x", "b": "y"}]
    assert got["agreement"] == pytest.approx(1 / 4)  # only r3 answered alike
    assert got["a"]["accuracy"] == pytest.approx(2 / 3) and got["b"]["accuracy"] == pytest.approx(2 / 3)
    assert got["mcnemar"]["p_value"] == 1.0 and got["gate"]["failed"] is False


def _answer(keys: list[str], winner: str, noul: float) -> dict:
    probs = {k: (0.8 if k == winner else 0.2 / (len(keys) - 1)) for k in keys}
    return {
        "model": "constructed",
        "answers": {"team": {"choice": winner, "probabilities": probs}, "urgent": {"noul": noul}},
    }


def _recording(path: Path, sides: dict[str, tuple[dict, list[str]]], rows: list[dict]) -> None:
    """A --replay file answering each side's request for every row with the given answers."""
    recording = Recording()
    for body, answers in sides.values():
        for row, winner in zip(rows, answers):
            sent = {**body, "state": row["state"]}
            recording.add(
                sent, None, None, _answer(list(body["questions"]["team"]["criteria"]), winner, 0.3), None
            )
    path.write_text(recording.dumps("test"))


def _rows(tmp_path: Path, labels: list[str]) -> tuple[Path, list[dict]]:
    rows = [
        {"id": f"r{i:02d}", "state": f"ticket {i}", "labels": {"team": label}}
        for i, label in enumerate(labels)
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, rows


def _run(*args: str):
    return CliRunner().invoke(cli, ["eval", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    "b_right,margin,expected",
    [
        (18, 0.05, 1),  # 30 -> 18 of 40 right, every flip one way: worse beyond the margin, p < 0.05
        (27, 0.05, 0),  # 30 -> 27: within chance (McNemar p = 0.25)
        (18, 0.5, 0),  # a drop of 0.3 is inside a margin of 0.5
        (34, 0.0, 0),  # B better
    ],
)
def test_the_gate_fails_only_when_b_is_worse_by_more_than_the_margin_and_significantly(
    tmp_path, b_right, margin, expected
):
    labels = [KEYS[i % 3] for i in range(40)]
    data, rows = _rows(tmp_path, labels)
    wrong = {k: KEYS[(KEYS.index(k) + 1) % 3] for k in KEYS}
    a_answers = [label if i < 30 else wrong[label] for i, label in enumerate(labels)]
    b_answers = [label if i < b_right else wrong[label] for i, label in enumerate(labels)]
    body = json.loads(REQUEST.read_text())
    body_b = json.loads(json.dumps(body))
    body_b["questions"]["team"]["instructions"] = "Which team owns this ticket?"
    request_b = tmp_path / "request_b.json"
    request_b.write_text(json.dumps(body_b))
    answers = tmp_path / "answers.jsonl"
    _recording(answers, {"a": (body, a_answers), "b": (body_b, b_answers)}, rows)
    out = tmp_path / "compare.json"
    result = _run(
        str(REQUEST), "--data", str(data), "--backend", "systemone", "--replay", str(answers),
        "--compare", "--request-b", str(request_b), "--fail-if-worse", str(margin), "--output-json", str(out), "-q",
    )  # fmt: skip
    assert result.exit_code == expected, result.output
    report = json.loads(out.read_text())
    team = report["questions"][0]
    assert team["a"]["correct"] == 30 and team["b"]["correct"] == b_right
    assert team["mcnemar"]["p_value"] == pytest.approx(
        own_mcnemar(max(0, 30 - b_right), max(0, b_right - 30)), abs=1e-9
    )
    assert report["gate"]["failed"] is (expected == 1)
    assert ("gate: FAIL" in result.output) is (expected == 1)


def test_compare_html_has_one_chart_of_accuracy_a_vs_b(tmp_path):
    labels = [KEYS[i % 3] for i in range(12)]
    data, rows = _rows(tmp_path, labels)
    body = json.loads(REQUEST.read_text())
    answers = tmp_path / "answers.jsonl"
    recording = Recording()
    for model, winners in (("m-a", labels), ("m-b", ["billing"] * 12)):
        for row, winner in zip(rows, winners):
            recording.add({**body, "state": row["state"]}, model, None, _answer(KEYS, winner, 0.7), None)
    answers.write_text(recording.dumps("test"))
    html = tmp_path / "compare.html"
    result = _run(
        str(REQUEST), "--data", str(data), "--backend", "systemone", "--replay", str(answers), "--model", "m-a",
        "--compare", "--model-b", "m-b", "-f", "html", "-o", str(html), "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = html.read_text()
    assert page.count("<svg") == 1 and 'class="a"' in page and 'class="b"' in page
    assert "A 1.000" in page and "B 0.333" in page  # team: A all right, B right on the 4 billing rows


def test_replay_refuses_an_unrecorded_request_naming_it(tmp_path):
    data, rows = _rows(tmp_path, ["billing", "shipping"])
    body = json.loads(REQUEST.read_text())
    answers = tmp_path / "answers.jsonl"
    _recording(answers, {"a": (body, ["billing", "shipping"])}, rows)
    changed = json.loads(json.dumps(body))
    changed["questions"]["team"]["criteria"]["billing"] = "money matters"
    request = tmp_path / "changed.json"
    request.write_text(json.dumps(changed))
    result = _run(str(request), "--data", str(data), "--backend", "systemone", "--replay", str(answers), "-q")
    assert result.exit_code == 2
    assert (
        f'{request}: --replay {answers}: no recorded answer for the request with state "ticket '
        in result.output
    )
    assert "questions.team.criteria.billing differs from the recorded one" in result.output
    same = _run(
        str(REQUEST), "--data", str(data), "--backend", "systemone", "--replay", str(answers), "-f", "json"
    )
    assert same.exit_code == 0, same.output
    report = json.loads(same.stdout)
    assert report["server"]["requests"] == 0 and report["server"]["answers"]["replayed"] == 2
    assert report["server"]["answers"]["mode"] == "replay"
    assert "answers recorded" in same.stderr and "by pcdlint test" in same.stderr


def test_a_recording_key_is_the_body_and_model_never_the_url_or_the_key():
    body = {"state": "s", "questions": {"q": {"type": "choice", "criteria": {"a": None, "b": None}}}}
    key = request_key(body, "m")
    assert key == request_key({**body, "model": "whatever was sent"}, "m")
    assert key != request_key(body, "other") and key != request_key(body, "m", "b")
    reordered = {**body, "questions": {"q": {"type": "choice", "criteria": {"b": None, "a": None}}}}
    assert request_key(reordered, "m") != key  # the order probe's requests are distinct


@pytest.mark.parametrize(
    "text,message",
    [
        ("", r"empty \(no header line\)"),
        ('{"format": "other"}\n', "not a pcdlint answers file"),
        (f'{{"format": "{FORMAT}", "version": {FORMAT_VERSION}}}\nnot json\n', ":2: not a JSON line"),
        (
            f'{{"format": "{FORMAT}", "version": {FORMAT_VERSION}}}\n'
            '{"key": "00", "request": {"state": ""}, "response": {}}\n',
            ":2: its key is not the fingerprint of its request",
        ),
    ],
)
def test_a_damaged_recording_is_a_usage_error(tmp_path, text, message):
    path = tmp_path / "answers.jsonl"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        Recording.load(str(path))


def test_a_replayed_refusal_is_a_refusal(tmp_path):
    from auditor.decoder.systemone import DecisionRefused

    body = {"state": "s", "questions": {}}
    recording = Recording()
    recording.add(body, None, None, None, DecisionRefused(422, "too many options"))
    path = tmp_path / "answers.jsonl"
    path.write_text(recording.dumps("test"))
    replay = ReplayBackend(Recording.load(str(path)), str(path), model=None, endpoint=None)
    with pytest.raises(DecisionRefused, match="422: too many options"):
        replay.decide(body)


def test_gate_options_need_compare_and_the_systemone_backend(tmp_path):
    data, _unused = _rows(tmp_path, ["billing"])
    for args, message in (
        (["--backend", "systemone", "--base-url", "http://127.0.0.1:9", "--fail-if-worse", "0.1"], "--fail-if-worse is for eval --compare"),
        (["--backend", "systemone", "--base-url", "http://127.0.0.1:9", "--compare"], "--compare needs side B"),
        (["--record", str(tmp_path / "a.jsonl")], "--record and --replay are for --backend systemone"),
        (["--backend", "systemone", "--record", "a", "--replay", "b"], "--record and --replay exclude each other"),
        (["--backend", "systemone", "--base-url", "http://127.0.0.1:9", "--record", str(REQUEST)], "--record"),
    ):  # fmt: skip
        result = _run(str(REQUEST), "--data", str(data), *args)
        assert result.exit_code == 2 and message in result.output, (args, result.output)
