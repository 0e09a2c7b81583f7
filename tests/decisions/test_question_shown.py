"""What each engine shows its model of a question's text (`question_shown`), from the family
module that renders its prompt: the same helper builds the question line of the prompt and the
answer here, so the two cannot differ. Questions are read from real request documents, so a
null text is told from a missing one."""

from __future__ import annotations

import json

import pytest

from auditor.pcd.engines.table import ENGINE_ROWS, decision_engines
from auditor.pcd.readouts import QuestionShown, question_shown, render_prompt, site_question
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from auditor.tokenizers.templates import ChatTemplate, shipped_chat_template
from support import get_tokenizer

ROWS = ENGINE_ROWS


def _questions(tmp_path, body: dict) -> dict:
    """name → DecisionQuestion of every question of a request document."""
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    model = analyse(load_document(path, path.name))
    return {site.question_name: site_question(model.document.data, site) for site in model.sites}


SYSTEMONE = {
    "state": "My card was charged twice.",
    "questions": {
        "team": {
            "type": "choice",
            "instructions": "Which team?",
            "criteria": {"billing": None, "sales": None},
        },
        "missing": {"type": "choice", "criteria": {"billing": None, "sales": None}},
        "null": {"type": "choice", "instructions": None, "criteria": {"billing": None, "sales": None}},
        "empty": {"type": "choice", "instructions": "", "criteria": {"billing": None, "sales": None}},
        "bare_noul": {"type": "noul"},
    },
}
SGLANG = {
    "input": "My card was charged twice.",
    "questions": [
        {
            "id": "team",
            "type": "choice",
            "question": "Which team?",
            "options": [{"name": "a"}, {"name": "b"}],
        },
        {"id": "blank", "type": "choice", "question": " ", "options": [{"name": "a"}, {"name": "b"}]},
    ],
}


@pytest.fixture
def systemone(tmp_path):
    return _questions(tmp_path, SYSTEMONE)


def test_every_decision_engine_answers(systemone):
    for row in decision_engines():
        for question in systemone.values():
            shown = question_shown(row, question)
            assert isinstance(shown, QuestionShown) and row.name in shown.sentence, (row.name, shown)


def test_sglang_leaves_the_question_line_out_when_blank(systemone, tmp_path):
    row = ROWS["sglang-systemone"]
    team = question_shown(row, systemone["team"])
    assert team == QuestionShown(
        "Which team?", "sglang-systemone shows the question as `Question: Which team?`", True
    )
    for name in ("missing", "null", "empty"):
        shown = question_shown(row, systemone[name])
        assert (
            shown.text is None and not shown.refused and "leaves the `Question:` line out" in shown.sentence
        )
    # the prompt agrees: no Question line at all
    tokenizer = get_tokenizer("qwen2.5")
    prompt = render_prompt(row, systemone["missing"], tokenizer, shipped_chat_template(tokenizer)).text
    assert prompt is not None and "Question:" not in prompt and "A: billing" in prompt
    noul = question_shown(row, systemone["bare_noul"])  # no instructions, no criteria: refused
    assert noul.refused and noul.sentence.startswith("sglang-systemone refuses the request (422)")
    sglang = _questions(tmp_path, SGLANG)
    blank = question_shown(ROWS["sglang-decisions"], sglang["blank"])
    assert blank.refused and blank.text is None
    assert blank.sentence == "sglang-decisions refuses the request (400): the question text is blank"
    assert question_shown(ROWS["sglang-decisions"], systemone["missing"]).sentence.endswith("is missing")


def test_llm2jev_default_question_and_empty_line(systemone):
    pytest.importorskip("llm2jev.prompt")
    from llm2jev.prompt import DEFAULT_QUESTION

    row = ROWS["llm2jev"]
    for name in ("missing", "null"):
        shown = question_shown(row, systemone[name])
        assert shown.text == DEFAULT_QUESTION and f"`{DEFAULT_QUESTION}`" in shown.sentence
    empty = question_shown(row, systemone["empty"])
    assert empty.text == "" and "empty `Question: ` line" in empty.sentence
    tokenizer = get_tokenizer("smollm2")
    template = shipped_chat_template(tokenizer)
    assert "\nQuestion: \nOptions:\n" in (
        render_prompt(row, systemone["empty"], tokenizer, template).text or ""
    )
    assert f"\nQuestion: {DEFAULT_QUESTION}\n" in (
        render_prompt(row, systemone["null"], tokenizer, template).text or ""
    )


def test_llamacpp_refuses_without_instructions_and_asks_its_template(systemone):
    row = ROWS["llamacpp-lev"]
    assert question_shown(row, systemone["missing"]).refused
    assert "refuses the request (400)" in question_shown(row, systemone["null"]).sentence
    unrendered = question_shown(row, systemone["team"])
    assert (unrendered.text, unrendered.rendered) == ("Which team?", False)
    shows = ChatTemplate("", "decision.gguf (GGUF)", systemone="{{ state }}|{{ instructions }}|")
    hides = ChatTemplate(
        "", "decision.gguf (GGUF)", systemone="{{ state }}|{% for o in options %}{{ o.key }};{% endfor %}"
    )
    assert question_shown(row, systemone["team"], shows).text == "Which team?"
    hidden = question_shown(row, systemone["team"], hides)
    assert hidden.text is None and hidden.rendered and "does not show the instructions" in hidden.sentence


def test_intern_decision_shows_the_id_and_none_for_null(systemone):
    row = ROWS["sglang-intern-decision"]
    assert question_shown(row, systemone["team"]).text == "team: Which team?"
    missing, null = question_shown(row, systemone["missing"]), question_shown(row, systemone["null"])
    assert (missing.text, null.text) == ("missing: ", "null: None")
    assert not missing.rendered and "no question text" in missing.sentence and "`None`" in null.sentence


@pytest.mark.parametrize("engine", ["systemone", "jev", "openai-decisions", "fireworks", "perplexity"])
def test_closed_engines_send_instructions_never_the_id(systemone, engine):
    row = ROWS[engine]
    team, missing = question_shown(row, systemone["team"]), question_shown(row, systemone["missing"])
    assert team.text == "Which team?" and not team.rendered
    assert missing.text is None and "its id is never sent" in missing.sentence
    assert "the model sees no question text" in missing.sentence
