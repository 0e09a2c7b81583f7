"""The option-order probe's arithmetic and the System One answer reader (pure logic, no server).

The probe against the real server is in test_verify_systemone.py; here the per-order answers
are given, to pin the flips, the win histogram, the swing and every verdict form.
"""

from __future__ import annotations

import json

import pytest

from auditor.decoder.errors import DecoderError
from auditor.decoder.orderprobe import (
    OrderProbe,
    display_orders,
    probe_request,
    probed_questions,
    reordered_body,
    summarize,
)
from auditor.decoder.systemone import check_body, read_answers

BODY = {
    "state": "s",
    "questions": {
        "pick": {"type": "choice", "criteria": {"a": None, "b": "bee", "c": None}},
        "two": {"type": "choice", "criteria": {"x": None, "y": None}},
        "level": {"type": "score", "criteria": ["low", "high"]},
        "yes": {"type": "noul"},
    },
}


def test_display_orders_are_original_reversed_then_rotations():
    assert display_orders(4, 4) == [[0, 1, 2, 3], [3, 2, 1, 0], [1, 2, 3, 0], [2, 3, 0, 1]]
    assert display_orders(3, 10) == [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1], [0, 2, 1], [1, 0, 2]]
    assert display_orders(2, 4) == [[0, 1], [1, 0]]


def test_probed_questions_by_mode():
    assert probed_questions(BODY, "auto") == ["pick"]
    assert probed_questions(BODY, "order") == ["pick", "two"]
    assert probed_questions(BODY, "off") == []


def test_reordered_body_asks_only_the_probed_questions_in_the_new_order():
    body = reordered_body(BODY, {"pick": [2, 0, 1]})
    assert list(body["questions"]) == ["pick"]
    assert list(body["questions"]["pick"]["criteria"].items()) == [("c", None), ("a", None), ("b", "bee")]
    assert body["state"] == "s" and list(BODY["questions"]["pick"]["criteria"]) == ["a", "b", "c"]


def _probe(answers, orders):
    keys = ["a", "b", "c"]
    shown = [[keys[i] for i in order] for order in orders]
    probs = [[0.8 if k == ans else 0.1 for k in keys] for ans in answers]
    return summarize(OrderProbe("pick", keys, shown, list(answers), probs))


def test_answer_that_follows_the_last_slot():
    orders = display_orders(3, 4)  # abc, cba, bca, cab: the last slot shows c, a, a, b
    probe = _probe(["c", "a", "a", "b"], orders)
    assert probe.flips == 3 and probe.position_wins == [0, 0, 4]
    assert (
        probe.verdict
        == "triage: the answer follows the displayed position (won from the last slot in 4 of 4 orders)"
    )
    assert probe.largest_swing == pytest.approx(0.7)


def test_stable_answer_and_mixed_answers():
    orders = display_orders(3, 4)
    assert _probe(["b", "b", "b", "b"], orders).verdict == "stable: b in all 4 orders"
    leaning = _probe(["a", "c", "b", "a"], orders)  # a first, c first, b first, a second
    assert leaning.position_wins == [3, 1, 0]
    assert leaning.verdict.startswith(
        "triage: the answer leans on the displayed position (won from the first slot in 3"
    )
    mixed = _probe(["a", "b", "b", "c"], orders)  # a first, b second, b first, c first
    assert mixed.flips == 3
    assert mixed.position_wins == [3, 1, 0]
    other = _probe(["a", "a", "c", "a"], orders)  # a first, a last, c second, a second
    assert other.position_wins == [1, 2, 1]
    assert (
        other.verdict
        == "triage: the answer changes with the order (1 of 3 reordered requests) but follows no one position"
    )


class _Fixed:
    """Answers every choice with the option displayed last (the bias the probe is for)."""

    def __init__(self):
        self.bodies = []

    def decide(self, body):
        self.bodies.append(body)
        answers = {}
        for qid, q in body["questions"].items():
            if q["type"] == "noul":
                answers[qid] = {"noul": 0.25}
            elif q["type"] == "score":
                answers[qid] = {"score": 0.5, "probabilities": {"0": 0.5, "1": 0.5}}
            else:
                keys = list(q["criteria"])
                answers[qid] = {
                    "choice": keys[-1],
                    "probabilities": {k: 0.9 if k == keys[-1] else 0.1 / (len(keys) - 1) for k in keys},
                }
        return {"answers": answers}


def test_probe_request_maps_answers_back_and_counts_requests():
    engine = _Fixed()
    decision = probe_request(engine, BODY, mode="order", orders=4)
    assert decision.requests == 4  # "two" has only 2 orders; "pick" has 4
    assert [list(b["questions"]) for b in engine.bodies] == [
        list(BODY["questions"]),
        ["pick", "two"],
        ["pick"],
        ["pick"],
    ]
    pick, two = decision.probes
    assert pick.answers == ["c", "a", "a", "b"] and pick.position_wins == [0, 0, 4]
    assert pick.probabilities[1] == pytest.approx([0.9, 0.05, 0.05])  # realigned to a, b, c
    assert two.answers == ["y", "x"] and two.flips == 1
    assert decision.flipped
    noul = next(a for a in decision.answers if a.name == "yes")
    assert noul.answer == "false" and noul.probabilities == [0.25, 0.75]


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({}, "answers is null; expected an object"),
        ({"answers": {}}, "answers.pick is null; expected the answer to question 'pick'"),
        (
            {"answers": {"pick": {"choice": "a", "probabilities": {"a": float("nan"), "b": 0, "c": 0}}}},
            "answers.pick.probabilities.a is nan; expected a probability",
        ),
        (
            {"answers": {"pick": {"choice": "a", "probabilities": {"a": "0.5", "b": 0, "c": 0}}}},
            "answers.pick.probabilities.a is a string '0.5'; expected a probability",
        ),
    ],
)
def test_read_answers_refuses_a_malformed_response(response, message):
    body = {"questions": {"pick": BODY["questions"]["pick"]}}
    with pytest.raises(DecoderError, match=message.replace("(", r"\(").replace(".", r"\.")):
        read_answers(body, response)


def test_check_body_names_what_is_missing():
    with pytest.raises(DecoderError, match='"questions" object'):
        check_body({"state": "x"})
    with pytest.raises(DecoderError, match="question 'q': type must be one of choice, score, noul"):
        check_body({"questions": {"q": {"type": "binary"}}})


def _finding(code, pointer, status=None, engine="llm2jev"):
    from types import SimpleNamespace

    data = {"status": status} if status is not None else {}
    return SimpleNamespace(
        code=code, message=f"{code} message", engine=engine, data=data, pointer=pointer, site_pointer=pointer
    )


def test_static_verdict_reads_refusal_statuses_within_the_request():
    from auditor.decoder.systemone import DecisionRefused
    from auditor.eval.decision_verify import compare_static_live, static_verdict

    findings = [
        _finding("PCD100", "/0/questions/pick", 422),
        _finding("PCD104", "/0/questions/pick"),
        _finding("PCD100", "/1/questions/pick", 400, engine="sglang-decisions"),
    ]
    first = static_verdict(findings, "llm2jev", "/0")
    assert first["predicted"] == "refuse" and [f["code"] for f in first["findings"]] == ["PCD100"]
    assert static_verdict(findings, "llm2jev", "/1")["predicted"] == "accept"
    assert compare_static_live(first, DecisionRefused(422, "choice needs 2..255 criteria")) == []
    (missed,) = compare_static_live(static_verdict([], "llm2jev", ""), DecisionRefused(422, "bad"))
    assert (
        missed["message"] == "pcdlint called the request valid for llm2jev, the server refused it (422): bad"
    )
    (extra,) = compare_static_live(first, None)
    assert extra["pcdlint"] == "refuse" and extra["server"] == "accept" and "PCD100" in extra["message"]


def test_eval_perturbation_counts_flips_in_the_request_key_order(tmp_path):
    """An engine that always answers the option shown last flips every row in the probe's other
    three orders (reversed, rotated by 1, by 2); each order's answers are realigned with the
    request's keys before comparing."""
    from auditor.eval.decisions import DecisionEvalOptions, DecisionRow, run_decision_eval

    class LastShown(_Fixed):
        def identity(self):
            return {"backend": "fixed"}

    body = {"state": "", "questions": {"pick": BODY["questions"]["pick"], "yes": {"type": "noul"}}}
    rows = [DecisionRow(i, f"r{i}", f"state {i}", {"pick": i % 3, "yes": 0}) for i in range(6)]
    options = DecisionEvalOptions(concurrency=2, perturb=("order",), cache_dir=tmp_path)
    report = run_decision_eval(LastShown(), body, rows, options, request_path="r.json", data_path="d.jsonl")
    pick, yes = report["questions"]
    probe = pick["perturbation"]["order"]
    by_row = probe.pop("by_row")
    assert probe == {
        "rows": 6,
        "orders": 4,
        "flips": {"served": 6},
        "flipped_requests": 18,
        "reordered_requests": 18,
        "position_wins": [0, 0, 24],
        "largest_swing": pytest.approx(0.85),
        "swing_option": "a",
        "swing_row": "r0",
        "verdict": "triage: the answer follows the displayed position (won from the last slot in 24 of 24 orders)",
    }
    # each row as verify's probe gives it: abc, cba, bca, cab show c, a, a, b last
    assert by_row[0] == {
        "id": "r0",
        "line": 0,
        "answers": ["c", "a", "a", "b"],
        "flips": 3,
        "position_wins": [0, 0, 4],
        "largest_swing": pytest.approx(0.85),
        "swing_option": "a",
        "verdict": "triage: the answer follows the displayed position (won from the last slot in 4 of 4 orders)",
    }
    assert yes["perturbation"] == {}
    assert [p["answers"]["pick"] for p in report["predictions"]] == ["c"] * 6
    assert pick["methods"]["served"]["correct"] == 2  # the rows whose gold is c
    assert report["cache"]["scored"] == 6 * 4 and report["failed"] == []
    again = run_decision_eval(LastShown(), body, rows, options, request_path="r.json", data_path="d.jsonl")
    pick["perturbation"]["order"]["by_row"] = by_row
    assert again["cache"]["hits"] == 6 * 4 and again["questions"] == report["questions"]
    two = DecisionEvalOptions(concurrency=1, perturb=("order",), orders=2, cache_dir=tmp_path)
    reversed_only = run_decision_eval(
        LastShown(), body, rows, two, request_path="r.json", data_path="d.jsonl"
    )
    assert reversed_only["questions"][0]["perturbation"]["order"]["orders"] == 2
    assert reversed_only["cache"] == {**reversed_only["cache"], "hits": 12, "scored": 0}


def test_a_server_echoing_the_key_in_a_malformed_answer_is_masked():
    from auditor.decoder.answers import AnswerError
    from auditor.decoder.systemone import SystemOneBackend
    from auditor.eval.cache import ScoreCache
    from auditor.eval.decisions import DecisionEvalOptions, DecisionRow, score_stream

    key = "sk-echoed-0123456789"

    class Echo:
        def post_json(self, path, body):
            return {"answers": {"pick": {"choice": "a", "probabilities": {"a": key, "b": 0, "c": 0}}}}

        def post_content(self, path, content):  # the eval's path: the body encoded once a variant
            return self.post_json(path, json.loads(content))

        def redact(self, text):
            return text.replace(key, "***")

    backend = SystemOneBackend(Echo(), "http://127.0.0.1:9")
    body = {"state": "s", "questions": {"pick": BODY["questions"]["pick"]}}
    # a malformed answer stops the eval (exit 2) instead of becoming a failed row; its line is masked
    rows = [DecisionRow(1, "r1", "s", {})]
    for concurrency in (1, 2):  # answered in this thread, and through the pool
        with pytest.raises(AnswerError) as caught:
            score_stream(
                backend,
                {"original": body},
                iter(rows),
                ScoreCache(None, {}),
                DecisionEvalOptions(concurrency=concurrency),
                lambda row, got: pytest.fail("a malformed answer is never collected"),
            )
        message = str(caught.value)
        assert "row 'r1' (line 1, original)" in message, concurrency
    message = str(caught.value)
    assert "row 'r1' (line 1, original)" in message and "answers.pick.probabilities.a is a string" in message
    assert key[:12] not in message
