"""What a served decision model answers, and what verify/eval send, against the real llm2jev server.

A proxy (tests/faultproxy.py) sits in front of the real server and rewrites one field of its real
answer at a time: probabilities that do not sum to 1, are all zero, null, a list, missing an
option or 5,000,000 long, a choice that is no option (a 4 MB one with ANSI escapes, one that
echoes the API key, a lone surrogate), NaN / infinite / string / huge / negative scores, a noul
out of range, a repeated key. Each must stop the run with exit 2 and one stderr line naming the
request, the question and the field, before any verdict; no traceback, no escape sequence and
no key in any output. The proxy also records what was sent: typed options arrive as JSON values,
nothing is dropped, and what cannot be sent as read is refused before any request.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import FIXTURES

pytestmark = [pytest.mark.model, pytest.mark.slow]

INVOICE = str(
    FIXTURES / "served" / "invoice.json"
)  # category (choice, 4), urgent (noul), priority (score, 3)
TRIAGE = str(FIXTURES / "served" / "ticket_triage.json")
ROWS = str(FIXTURES / "served" / "ticket_triage.jsonl")
KEY = "sk-pcdlint-i49-3b8e71d0c2f64a19"  # made up: it must appear in no output or file
ENV = {"PCDLINT_I49_KEY": KEY}


def _run(*args: str):
    return CliRunner(env=ENV).invoke(cli, [*args, "--api-key-env", "PCDLINT_I49_KEY"], catch_exceptions=False)


def _one_error_line(result) -> str:
    """Exit 2: nothing on stdout, one line on stderr, no traceback, no key, no escape."""
    assert result.exit_code == 2, (result.exit_code, result.output[-2000:])
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    line = lines[0]
    assert line.startswith("pcdlint: error: ")
    assert "Traceback" not in result.stderr and KEY not in result.stderr and KEY[:12] not in result.stderr
    assert "\x1b" not in line and len(line) < 800
    return line


def _set(question: str, field: str, value):
    def rewrite(request: dict, answer: dict) -> bytes:
        if value is _DROP:
            answer["answers"][question].pop(field, None)
        else:
            answer["answers"][question][field] = value
        return json.dumps(answer).encode()

    return rewrite


_DROP = object()


def _probabilities(change):
    def rewrite(request: dict, answer: dict) -> bytes:
        table = answer["answers"]["category"]["probabilities"]
        answer["answers"]["category"]["probabilities"] = change(table)
        return json.dumps(answer).encode()

    return rewrite


def _raw(change):
    return lambda request, answer: change(json.dumps(answer)).encode()


# (name, rewrite of the real answer, what the error line must name)
FAULTS = [
    (
        "sum-half",
        _probabilities(lambda t: {k: v / 2 for k, v in t.items()}),
        "answers.category.probabilities sum to 0.5",
    ),
    ("all-zero", _probabilities(lambda t: dict.fromkeys(t, 0.0)), "answers.category.probabilities sum to 0"),
    ("null", _probabilities(lambda t: None), "answers.category.probabilities is null"),
    ("list", _probabilities(lambda t: list(t.values())), "answers.category.probabilities is a list"),
    ("5M-entries", _probabilities(lambda t: [0.25] * 5_000_000), "answers.category.probabilities is a list"),
    (
        "option-missing",
        _probabilities(lambda t: {k: v for k, v in t.items() if k != "steel"}),
        "answers.category.probabilities has no probability for 'steel'",
    ),
    (
        "option-extra",
        _probabilities(lambda t: {**t, "\x1b[31mzz": 0.0}),
        "answers.category.probabilities has 1 key(s) that are no option",
    ),
    (
        "probability-string",
        _probabilities(lambda t: {k: str(v) for k, v in t.items()}),
        "answers.category.probabilities.tea is a string",
    ),
    (
        "probability-negative",
        _probabilities(lambda t: {**t, "tea": -0.5, "coffee": t["coffee"] + t["tea"] + 0.5}),
        "answers.category.probabilities.tea is -0.5",
    ),
    ("choice-other", _set("category", "choice", "wine"), "answers.category.choice is 'wine'"),
    ("choice-number", _set("category", "choice", 3), "answers.category.choice is 3"),
    (
        "choice-4MB-ansi",
        _set("category", "choice", "\x1b[31m" + "x" * 4_000_000),
        "answers.category.choice is",
    ),
    ("choice-surrogate", _set("category", "choice", "\udc80tea"), "answers.category.choice is"),
    ("choice-echoes-key", _set("category", "choice", f"{KEY}"), "answers.category.choice is '***'"),
    ("score-nan", _set("priority", "score", math.nan), "answers.priority.score is nan"),
    ("score-inf", _set("priority", "score", math.inf), "answers.priority.score is inf"),
    ("score-string", _set("priority", "score", "1"), "answers.priority.score is a string"),
    ("score-huge", _set("priority", "score", 1e308), "answers.priority.score is 1e+308"),
    ("score-negative", _set("priority", "score", -1), "answers.priority.score is -1"),
    ("noul-above-1", _set("urgent", "noul", 1.5), "answers.urgent.noul is 1.5"),
    ("noul-missing", _set("urgent", "noul", _DROP), "answers.urgent.noul is missing"),
    ("noul-boolean", _set("urgent", "noul", True), "answers.urgent.noul is a boolean"),
    ("label-mass-2", _set("category", "x_label_mass", 2.0), "answers.category.x_label_mass is 2"),
    (
        "repeated-key",
        _raw(lambda text: text.replace('"answers": {', '"answers": {"category": {}, ', 1)),
        "repeats the key 'category'",
    ),
    (
        "unasked-question",
        _raw(lambda text: text.replace('"answers": {', '"answers": {"weather": {"noul": 0.5}, ', 1)),
        "answers.weather answers a question the request did not ask",
    ),
    ("answers-missing", _raw(lambda text: json.dumps({"id": "x"})), "answers is null"),
]


@pytest.mark.parametrize(("name", "rewrite", "expected"), FAULTS, ids=[f[0] for f in FAULTS])
def test_verify_refuses_an_answer_in_another_shape(fault_proxy, name, rewrite, expected):
    proxy = fault_proxy(rewrite=rewrite)
    result = _run(
        "verify", "--backend", "systemone", "--base-url", proxy.url, INVOICE, "--probe", "off", "-q"
    )
    line = _one_error_line(result)
    assert expected in line, line
    assert INVOICE in line  # the request it answered
    assert proxy.count == 1  # the real server answered; its answer was refused, not retried


def test_the_real_answer_passes_unchanged(fault_proxy):
    """The control: the same proxy passing the real answer through gives answers, exit 0/1."""
    proxy = fault_proxy(rewrite=lambda request, answer: json.dumps(answer).encode())
    result = _run(
        "verify", "--backend", "systemone", "--base-url", proxy.url, INVOICE, "--probe", "off", "-q"
    )
    assert result.exit_code in (0, 1), result.output
    assert "question category (choice, 4 options): " in result.stdout


def test_eval_refuses_a_bad_answer_naming_the_row(fault_proxy, tmp_path):
    def rewrite(request: dict, answer: dict) -> bytes:
        if "invoices for my accountant" in str(request["state"]):  # row t03 only
            table = answer["answers"]["team"]["probabilities"]
            answer["answers"]["team"]["probabilities"] = {k: v / 2 for k, v in table.items()}
        return json.dumps(answer).encode()

    proxy = fault_proxy(rewrite=rewrite)
    report = tmp_path / "report.json"
    result = _run(
        "eval", TRIAGE, "--data", ROWS, "--backend", "systemone", "--base-url", proxy.url,
        "--limit", "4", "--concurrency", "1", "--no-cache", "-f", "json", "-o", str(report), "-q",
    )  # fmt: skip
    line = _one_error_line(result)
    assert "row 't03' (line 3, original)" in line and "answers.team.probabilities sum to 0.5" in line, line
    assert not report.exists()  # no report from a run that read a wrong answer


HOSTILE = {
    "\x1b[2Jclear": "an ANSI escape",
    "right\u202eleft": "a bidi override",
    'quote"back\\slash': "JSON escapes",
    "line\u2028sep": "a line separator",
    KEY: "the API key as an option name",
    "plain": None,
}


def _hostile_request(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.json"
    body = {
        "state": "Ticket: please refund the duplicate charge.",
        "questions": {"pick": {"type": "choice", "instructions": "Which?", "criteria": HOSTILE}},
    }
    path.write_text(json.dumps(body))
    return path


def test_hostile_names_reach_no_terminal_and_the_key_no_output(fault_proxy, tmp_path):
    proxy = fault_proxy()
    request = _hostile_request(tmp_path)
    report = tmp_path / "report.json"
    args = ["verify", "--backend", "systemone", "--base-url", proxy.url, str(request), "--probe", "off", "-q"]
    as_json = _run(*args, "-f", "json", "-o", str(report))
    assert as_json.exit_code in (0, 1), as_json.output
    text = report.read_text(encoding="utf-8")
    parsed = json.loads(text)  # valid JSON whatever the names hold
    assert KEY not in text and KEY not in as_json.output
    (answer,) = parsed["decisions"][0]["answers"]
    expected = [("***" if name == KEY else name) for name in HOSTILE]
    assert list(answer["probabilities"]) == expected  # every other name exactly as the request has it
    assert sum(answer["probabilities"].values()) == pytest.approx(1.0, abs=1e-6)
    # what the server was sent: every name, the key included (the server is the key's origin)
    assert list(proxy.bodies[0]["questions"]["pick"]["criteria"]) == list(HOSTILE)
    as_text = _run(*args)
    assert as_text.exit_code == as_json.exit_code
    for raw in ("\x1b", "\u202e", "\u2028", KEY):
        assert raw not in as_text.stdout and raw not in as_text.stderr
    assert "\\x1b[2Jclear" in as_text.stdout


def test_eval_report_json_is_valid_with_hostile_names(fault_proxy, tmp_path):
    proxy = fault_proxy()
    request = _hostile_request(tmp_path)
    rows = tmp_path / "rows.jsonl"
    names = list(HOSTILE)
    rows.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "state": f"ticket {i}", "labels": {"pick": names[i % len(names)]}})
            + "\n"
            for i in range(4)
        )
    )
    out, extra = tmp_path / "eval.json", tmp_path / "eval-also.json"
    base = ["eval", str(request), "--data", str(rows), "--backend", "systemone", "--base-url", proxy.url]
    result = _run(*base, "--no-cache", "-f", "json", "-o", str(out), "--output-json", str(extra), "-q")
    assert result.exit_code == 0, result.output
    for path in (out, extra):
        text = path.read_text(encoding="utf-8")
        report = json.loads(text)
        assert KEY not in text
        (question,) = report["questions"]
        assert question["options"] == [("***" if n == KEY else n) for n in names]
    as_text = _run(*base, "--no-cache", "-q")
    assert as_text.exit_code == 0 and "\x1b" not in as_text.stdout and KEY not in as_text.stdout


# ------------------------------------------------------------------ the request sent is the request read


def _openai_request(tmp_path: Path, questions: list[dict]) -> Path:
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps({"model": "m", "input": "The parcel never arrived.", "questions": questions}))
    return path


def test_typed_options_are_sent_as_json_values_none_dropped(fault_proxy, tmp_path):
    choices = [{"value": v} for v in (True, "True", None, 1.5, "1.50", 2)]
    request = _openai_request(tmp_path, [{"type": "choice", "name": "pick", "choices": choices}])
    proxy = fault_proxy()
    result = _run(
        "verify",
        "--backend",
        "systemone",
        "--base-url",
        proxy.url,
        str(request),
        "--probe",
        "off",
        "-f",
        "json",
        "-q",
    )
    assert result.exit_code in (0, 1), result.output
    sent = proxy.bodies[0]["questions"]["pick"]["criteria"]
    assert list(sent) == ["true", "True", "null", "1.5", "1.50", "2"]  # 6 of 6, JSON text, no repr
    (answer,) = json.loads(result.stdout)["decisions"][0]["answers"]
    assert list(answer["probabilities"]) == list(sent)


@pytest.mark.parametrize(
    ("name", "questions", "expected"),
    [
        (
            "options-collapse",
            [{"type": "choice", "name": "pick", "choices": [{"value": True}, {"value": "true"}]}],
            "options True (bool), 'true' (str) are one key 'true' once sent",
        ),
        (
            "question-names-repeat",
            [{"type": "predicate", "name": "q", "instructions": f"Question {i}?"} for i in range(5)],
            "question name(s) 'q' asked more than once",
        ),
    ],
)
def test_what_cannot_be_sent_as_read_is_refused_before_sending(
    fault_proxy, tmp_path, name, questions, expected
):
    request = _openai_request(tmp_path, questions)
    proxy = fault_proxy()
    result = _run("verify", "--backend", "systemone", "--base-url", proxy.url, str(request), "-q")
    assert expected in _one_error_line(result)
    assert proxy.count == 0


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "repeated-json-key",
            '{"state": "x", "questions": {"a": {"type": "noul"}, "a": {"type": "noul", "instructions": "?"}}}',
            "key 'a' is written 2 times at '/questions/a'",
        ),
        (
            "empty-choice",
            '{"state": "x", "questions": {"a": {"type": "choice", "criteria": {}}}}',
            "question 'a': a choice's criteria are a non-empty object",
        ),
        (
            "score-dict-criteria",
            '{"state": "x", "questions": {"a": {"type": "score", "criteria": {"low": 0, "high": 1}}}}',
            "question 'a': a score's criteria are a non-empty list of levels; got an object",
        ),
        (
            "lone-surrogate",
            '{"state": "x", "questions": {"a": {"type": "choice", "criteria": {"\\ud800": null, "b": null}}}}',
            "lone surrogate U+D800",  # (the document reader refuses it first)
        ),
    ],
)
def test_systemone_request_refused_before_sending(fault_proxy, tmp_path, name, text, expected):
    request = tmp_path / f"{name}.json"
    request.write_text(text)
    proxy = fault_proxy()
    result = _run("verify", "--backend", "systemone", "--base-url", proxy.url, str(request), "-q")
    assert expected in _one_error_line(result)
    assert proxy.count == 0


def test_a_10kb_route_is_one_line(fault_proxy):
    proxy = fault_proxy()
    result = _run(
        "verify", "--backend", "systemone", "--base-url", proxy.url, "--route", "/v1" * 3400, INVOICE, "-q"
    )
    assert "--route: 10200 characters" in _one_error_line(result)
    assert proxy.count == 0


def test_max_response_bytes_is_honoured(fault_proxy):
    def pad(request: dict, answer: dict) -> bytes:
        answer["usage"] = {"padding": "x" * 4000}
        return json.dumps(answer).encode()

    proxy = fault_proxy(rewrite=pad)
    args = ["verify", "--backend", "systemone", "--base-url", proxy.url, INVOICE, "--probe", "off", "-q"]
    line = _one_error_line(_run(*args, "--max-response-bytes", "2048"))
    assert "--max-response-bytes" in line
    assert _run(*args, "--max-response-bytes", "65536").exit_code in (
        0,
        1,
    )  # the same answer under a larger cap


def test_run_timeout_is_honoured(fault_proxy):
    proxy = fault_proxy(delay=2.5)
    result = _run(
        "verify",
        "--backend",
        "systemone",
        "--base-url",
        proxy.url,
        INVOICE,
        "--run-timeout",
        "1",
        "--retries",
        "0",
        "-q",
    )
    line = _one_error_line(result)
    assert "1 s" in line and ("--run-timeout" in line or "--timeout" in line), line


# ------------------------------------------------------------------ decision eval: outputs first


def test_eval_outputs_are_checked_before_any_request(fault_proxy, tmp_path):
    proxy = fault_proxy()
    data = tmp_path / "rows.jsonl"
    data.write_bytes(Path(ROWS).read_bytes())
    before = data.read_bytes()
    base = ["eval", TRIAGE, "--data", str(data), "--backend", "systemone", "--base-url", proxy.url, "-q"]
    same = str(tmp_path / "same.json")
    cases = [
        (["-o", same, "--output-json", same], "same file as --output"),
        (["-o", str(data)], "refusing to overwrite an input file"),
        (["--output-json", TRIAGE], "refusing to overwrite an input file"),
        (["--write-calibration", str(data)], "refusing to overwrite an input file"),
        (["--output-html", str(tmp_path / "r.html")], "--output-html is for schema evals"),
    ]
    for extra, expected in cases:
        assert expected in _one_error_line(_run(*base, *extra)), extra
    assert proxy.count == 0 and data.read_bytes() == before


def test_eval_write_calibration_is_honoured(fault_proxy, tmp_path):
    proxy = fault_proxy()
    calibration = tmp_path / "calibration.json"
    result = _run(
        "eval", TRIAGE, "--data", ROWS, "--backend", "systemone", "--base-url", proxy.url, "--limit", "6",
        "--no-cache", "--write-calibration", str(calibration), "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = json.loads(calibration.read_text())
    assert written["kind"] == "pcdlint-temperature-calibration" and written["request"] == TRIAGE
    assert set(written["questions"]) == {"team", "urgent"}
    for question in written["questions"].values():
        assert question["served"]["temperature"] > 0


def test_eval_honours_max_response_bytes_and_run_timeout(fault_proxy, tmp_path):
    """A row whose answer passes the cap, or that comes after the run's deadline, is a failed
    row (listed with its error, exit 1), never read past the cap or waited on."""

    def pad(request: dict, answer: dict) -> bytes:
        answer["usage"] = {"padding": "x" * 4000}
        return json.dumps(answer).encode()

    base = ["eval", TRIAGE, "--data", ROWS, "--backend", "systemone", "--limit", "2", "--concurrency", "1"]
    base += ["--no-cache", "--retries", "0", "-f", "json", "-q"]
    capped = _run(*base, "--base-url", fault_proxy(rewrite=pad).url, "--max-response-bytes", "2048")
    assert capped.exit_code == 1, capped.output
    failed = json.loads(capped.stdout)["failed"]
    assert [f["id"] for f in failed] == ["t01", "t02"]
    assert all("--max-response-bytes" in f["error"] for f in failed)
    late = _run(*base, "--base-url", fault_proxy(delay=1.5).url, "--run-timeout", "1")
    assert late.exit_code == 1, late.output
    errors = [f["error"] for f in json.loads(late.stdout)["failed"]]
    assert errors and all("--run-timeout" in e or "--timeout" in e for e in errors), errors


def test_a_refusal_message_is_shortened_escaped_and_masked(fault_proxy):
    """A 422 whose message holds raw ANSI escapes, the key and 4 MB: the verdict (refused, exit 1)
    quotes a short, escaped, masked line."""
    hostile = b'{"error": "\x1b[31mno \x1b]0;title\x07' + KEY.encode() + b" " + b"y" * 4_000_000 + b'"}'
    proxy = fault_proxy(faults={1: (422, {}, hostile)})
    result = _run(
        "verify", "--backend", "systemone", "--base-url", proxy.url, INVOICE, "--probe", "off", "-q"
    )
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("refused (422): ")]
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and KEY not in result.stdout
    assert len(line) < 250 and "***" in line
