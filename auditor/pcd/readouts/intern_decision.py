"""SGLang serving an Intern-Decision checkpoint: the checkpoint's trained prompt, 62 answer
symbols checked alone.

Read from sgl-project/sglang `python/sglang/srt/entrypoints/decision/families/intern.py`
(`ANSWER_SYMBOLS`, `question_options`, `compile_decision`, `_symbol_ids`) and `decision/protocol.py`
(`_Question.instructions`): the symbols are A–Z, a–z, 0–9 (a noul's no before yes), each one token
alone, or the checkpoint is not served as a decision model. The prompt is the checkpoint's own
(not rendered here); in its decision schema each question is one line, its id then its
instructions (`id: instructions`: an empty string where they are missing, `None` where they are
null, other values as Python writes them).
"""

from __future__ import annotations

import string

from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts.base import (
    LOWER,
    UPPER,
    DecisionQuestion,
    LabelReport,
    QuestionShown,
    RenderedPrompt,
    Scheme,
    alone_checks,
    quoted,
    report_for,
    scheme_reader,
)
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

PROMPT = "intern-decision"
CHAT_TEMPLATE = False  # the checkpoint's trained prompt
# a prompt past the window (PCD207): decision_models.mdx, Decision model checkpoints (Limits)
OVER_WINDOW = (
    "{engine} refuses the prompt (SGLang refuses a decision prompt longer than the model's context "
    "or than --chunked-prefill-size)"
)
SYMBOLS = UPPER + LOWER + string.digits

SCHEMES = {
    s.name: s
    for s in (
        Scheme(
            "upper-lower-digits",
            "A–Z, a–z then 0–9 (at most 62: Intern-Decision's answer symbols)",
            lambda n, _t, _c: list(SYMBOLS[:n]),
        ),
        Scheme("letters-false-first", "A (no) / B (yes)", lambda n, _t, _c: ["A", "B"][:n]),
    )
}
NOT_RENDERED = "the checkpoint's trained prompt (not rendered here); symbols checked alone"


labels = scheme_reader(SCHEMES)


def render(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> RenderedPrompt:
    symbols = tuple(labels(row, question, tokenizer, chat_template))
    origin = chat_template.origin if chat_template is not None else None
    return RenderedPrompt(None, symbols, symbols, origin, NOT_RENDERED)


def check(
    row: EngineRow, question: DecisionQuestion, tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None
) -> LabelReport:
    rendered = render(row, question, tokenizer, chat_template)
    return report_for(row, rendered, checks=tuple(alone_checks(tokenizer, SYMBOLS, question.count)))


def schema_line(question: DecisionQuestion) -> str:
    """The question's line in the checkpoint's decision schema: its id, then its instructions."""
    text = question.text
    if text is None:
        shown = "None" if question.null_text else ""
    else:
        shown = str(text)  # (Python's own text of a value: a dict or list is not JSON here)
    return f"{question.name}: {shown}"


def question_shown(
    row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
) -> QuestionShown:
    line = schema_line(question)
    where = f"{row.name}'s trained prompt (not rendered here) shows the question as its schema line {quoted(line)}"
    if question.text is None:
        what = "null instructions read `None`" if question.null_text else "its instructions are missing"
        return QuestionShown(line, f"{where}: the question's id and no question text ({what})", False)
    return QuestionShown(line, where, False)
