"""llama.cpp's `/v1/systemone` (decision GGUFs): the GGUF's own `systemone` template, labels
checked alone when the model loads.

Read from ggml-org/llama.cpp `tools/server/server-decision.cpp` (`server_decision_context::init`,
`parse_questions`): the question reaches the GGUF's named `systemone` Jinja template as globals
(`id`, `type`, `instructions`, `state`, `options` with each option's `key`, `description` and,
for lev, its `label`); a question without instructions is refused (400). openjev needs every
letter A–Z, a–z to be one token alone, or the model does not load; lev (and nimble,
pplx-decider) keeps the codes A…Z, AA…ZZ that are one token alone, at most 255, so a skipped
code shifts every later label and lowers the option limit; lev reads a noul as nine ratings at
its first nine codes.
"""

from __future__ import annotations

from auditor.pcd.chat import render_template
from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts.base import (
    LOWER,
    PAIRS,
    UPPER,
    DecisionQuestion,
    LabelReport,
    QuestionShown,
    RenderedPrompt,
    Scheme,
    alone,
    alone_checks,
    memo,
    quoted,
    report_for,
    scheme_labels,
    scheme_reader,
    skipped,
    text_of,
)
from auditor.pcd.requests import refusal
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

PROMPT = "llamacpp-systemone"
CHAT_TEMPLATE = False  # the GGUF's `systemone` template, not its chat template
# a prompt past the window (PCD207): the server's context (n_ctx) is at most the model's
OVER_WINDOW = "llama.cpp cannot fit the prompt in its context (n_ctx, at most the model's window)"
LABEL_CAP = 255  # lev keeps at most this many codes
LEV_RATINGS = 9  # lev reads a noul at its first nine codes (0 = certainly no … 8 = certainly yes)
CODES = (*UPPER, *PAIRS)
NO_SYSTEMONE = (
    "no `systemone` template (llama.cpp needs one in the decision model's GGUF); labels checked "
    "alone, as llama.cpp checks them"
)


def _kept(tokenizer: LoadedTokenizer | None) -> list[str]:
    """The codes lev keeps, in order: those one token alone, at most 255 (all without a tokenizer)."""
    if tokenizer is None:
        return list(CODES[:LABEL_CAP])
    return memo(
        tokenizer,
        ("upper-pairs-kept",),
        lambda: [c for c in CODES if len(alone(tokenizer, c)) == 1][:LABEL_CAP],
    )


SCHEMES = {
    s.name: s
    for s in (
        Scheme("upper-lower", "A–Z then a–z (at most 52)", lambda n, _t, _c: list((UPPER + LOWER)[:n])),
        Scheme(
            "upper-pairs-kept",
            "A–Z then AA–ZZ, keeping only the codes that are one token alone (at most 255)",
            lambda n, tokenizer, _c: _kept(tokenizer)[:n],
        ),
        Scheme(
            "lev-ratings",
            "nine ratings read at the first nine codes of upper-pairs-kept",
            lambda _n, tokenizer, _c: _kept(tokenizer)[:LEV_RATINGS],
        ),
        Scheme("letters-true-first", "A (true) / B (false)", lambda n, _t, _c: ["A", "B"][:n]),
    )
}


labels = scheme_reader(SCHEMES)


def _variables(row: EngineRow, question: DecisionQuestion, codes: list[str]) -> dict:
    """The globals llama.cpp gives the `systemone` template for one question."""
    kinds = {"choice": "choice", "score": "score", "binary": "noul"}
    n = question.count
    keys = [str(o) for o in question.options] if question.kind != "score" else [str(i) for i in range(n)]
    own_codes = row.labels_for(question.kind) == "upper-pairs-kept"
    options = [
        {
            "key": key,
            "description": question.description(i) if question.kind != "score" else question.options[i],
            **({"label": codes[i]} if own_codes and i < len(codes) else {}),
        }
        for i, key in enumerate(keys)
    ]
    return {
        "id": question.name,
        "type": kinds[question.kind],
        "instructions": question.text,
        "state": question.state,
        "options": options,
        "images": [],
    }


def render(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> RenderedPrompt:
    codes = labels(row, question, tokenizer, chat_template)
    origin = chat_template.origin if chat_template is not None else None
    systemone = chat_template.systemone if chat_template is not None else None
    if not systemone:
        return RenderedPrompt(None, tuple(codes), tuple(codes), origin, NO_SYSTEMONE)
    text = render_template(systemone, _variables(row, question, codes))
    return RenderedPrompt(text, tuple(codes), tuple(codes), origin)


def check(
    row: EngineRow, question: DecisionQuestion, tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None
) -> LabelReport:
    rendered = render(row, question, tokenizer, chat_template)
    if row.label_check == "skip-codes":
        kept = _kept(tokenizer)
        needed = LEV_RATINGS if row.labels_for(question.kind) == "lev-ratings" else question.count
        checks = skipped(tokenizer, CODES, kept, needed, lambda c: alone(tokenizer, c))
        return report_for(row, rendered, checks=tuple(checks), usable=len(kept), needed=needed)
    # model-load (openjev): every symbol of the choice alphabet, checked alone
    alphabet = scheme_labels(SCHEMES, row.choice_labels, LABEL_CAP, tokenizer)
    return report_for(row, rendered, checks=tuple(alone_checks(tokenizer, alphabet, question.count)))


def question_shown(
    row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
) -> QuestionShown:
    if question.text is None and "instructions" in row.required:
        return QuestionShown(None, f"{refusal(row)}: a question needs instructions", False, refused=True)
    text = text_of(question.text)
    given = f"the instructions {quoted(text)}" if text.strip() else "blank instructions"
    systemone = chat_template.systemone if chat_template is not None else None
    if chat_template is None or not systemone:
        return QuestionShown(
            text,
            f"{row.name} gives {given} to the GGUF's `systemone` template, which "
            "decides how they are shown (no such template here)",
            False,
        )
    prompt = render_template(systemone, _variables(row, question, labels(row, question, None, chat_template)))
    if text.strip() and text in prompt:
        return QuestionShown(
            text, f"{row.name}'s `systemone` template shows the instructions {quoted(text)}", True
        )
    return QuestionShown(
        None,
        f"{row.name}'s `systemone` template ({chat_template.origin}) does not show the instructions",
        True,
    )
