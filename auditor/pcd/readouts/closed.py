"""Engines whose prompt is not published: the hosted APIs (TypeSafe Jev, OpenAI, Fireworks,
Perplexity) and the System One specification row that applies when no engine is named.

Nothing is rendered and no label is checked: the engine table's limits and field rules are what
pcdlint knows of them. What is documented is what the request sends: the System One
specification and the hosted APIs send each question's `instructions` with its type and
options; the question's id (its key, or an OpenAI question's `name`) names the answer and is
never sent to the model as text.
"""

from __future__ import annotations

from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts.base import (
    DecisionQuestion,
    LabelReport,
    QuestionShown,
    RenderedPrompt,
    Scheme,
    quoted,
    report_for,
    text_of,
)
from auditor.pcd.requests import blank
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

PROMPT = "closed"
CHAT_TEMPLATE = False
# a hosted engine serves its own model: the window of a model named with -t is not its window
HOSTED = True
SCHEMES = {"closed": Scheme("closed", "a hosted engine's labels: not published", lambda _n, _t, _c: [])}
NOTE = "this engine's readout is closed: limits only"


def labels(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> list[str]:
    return []


def render(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> RenderedPrompt:
    return RenderedPrompt(None, (), (), chat_template.origin if chat_template is not None else None, NOTE)


def check(
    row: EngineRow, question: DecisionQuestion, tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None
) -> LabelReport:
    return report_for(row, render(row, question, tokenizer, chat_template))


def question_shown(
    row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
) -> QuestionShown:
    where = f"{row.name} renders its own prompt (not published) from the question's instructions; its id is never sent"
    if blank(question.text):
        what = "none" if question.text is None else "blank ones"
        return QuestionShown(
            None, f"{where}, and this question has {what}, so the model sees no question text", False
        )
    text = text_of(question.text)
    return QuestionShown(text, f"{where}: the model is sent {quoted(text)}", False)
