"""Issue 29's engine-limit bullets, through `auditor.lint(request_dict, engine=...)`: each
request is a body in the shape its engine's route takes."""

from __future__ import annotations

import json

import pytest

import auditor
from support import FIXTURES

NAME_RULES = {
    "PCD001",
    "PCD002",
    "PCD003",
    "PCD004",
    "PCD005",
    "PCD007",
    "PCD008",
    "PCD009",
    "PCD010",
    "PCD013",
}


def sglang(options: list, **question) -> dict:
    return {
        "input": "I've been charged twice this month.",
        "questions": [
            {
                "id": "team",
                "type": "choice",
                "question": "Which team should handle this?",
                "options": options,
                **question,
            }
        ],
    }


def systemone(criteria, kind: str = "choice", **body) -> dict:
    return {
        "state": "I've been charged twice this month.",
        **body,
        "questions": {
            "q": {"type": kind, "instructions": "Which category fits this ticket?", "criteria": criteria}
        },
    }


def openai(values: list) -> dict:
    return {
        "model": "accounts/acme/models/decider",
        "input": "Charged twice.",
        "questions": [
            {
                "type": "choice",
                "name": "team",
                "instructions": "Which team should handle this?",
                "choices": [{"value": v} for v in values],
            }
        ],
    }


def findings(body, engine=None, code=None):
    found = auditor.lint(body, engine=engine).findings
    return [f for f in found if code is None or f.code == code]


def test_27_option_choice_under_sglang_decisions_names_the_limit():
    (limit,) = findings(sglang([{"name": f"team {i}"} for i in range(27)]), "sglang-decisions", "PCD100")
    assert limit.severity == "error" and limit.engine == "sglang-decisions"
    assert "27 options" in limit.message and "2 to 26" in limit.message and "(400)" in limit.message
    assert findings(sglang([{"name": f"team {i}"} for i in range(26)]), "sglang-decisions", "PCD100") == []


def test_billing_and_billing_space_are_an_error_under_sglang():
    (found,) = findings(
        sglang([{"name": "Billing"}, {"name": "billing "}, {"name": "sales"}]), "sglang-decisions", "PCD101"
    )
    assert found.severity == "error" and found.pointer == "/questions/0/options/1/name"


def test_a_name_with_a_newline_is_an_error_under_sglang():
    (found,) = findings(
        sglang([{"name": "billing\nrefunds"}, {"name": "sales"}]), "sglang-decisions", "PCD102"
    )
    assert found.severity == "error" and "U+000A" in found.message


def test_an_unknown_field_is_an_error_under_sglang():
    (found,) = findings(
        sglang([{"name": "billing"}, {"name": "sales"}], weight=3), "sglang-decisions", "PCD103"
    )
    assert found.severity == "error" and found.pointer == "/questions/0/weight"


def test_209_options_are_an_error_under_fireworks():
    (found,) = findings(openai([f"code-{i}" for i in range(209)]), "fireworks", "PCD100")
    assert "209 options" in found.message and "208" in found.message
    assert findings(openai([f"code-{i}" for i in range(208)]), "fireworks", "PCD100") == []


def test_11_level_score_is_an_error_under_jev_not_under_llm2jev():
    body = systemone([f"level {i}" for i in range(11)], kind="score")
    (found,) = findings(body, "jev", "PCD100")
    assert found.severity == "error" and "11 levels" in found.message
    assert findings(body, "llm2jev", "PCD100") == []


def test_40_option_choice_gets_the_two_letter_warning_under_sglang_systemone():
    (found,) = findings(systemone({f"c{i:02d}": None for i in range(40)}), "sglang-systemone", "PCD104")
    assert found.severity == "warning" and "every option gets two-letter labels" in found.message


def test_a_request_passing_every_rule_under_sglang_decisions_gets_no_option_name_finding():
    # options whose names collide on their first token under gather: no option-name rule may fire
    body = json.loads((FIXTURES / "decisions" / "sglang_decisions.json").read_text())
    names = ("CAT_000_Live", "CAT_001_Meat", "CAT_002_Fish", "CAT_003_Other")  # (a way out: PCD201)
    body["questions"][0]["options"] = [{"name": n} for n in names]
    assert findings(body, "sglang-decisions") == []
    # under gather, which scores option names, the same question's names collide
    assert {f.code for f in findings(body, "gather")} & NAME_RULES


def test_default_decision_profile_checks_system_one_limits_without_option_name_rules():
    body = systemone({f"CAT_{i:03d}_x": None for i in range(256)})
    codes = [f.code for f in findings(body)]
    assert codes == ["PCD100"]
    result = auditor.lint(body)
    assert any("--engine" in note for note in result.run.notes)


@pytest.mark.parametrize("engine", ["sglang-decisions", "sglang-systemone", "openai-decisions", "llm2jev"])
def test_unknown_engine_is_a_usage_error(engine):
    from auditor.errors import UsageError

    with pytest.raises(UsageError, match="unknown engine"):
        auditor.lint(sglang([{"name": "a"}, {"name": "b"}]), engine=engine + "x")


MALFORMED = [
    {"state": "s", "questions": {"q": {"type": "choice", "criteria": ["a", "b"]}}},
    {"state": "s", "questions": {"q": {"type": "choice", "criteria": None}}},
    {"state": "s", "questions": {"q": {"type": "score", "criteria": {"a": 1}}}},
    {"state": "s", "questions": {"q": {"type": "score", "criteria": [{"x": 1}, None, 3, True]}}},
    {"state": "s", "questions": {"q": {"type": "noul", "criteria": "yes"}}},
    {"state": "s", "questions": {"q": {"type": "noul", "criteria": {"true": 1, "maybe": 2}}}},
    {"input": "x", "questions": [{"type": "choice", "choices": "abc"}]},
    {"input": "x", "questions": [{"type": "choice", "choices": [1, "a", None, {"value": {"a": 1}}]}]},
    {"input": "x", "questions": [{"type": "score", "levels": [{"label": None}, "x"]}]},
    {"input": "x", "questions": [{"id": 5, "type": "yes_no", "question": {"a": [1]}}]},
    {
        "input": "x",
        "questions": [
            {
                "id": "a",
                "type": "choice",
                "question": "q",
                "options": [{"name": 3}, {"name": None}, "bare", {"description": "d"}],
            }
        ],
    },
    {"state": "s", "questions": {"": {"type": "choice", "criteria": {"": 1, " ": 2}}}},
]


@pytest.mark.parametrize(
    "engine", [None, "sglang-decisions", "sglang-systemone", "llamacpp-openjev", "gather"]
)
def test_malformed_requests_are_linted_without_internal_errors(engine):
    for body in MALFORMED:
        result = auditor.lint(body, engine=engine)
        assert not result.errors
        assert [f.message for f in result.findings if f.code == "PCD999"] == [], body


def test_a_choice_without_criteria_is_a_limit_finding():
    (found,) = findings(MALFORMED[1], "sglang-systemone", "PCD100")
    assert "0 options" in found.message
