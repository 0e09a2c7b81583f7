"""Probes, eval --compare and recorded answers against the real llm2jev server (SmolLM2-135M).

Each number a report gives is recomputed here from answers this test gets itself: it posts the
same bodies to the server (the probes; a sample of the compare's rows), or reads the server's
answers from the recording and checks a sample of them against its own posts (the compare's 128
requests take minutes on CPU: asking them all twice would double that). The statistics are this
file's own arithmetic: McNemar's exact p from binomial coefficients, Wilson's interval from its
formula, the bootstrap by scipy with the report's seed. The replay runs with every socket
connection refused in the process.
"""

from __future__ import annotations

import json
import math
import socket
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import FIXTURES, row_requests, scipy_paired_interval

pytestmark = [pytest.mark.model, pytest.mark.slow]

REQUEST = FIXTURES / "served" / "ticket_triage.json"
REQUEST_B = FIXTURES / "served" / "ticket_triage_v2.json"
ROWS = FIXTURES / "served" / "ticket_triage.jsonl"
STATE = "I was charged twice for my March subscription, please refund one of them."
# the scope probe's fixed off-topic state, as docs/decision-gates.md gives it
OFF_TOPIC = (
    "The forecast for tomorrow: light rain in the morning, clearing by noon, with a high of "
    "fourteen degrees and a gentle breeze from the west."
)


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url + "/v1/systemone", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def probs(answer: dict, keys: list[str]) -> list[float]:
    return [answer["probabilities"][k] for k in keys]


def tv(p: list[float], q: list[float]) -> float:
    return 0.5 * sum(abs(a - b) for a, b in zip(p, q))


def wilson(correct: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar(b: int, c: int) -> float:
    n = b + c
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_every_probe_reports_what_the_same_bodies_posted_by_the_test_answer(served_llm2jev, tmp_path):
    body = json.loads(REQUEST.read_text())
    body["state"] = STATE
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps(body))
    answers = tmp_path / "answers.jsonl"
    args = ["verify", "--backend", "systemone", "--base-url", served_llm2jev, str(path)]
    probes = ["--probe", "scope", "--probe", "criteria", "--probe", "names", "-f", "json"]
    result = CliRunner().invoke(cli, [*args, *probes, "--record", str(answers)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    # stated before anything was sent (stderr), and in the report
    assert "probes: scope 2 (empty and off-topic state), criteria 1" in result.stderr
    (entry,) = json.loads(result.stdout)["decisions"]
    assert entry["probe_requests"] == {"scope": 2, "criteria": 1, "names": 1}
    assert entry["requests"] == 1 + 4
    by = {(r["probe"], r["question"]): r for r in entry["probes"]}
    assert set(by) == {("scope", "team"), ("criteria", "team"), ("criteria", "urgent"), ("names", "team")}

    team = body["questions"]["team"]
    keys = list(team["criteria"])
    original = post(served_llm2jev, body)["answers"]
    # scope: the choice question alone, with an empty and with the off-topic state
    for variant, state in (("empty state", ""), ("off-topic state", OFF_TOPIC)):
        got = probs(
            post(served_llm2jev, {"state": state, "questions": {"team": team}})["answers"]["team"], keys
        )
        top = max(range(3), key=got.__getitem__)
        measured = by[("scope", "team")]["measures"][variant]
        assert measured["top"] == keys[top] and measured["p"] == pytest.approx(got[top], abs=1e-6)
    scope = by[("scope", "team")]
    worst = max(scope["measures"][v]["p"] for v in ("empty state", "off-topic state"))
    # the triage question has no way out (PCD201): the verdict links the design rule
    assert scope["measures"]["no_way_out"].startswith("PCD201 no-way-out: https://")
    assert scope["verdict"].startswith("forced: " if worst > 0.5 else "spread: ")
    assert scope["flagged"] is (worst > 0.5) and "PCD201" in scope["verdict"]
    # criteria: the noul's descriptions swapped, the choice's removed, in one request
    urgent = body["questions"]["urgent"]
    swapped = {
        "state": STATE,
        "questions": {
            "team": {**team, "criteria": dict.fromkeys(keys)},
            "urgent": {
                **urgent,
                "criteria": {"true": urgent["criteria"]["false"], "false": urgent["criteria"]["true"]},
            },
        },
    }
    changed = post(served_llm2jev, swapped)["answers"]
    p, q = original["urgent"]["noul"], changed["urgent"]["noul"]
    measures = by[("criteria", "urgent")]["measures"]
    assert measures["p_true"] == pytest.approx(p, abs=1e-6)
    assert measures["p_true_swapped"] == pytest.approx(q, abs=1e-6)
    if abs(2 * p - 1) >= 0.1:
        assert measures["followed"] == pytest.approx((p - q) / (2 * p - 1), abs=1e-5)
    removed = by[("criteria", "team")]["measures"]
    expected = tv(probs(original["team"], keys), probs(changed["team"], keys))
    assert removed["total_variation"] == pytest.approx(expected, abs=1e-6)
    # names: neutral ids, descriptions kept, mapped back by position
    neutral = {
        "state": STATE,
        "questions": {
            "team": {**team, "criteria": dict(zip(["opt1", "opt2", "opt3"], team["criteria"].values()))}
        },
    }
    renamed = post(served_llm2jev, neutral)["answers"]["team"]
    back = [renamed["probabilities"][f"opt{i + 1}"] for i in range(3)]
    named = by[("names", "team")]
    assert named["measures"]["total_variation"] == pytest.approx(
        tv(probs(original["team"], keys), back), abs=1e-6
    )
    assert named["variants"][1]["answer"] == keys[max(range(3), key=back.__getitem__)]

    # the recording replays the run offline, answer for answer
    replayed = CliRunner().invoke(cli, [*args, *probes, "--replay", str(answers)], catch_exceptions=False)
    assert replayed.exit_code == result.exit_code
    (again,) = json.loads(replayed.stdout)["decisions"]
    assert again == entry


@pytest.fixture(scope="module")
def compared(served_llm2jev, tmp_path_factory):
    """The 64 rows through two versions of the triage request, recorded."""
    where = tmp_path_factory.mktemp("compare")
    answers, report = where / "answers.jsonl", where / "compare.json"
    result = CliRunner().invoke(
        cli,
        ["eval", str(REQUEST), "--data", str(ROWS), "--backend", "systemone", "--base-url", served_llm2jev,
         "--compare", "--request-b", str(REQUEST_B), "--fail-if-worse", "0.05", "--no-cache",
         "--record", str(answers), "--output-json", str(report), "--concurrency", "4", "-q"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    return result, json.loads(report.read_text()), answers


def _own_predictions(recording: Path, request: Path) -> dict[str, dict[str, str]]:
    """Row state -> {question: answer} read off the server's recorded answers to ``request``."""
    questions = json.loads(request.read_text())["questions"]
    out = {}
    for line in recording.read_text().splitlines()[1:]:
        entry = json.loads(line)
        if entry["request"]["questions"] != questions:
            continue
        answers = entry["response"]["answers"]
        team = answers["team"]["probabilities"]
        out[entry["request"]["state"]] = {
            "team": max(questions["team"]["criteria"], key=lambda k: team[k]),
            "urgent": "true" if answers["urgent"]["noul"] >= 0.5 else "false",
        }
    return out


def test_compare_statistics_equal_the_tests_own_computation(compared, served_llm2jev):
    import numpy as np

    result, report, answers = compared
    rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    # the recording holds the server's answers: a sample of them, posted again by this test
    body_b = json.loads(REQUEST_B.read_text())
    for row in rows[::16]:
        mine = post(served_llm2jev, {**body_b, "state": row["state"]})["answers"]
        recorded = next(
            json.loads(line)
            for line in answers.read_text().splitlines()[1:]
            if json.loads(line)["request"] == {**body_b, "state": row["state"]}
        )
        assert mine["urgent"]["noul"] == pytest.approx(
            recorded["response"]["answers"]["urgent"]["noul"], abs=1e-6
        )
    side_a, side_b = _own_predictions(answers, REQUEST), _own_predictions(answers, REQUEST_B)
    assert len(side_a) == len(side_b) == 64
    for question in report["questions"]:
        name = question["name"]
        gold = [str(r["labels"][name]).lower() for r in rows]
        a = [side_a[r["state"]][name] == g for r, g in zip(rows, gold)]
        b = [side_b[r["state"]][name] == g for r, g in zip(rows, gold)]
        worse = [r["id"] for r, x, y in zip(rows, a, b) if x and not y]
        better = [r["id"] for r, x, y in zip(rows, a, b) if y and not x]
        assert question["paired"] == 64
        assert question["a"]["correct"] == sum(a) and question["b"]["correct"] == sum(b)
        assert question["a"]["wilson95"] == pytest.approx(wilson(sum(a), 64), abs=1e-9)
        assert question["b"]["wilson95"] == pytest.approx(wilson(sum(b), 64), abs=1e-9)
        assert [f["id"] for f in question["flips"]["right_to_wrong"]] == worse
        assert [f["id"] for f in question["flips"]["wrong_to_right"]] == better
        assert question["mcnemar"]["p_value"] == pytest.approx(mcnemar(len(worse), len(better)), abs=1e-9)
        agree = sum(side_a[r["state"]][name] == side_b[r["state"]][name] for r in rows) / 64
        assert question["agreement"] == pytest.approx(agree, abs=1e-12)
        own = scipy_paired_interval(a, b, report["options"]["seed"])
        if len(set(np.array(b, float) - np.array(a, float))) > 1:
            assert question["bootstrap95"] == pytest.approx([own.low, own.high], abs=1e-12)
        fails = sum(a) - sum(b) > 0.05 * 64 and mcnemar(len(worse), len(better)) < 0.05
        assert question["gate"]["failed"] is fails
    assert result.exit_code == (1 if report["gate"]["failed"] else 0)


def _without_counters(report: dict) -> dict:
    """The compare report without what may differ between a live run and its replay: each
    side's server and cache counters, and the replay's own note."""
    copy = json.loads(json.dumps(report))
    copy.pop("replay", None)
    for side in copy["sides"].values():
        side.pop("server")
        side.pop("cache")
    return copy


def test_a_recorded_compare_replays_offline_identically(compared, served_llm2jev, tmp_path, no_network):
    result, report, answers = compared
    out = tmp_path / "replayed.json"
    args = ["eval", str(REQUEST), "--data", str(ROWS), "--backend", "systemone", "--base-url", served_llm2jev,
            "--compare", "--fail-if-worse", "0.05", "--replay", str(answers), "--output-json", str(out), "-q"]  # fmt: skip
    replayed = CliRunner().invoke(cli, [*args, "--request-b", str(REQUEST_B)], catch_exceptions=False)
    assert replayed.exit_code == result.exit_code, replayed.output
    again = json.loads(out.read_text())
    assert _without_counters(again) == _without_counters(report)
    assert again["sides"]["a"]["server"]["requests"] == 0
    assert (
        again["replay"]["note"].startswith("answers recorded ")
        and "from model smollm2" in again["replay"]["note"]
    )
    assert replayed.stdout.startswith(again["replay"]["note"])  # the text report's first line
    assert f"pcdlint: replaying {answers}: {again['replay']['note']}" in replayed.stderr
    # a changed request is refused by name, nothing sent
    changed = json.loads(REQUEST_B.read_text())
    changed["questions"]["urgent"]["instructions"] = "Is this urgent?"
    path = tmp_path / "ticket_triage_v3.json"
    path.write_text(json.dumps(changed))
    refused = CliRunner().invoke(cli, [*args, "--request-b", str(path)], catch_exceptions=False)
    assert refused.exit_code == 2
    assert f"{path}: --replay {answers}: no recorded answer for the request with state" in refused.output
    assert "questions.urgent.instructions differs from the recorded one" in refused.output


def test_the_probes_on_vllm_report_what_the_same_bodies_posted_by_the_test_answer(served_vllm, tmp_path):
    """The same probes against vLLM's /v1/systemone (a random-weight Qwen3: the numbers are
    arbitrary, the mapping back to the request's keys is what is checked)."""
    body = json.loads(REQUEST.read_text())
    body["state"] = STATE
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps(body))
    env = {"PCDLINT_TEST_VLLM_KEY": served_vllm.api_key}
    result = CliRunner(env=env).invoke(
        cli,
        ["verify", "--backend", "systemone", "--base-url", served_vllm.url, "--api-key-env", "PCDLINT_TEST_VLLM_KEY",
         "--model", "pcdlint-qwen3-random", str(path), "--probe", "scope", "--probe", "names", "-f", "json", "-q"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    (entry,) = json.loads(result.stdout)["decisions"]
    by = {(r["probe"], r["question"]): r for r in entry["probes"]}

    def ask(sent: dict) -> dict:
        request = urllib.request.Request(
            served_vllm.url + "/v1/systemone",
            json.dumps({**sent, "model": "pcdlint-qwen3-random"}).encode(),
            {"Content-Type": "application/json", "Authorization": f"Bearer {served_vllm.api_key}"},
        )
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.loads(response.read())["answers"]

    team = body["questions"]["team"]
    keys = list(team["criteria"])
    for variant, state in (("empty state", ""), ("off-topic state", OFF_TOPIC)):
        got = probs(ask({"state": state, "questions": {"team": team}})["team"], keys)
        assert by[("scope", "team")]["measures"][variant]["p"] == pytest.approx(max(got), abs=1e-6)
    original = probs(ask(body)["team"], keys)
    neutral = dict(zip(["opt1", "opt2", "opt3"], team["criteria"].values()))
    renamed = ask({"state": STATE, "questions": {"team": {**team, "criteria": neutral}}})["team"][
        "probabilities"
    ]
    back = [renamed[f"opt{i + 1}"] for i in range(3)]
    assert by[("names", "team")]["measures"]["total_variation"] == pytest.approx(tv(original, back), abs=1e-6)


def test_eval_perturb_runs_verifys_probes_on_every_row(served_llm2jev, tmp_path):
    """`eval --perturb criteria --perturb names --perturb scope` gives, per row, what
    `verify --probe criteria --probe names` gives for that row's request, and scope once."""
    limit = 3
    args = ["eval", str(REQUEST), "--data", str(ROWS), "--backend", "systemone", "--base-url", served_llm2jev,
            "--limit", str(limit), "--cache-dir", str(tmp_path / "cache"), "-f", "json"]  # fmt: skip
    probes = ["--perturb", "criteria", "--perturb", "names", "--perturb", "scope"]
    result = CliRunner().invoke(cli, [*args, *probes], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (
        "probes: criteria 3 (descriptions swapped or removed), names 3 (option names replaced by"
        in result.stderr
    )
    report = json.loads(result.stdout)
    team, urgent = report["questions"]
    # the original, criteria and names variants per row, and the scope probe's 2 requests once
    assert report["server"]["requests"] == limit * 3 + 2
    assert team["perturbation"]["scope"]["requests"] == 2
    assert set(team["perturbation"]) == {"criteria", "names", "scope"} and set(urgent["perturbation"]) == {
        "criteria"
    }

    paths = row_requests(REQUEST, ROWS, limit, tmp_path)
    verified = CliRunner().invoke(
        cli,
        ["verify", "--backend", "systemone", "--base-url", served_llm2jev, *paths,
         "--probe", "criteria", "--probe", "names", "--probe", "scope", "-f", "json", "-q"],
        catch_exceptions=False,
    )  # fmt: skip
    assert verified.exit_code in (0, 1), verified.output
    for entry, path in zip(json.loads(verified.stdout)["decisions"], paths, strict=True):
        row = {"id": Path(path).stem}  # row_requests names each request after its row
        by = {(r["probe"], r["question"]): r for r in entry["probes"]}
        for probe in ("criteria", "names"):
            (mine,) = [r for r in team["perturbation"][probe]["by_row"] if r["id"] == row["id"]]
            live = by[(probe, "team")]
            assert mine["total_variation"] == pytest.approx(live["measures"]["total_variation"], abs=1e-6)
            assert mine["changed_answer"] == live["variants"][1]["answer"]
        (mine,) = [r for r in urgent["perturbation"]["criteria"]["by_row"] if r["id"] == row["id"]]
        assert mine["p_true_changed"] == pytest.approx(
            by[("criteria", "urgent")]["measures"]["p_true_swapped"], abs=1e-6
        )
        assert team["perturbation"]["scope"]["measures"] == by[("scope", "team")]["measures"]
