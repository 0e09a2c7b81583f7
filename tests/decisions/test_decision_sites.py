"""Decision requests in the three wire shapes, wherever users keep them: every question is a
site at its JSON Pointer and line, with its kind, shape, name and typed options."""

from __future__ import annotations

import pytest

from auditor.schema import cache
from auditor.schema.decisions import locate_requests, request_shape, system_one_body
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from support import FIXTURES

DECISIONS = FIXTURES / "decisions"

# file → [(pointer, line, question kind, shape, name, options)]
EXPECTED = {
    "systemone.json": [
        ("/questions/team", 7, "choice", "systemone", "team", ["billing", "technical", "sales", "other"]),
        (
            "/questions/frustration",
            17,
            "score",
            "systemone",
            "frustration",
            ["Calm", "Frustrated but civil", "Very angry"],
        ),
        ("/questions/urgent", 22, "binary", "systemone", "urgent", ["true", "false"]),
        ("/questions/bare_noul", 27, "binary", "systemone", "bare_noul", ["true", "false"]),
    ],
    "openai_decisions.json": [
        ("/questions/0", 5, "choice", "openai-decisions", "category", ["billing", "technical"]),
        ("/questions/1", 14, "choice", "openai-decisions", "refund_owed", ["true", True, False]),
        ("/questions/2", 24, "score", "openai-decisions", "severity", ["low", "medium", "high"]),
        ("/questions/3", 34, "binary", "openai-decisions", "duplicate_charge", [True, False]),
    ],
    "sglang_decisions.json": [
        ("/questions/0", 4, "choice", "sglang-decisions", "team", ["billing", "technical", "sales"]),
        (
            "/questions/1",
            14,
            "score",
            "sglang-decisions",
            "frustration",
            ["Calm", "Frustrated but civil", "Very angry"],
        ),
        ("/questions/2", 20, "binary", "sglang-decisions", "urgent", ["yes", "no"]),
    ],
    "promptfooconfig.yaml": [
        (
            "/providers/0/config/questions/0",
            8,
            "choice",
            "openai-decisions",
            "category",
            ["billing", "technical"],
        ),
        (
            "/providers/0/config/questions/1",
            15,
            "binary",
            "openai-decisions",
            "duplicate_charge",
            [True, False],
        ),
    ],
    "bodies.json": [
        ("/0/questions/urgent", 5, "binary", "systemone", "urgent", ["true", "false"]),
        ("/0/questions/team", 6, "choice", "systemone", "team", ["billing", "technical"]),
        ("/1/questions/0", 12, "binary", "sglang-decisions", "urgent", ["yes", "no"]),
    ],
}


def model_of(name: str):
    return analyse(load_document(DECISIONS / name))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_question_is_a_site_at_its_pointer_and_line(name):
    model = model_of(name)
    assert model.format == "decision-request"
    found = [
        (s.pointer, s.span.line, s.question_kind, s.request_shape, s.question_name, s.options)
        for s in model.sites
    ]
    assert found == EXPECTED[name]
    for site in model.sites:  # each option's pointer resolves, and its span is on or after the question's
        assert len(site.option_pointers) == len(site.options) == len(site.option_spans)
        assert all(span.line >= site.span.line for span in site.option_spans)


def test_option_spans_are_the_options_own_lines():
    sites = {s.question_name: s for s in model_of("openai_decisions.json").sites}
    assert [span.line for span in sites["refund_owed"].option_spans] == [19, 20, 21]
    sites = {s.question_name: s for s in model_of("systemone.json").sites}
    assert [span.line for span in sites["team"].option_spans] == [11, 12, 13, 14]
    assert [span.line for span in sites["urgent"].option_spans] == [25, 25]


def test_field_paths_name_the_question():
    fields = [s.field for s in model_of("systemone.json").sites]
    assert fields[0] == "question team › choice"
    promptfoo = model_of("promptfooconfig.yaml").sites[0]
    assert promptfoo.field == "provider openai:decisions:gpt-6-luna › question category › choice"
    assert promptfoo.request_source == "promptfoo"


def test_box_question_is_a_note_not_a_site():
    model = model_of("systemone.json")
    assert "affected" not in [s.question_name for s in model.sites]
    assert len(model.notes) == 1 and "'affected'" in model.notes[0] and "box" in model.notes[0]


def test_values_keep_their_type_and_details_their_descriptions():
    site = model_of("openai_decisions.json").sites[1]
    assert site.options == ["true", True, False] and [type(o) for o in site.options] == [str, bool, bool]
    assert site.option_details == ["The text says so", None, None]
    team = model_of("systemone.json").sites[0]
    assert team.option_details[1] == {
        "summary": "Bugs or integration problems",
        "examples": ["API errors", "webhooks"],
    }


def test_shapes_are_told_apart_by_their_own_keys():
    assert request_shape({"state": "s", "questions": {"q": {"type": "noul"}}}) == "systemone"
    # an RLCD preset's questions map beside `text`, or with a type System One does not have, stays a preset
    assert (
        request_shape({"text": "t", "questions": {"q": {"type": "choice", "criteria": {"a": 1, "b": 2}}}})
        is None
    )
    assert request_shape({"state": "s", "questions": {"q": {"type": "independent", "criteria": {}}}}) is None
    assert (
        request_shape(
            {
                "input": "x",
                "questions": [{"id": "q", "type": "choice", "question": "?", "options": [{"name": "a"}]}],
            }
        )
        == "sglang-decisions"
    )
    assert (
        request_shape(
            {
                "input": "x",
                "questions": [
                    {"name": "q", "type": "choice", "instructions": "?", "choices": [{"value": "a"}]}
                ],
            }
        )
        == "openai-decisions"
    )
    assert request_shape({"questions": [{"type": "predicate"}]}) == "openai-decisions"
    assert request_shape({"questions": [{"type": "yes_no"}]}) == "sglang-decisions"
    assert request_shape({"questions": [{"type": "essay"}]}) is None
    assert locate_requests({"name": "pkg", "questions": "none"}) == []


def test_cached_model_keeps_the_decision_fields(tmp_path, monkeypatch):
    model = model_of("openai_decisions.json")
    entry = tmp_path / "entry.json"
    cache.store_entry(entry, "k", model, keep_data=False)
    raw = (DECISIONS / "openai_decisions.json").read_bytes()
    again = cache.load_entry(entry, "k", model.path, raw)
    assert again is not None
    assert [s.decision_state() for s in again.sites] == [s.decision_state() for s in model.sites]
    assert [s.options for s in again.sites] == [s.options for s in model.sites]
    assert again.notes == model.notes


def test_system_one_body_of_each_shape():
    import json

    body = json.loads((DECISIONS / "sglang_decisions.json").read_text())
    converted = system_one_body(body)
    assert converted["state"] == body["input"]
    assert converted["questions"]["team"] == {
        "type": "choice",
        "instructions": "Which team should handle this ticket?",
        "criteria": {
            "billing": "Payment or subscription issues",
            "technical": "Bugs or integration problems",
            "sales": "Pricing or account questions",
        },
    }
    assert converted["questions"]["frustration"]["criteria"] == ["Calm", "Frustrated but civil", "Very angry"]
    assert converted["questions"]["urgent"] == {
        "type": "noul",
        "instructions": "The customer needs an answer today.",
        "criteria": {"true": "A reply is needed within hours"},
    }
    site = model_of("openai_decisions.json").sites[3]
    assert system_one_body(site, state="s") == {
        "state": "s",
        "questions": {
            "duplicate_charge": {
                "type": "noul",
                "instructions": "The customer reports being charged more than once for the same purchase.",
            }
        },
    }
