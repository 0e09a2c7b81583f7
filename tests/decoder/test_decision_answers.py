"""The checks of a decision server's answer and of the request sent, as pure logic (no server).

The served tests (tests/served/test_served_hardening.py) run the same faults through a proxy in
front of the real llm2jev server; these pin each rule's boundary: the sum tolerance, the level
range, noul answers in either documented shape, and the masking of a key in every output.
"""

from __future__ import annotations

import copy
import json
import math

import pytest

from auditor import redaction
from auditor.decoder.answers import AnswerError
from auditor.decoder.decision_answers import SUM_TOLERANCE, read_checked, shown
from auditor.decoder.decision_request import check_route, check_written, sendable
from auditor.errors import UsageError

BODY = {
    "state": "x",
    "questions": {
        "c": {"type": "choice", "criteria": {"a": None, "b": None, "c": None}},
        "s": {"type": "score", "criteria": ["low", "mid", "high"]},
        "n": {"type": "noul"},
    },
}
GOOD = {
    "answers": {
        "c": {"choice": "b", "probabilities": {"a": 0.2, "b": 0.5, "c": 0.3}},
        "s": {"score": 1.1, "probabilities": {"0": 0.2, "1": 0.5, "2": 0.3}},
        "n": {"noul": 0.25},
    }
}


def _answer(change) -> dict:
    answer = copy.deepcopy(GOOD)
    change(answer["answers"])
    return answer


def test_a_documented_answer_is_read():
    c, s, n = read_checked(BODY, GOOD)
    assert (c.answer, c.probabilities) == ("b", [0.2, 0.5, 0.3])
    assert (s.answer, s.score) == ("1", 1.1)
    assert (n.answer, n.noul, n.probabilities) == ("false", 0.25, [0.25, 0.75])


@pytest.mark.parametrize("drift", [SUM_TOLERANCE * 0.9, -SUM_TOLERANCE * 0.9])
def test_the_sum_tolerance_is_the_stated_one(drift):
    inside = _answer(lambda a: a["c"]["probabilities"].update(a=0.2 + drift))
    assert read_checked(BODY, inside)[0].probabilities[0] == pytest.approx(0.2 + drift)
    outside = _answer(lambda a: a["c"]["probabilities"].update(a=0.2 + drift * 3))
    with pytest.raises(AnswerError, match=r"answers\.c\.probabilities sum to"):
        read_checked(BODY, outside)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda a: a["s"].update(score=2.001),
            r"answers\.s\.score is 2\.001; expected a score from 0 to 2",
        ),
        (lambda a: a["s"].update(score=-1e-3), r"answers\.s\.score is -0\.001"),
        (lambda a: a["s"].update(score=math.nan), r"answers\.s\.score is nan"),
        (lambda a: a["s"].update(probabilities={"0": 0.5, "1": 0.5}), r"has no probability for '2'"),
        (lambda a: a["c"].update(choice=None, probabilities={"a": 1, "b": 0, "c": 0, "d": 0}), "1 key"),
        (lambda a: a["c"].update(choice=["b"]), r"answers\.c\.choice is a list of 1"),
        (lambda a: a["n"].update(noul=-0.1), r"answers\.n\.noul is -0\.1"),
        (lambda a: a["n"].update(noul=0.3, probabilities={"true": 0.7, "false": 0.3}), "they must agree"),
        (lambda a: a["n"].update(noul=None, probabilities={"yes": 0.7, "no": 0.7}), "sum to 1.4"),
        (lambda a: a.pop("n"), r"answers\.n is null"),
        (lambda a: a.update({"bad name\x1b": {}}), r"answers\['bad name\\x1b'\] answers a question"),
    ],
)
def test_each_rule(change, message):
    with pytest.raises(AnswerError, match=message):
        read_checked(BODY, _answer(change))


def test_a_noul_may_come_as_yes_no_probabilities():
    (_c, _s, n) = read_checked(
        BODY, _answer(lambda a: a["n"].update(noul=None, probabilities={"yes": 0.9, "no": 0.1}))
    )
    assert (n.noul, n.answer) == (0.9, "true")


def test_a_choice_without_choice_takes_the_highest():
    (c, _s, _n) = read_checked(BODY, _answer(lambda a: a["c"].pop("choice")))
    assert c.answer == "b"


def test_shown_values_are_short_escaped_and_masked():
    redaction.clear()
    key = "sk-test-0123456789abcdef"
    redaction.register(key)
    try:
        text = shown("\x1b[31m" + "y" * 30 + key + "z" * 10_000)
        assert "\x1b" not in text and len(text) <= 40 and "sk-test" not in text
        assert shown("a" * 35 + key) == repr("a" * 35 + "***")  # masked whole, then 40 characters
        assert shown("\udc80") == "'\\udc80'"
    finally:
        redaction.clear()


def test_the_request_sent_keeps_every_typed_option():
    check_written("f", ["q"], {"q": [True, "True", None, 1.5, "1.50", 2]})
    with pytest.raises(UsageError, match=r"options True \(bool\), 'true' \(str\) are one key 'true'"):
        check_written("f", ["q"], {"q": [True, "true"]})
    with pytest.raises(UsageError, match=r"question name\(s\) 'q' asked more than once"):
        check_written("f", ["q", "r", "q"], {})
    body = {
        "state": "x",
        "questions": {1: {"type": "choice", "criteria": {True: None, None: "n", "x": None}}},
    }
    assert sendable("f", body)["questions"] == {
        "1": {"type": "choice", "criteria": {"true": None, "null": "n", "x": None}}
    }


@pytest.mark.parametrize(
    "route", ["/v1" * 400, "/v1/x?y=1", "/a b", "//evil.example/x", "http://x/y", "/\x00", "/é"]
)
def test_odd_routes_are_one_line(route):
    with pytest.raises(UsageError) as caught:
        check_route(route)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


def test_plain_routes_pass():
    assert check_route("v1/systemone") == "/v1/systemone"
    assert check_route("/api/alpha/decisions") == "/api/alpha/decisions"
    assert check_route("/inference/v1/%7Euser:x@y") == "/inference/v1/%7Euser:x@y"


def test_a_key_is_masked_in_every_sink(tmp_path, capsys):
    """stdout, stderr and a JSON report: masked, and the report still valid JSON."""
    from auditor.reporting.outputs import write_error, write_report, write_stdout

    key = 'sk-"quoted"-<html>&-0123456789'
    redaction.clear()
    redaction.register(key)
    try:
        document = {"options": [key, f"before {key} after"], key: 1, "text": "plain"}
        target = tmp_path / "report.json"
        write_report(json.dumps(document, indent=2).encode(), str(target), "--output", [], kind="json")
        written = target.read_text()
        assert key not in written and json.dumps(key)[1:-1] not in written
        assert json.loads(written) == {"options": ["***", "before *** after"], "***": 1, "text": "plain"}
        write_stdout(f"a line with {key} and <{key}>\n", "text")
        write_error(f"an error quoting {key}")
        from html import escape

        write_report(f"<td>{escape(key)}</td>\n", str(tmp_path / "r.html"), "--output-html", [], kind="text")
        assert escape(key) not in (tmp_path / "r.html").read_text()
        out, err = capsys.readouterr()
        assert key not in out and key not in err and out.count("***") == 2 and "***" in err
    finally:
        redaction.clear()


def test_a_key_is_masked_in_a_streamed_report(tmp_path, capsys):
    """A decision eval's JSON whose rows stream from disk (Chunks): masked piece by piece, in the
    head and in a spilled row, and still valid JSON."""
    from auditor.eval.spill import Spill
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.outputs import Chunks, write_report, write_stdout

    key = 'sk-"quoted"-<html>&-0123456789'
    redaction.clear()
    redaction.register(key)
    try:
        spill = Spill()
        spill.append({"id": "r1", "error": f"the server said {key}"})
        spill.append({"id": "r2", "error": "plain"})
        report = {"version": 1, "notes": [f"note {key}"], "failed": spill, "tail": key}
        target = tmp_path / "report.json"
        write_report(Chunks(report_chunks(report)), str(target), "--output", [], kind="json")
        written = target.read_text()
        assert key not in written and json.dumps(key)[1:-1] not in written
        back = json.loads(written)
        assert back["notes"] == ["note ***"] and back["tail"] == "***"
        assert [row["error"] for row in back["failed"]] == ["the server said ***", "plain"]
        write_stdout(Chunks(report_chunks(report)), "json")
        out = capsys.readouterr().out
        assert json.loads(out) == back
    finally:
        redaction.clear()
