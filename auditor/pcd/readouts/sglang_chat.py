"""SGLang's decision routes (`/v1/decisions`, `/v1/systemone`): prompt format 1 in the chat
template, labels checked per request.

Read from sgl-project/sglang `serving_decisions.py` (`render_question`, `_encode_labels`,
`default_labels`) and `systemone/serving.py` (`_pair_labels`): the question is one user message
in the model's chat template with thinking off: the input, a blank line, a `Question:` line
(left out when the question text is blank), one `label: name - description` line per option
(a score's `label: level`; a two-outcome question's `Is the following true?` line and its
described answers) and a closing instruction. Per request, `encode(text + label)` must be
`encode(text)` plus one id, distinct from the other labels', where `text` is the prompt after its
last added token when that part encodes the same on its own (else the whole prompt); a failure
refuses the request (400). Above 26 options `/v1/systemone` labels every option with a
two-letter code, keeping only the codes that pass that test after the template's generation
prompt (so option 1 need not get `AA`).
"""

from __future__ import annotations

from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts.base import (
    LETTERS,
    PAIRS,
    SHIFTED,
    UPPER,
    DecisionQuestion,
    LabelReport,
    QuestionShown,
    RenderedPrompt,
    Scheme,
    added_after,
    chat,
    label_context,
    memo,
    quoted,
    report_for,
    request_checks,
    scheme_labels,
    skipped,
    text_of,
    user_turn,
)
from auditor.pcd.requests import blank, refusal
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

PROMPT = "sglang-chat"
CHAT_TEMPLATE = True
# what the engine does with a prompt past the model's window (PCD207; decision_models.mdx, Errors)
OVER_WINDOW = "{engine} refuses the request (400: 'a prompt that does not fit the model's context length')"
CLOSING = {
    "choice": "Answer with the letter of one option only.",
    "score": "Answer with the number of one level only.",
    "binary": "Answer with yes or no only.",
}
ASK_BINARY = "Is the following true?"


def _pairs(n: int, tokenizer: LoadedTokenizer | None, context: str) -> list[str]:
    """A–Z up to 26 options; above, the two-letter codes that are one distinct token after
    `context` (the template's answer position), in order."""
    if n <= LETTERS:
        return list(UPPER[:n])
    if tokenizer is None:
        return list(PAIRS[:n])
    return _kept_pairs(tokenizer, context)[:n]


def _kept_pairs(tokenizer: LoadedTokenizer, context: str) -> list[str]:
    def keep() -> list[str]:
        text, text_ids, _ = label_context(tokenizer, context) if context else ("", (), False)
        out, seen = [], set()
        for code in PAIRS:
            ids, ok = added_after(tokenizer, text, text_ids, code)
            if ok and ids[0] not in seen:
                out.append(code)
                seen.add(ids[0])
        return out

    return memo(tokenizer, ("upper-pairs-all", context), keep)


SCHEMES = {
    "upper-pairs-all": Scheme(
        "upper-pairs-all",
        "A–Z up to 26 options; above 26 every option gets a two-letter code, "
        "AA, AB, … keeping only those that are one distinct token after the prompt",
        _pairs,
    )
}


def _answer_prompt(template: ChatTemplate | None) -> str:
    """A prompt whose generation prompt SGLang reads two-letter codes after (a bare message)."""
    return chat(template, [{"role": "user", "content": "x"}]) if template is not None else "\n"


def _pairs_needed(row: EngineRow, question: DecisionQuestion) -> bool:
    return row.labels_for(question.kind) == "upper-pairs-all" and question.count > LETTERS


def labels(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> list[str]:
    context = ""
    if _pairs_needed(row, question):
        context = _answer_prompt(chat_template)
        if tokenizer is not None and not label_context(tokenizer, context)[2]:
            return []  # (no added token before the answer: SGLang refuses more than 26 options)
    return scheme_labels(SCHEMES, row.labels_for(question.kind), question.count, tokenizer, context)


def question_line(question: DecisionQuestion) -> str | None:
    """The line format 1 shows the question on; None where it leaves it out (a blank question
    text of a choice or a score)."""
    head = "" if blank(question.text) else text_of(question.text)
    if question.kind == "binary":
        return f"{ASK_BINARY} {head}" if head else ASK_BINARY
    return f"Question: {head}" if head else None


def content(question: DecisionQuestion, shown: list[str] | tuple[str, ...]) -> str:
    """The user message of prompt format 1."""
    line = question_line(question)
    lines = [line] if line is not None else []
    if question.kind == "choice":
        for i, (label, name) in enumerate(zip(shown, question.options)):
            detail = text_of(question.description(i))
            lines.append(f"{label}: {name} - {detail}" if detail else f"{label}: {name}")
    elif question.kind == "score":
        lines += [f"{label}: {text_of(level)}" for label, level in zip(shown, question.options)]
    else:
        for i, label in enumerate(shown):
            detail = text_of(question.description(i))
            if detail:
                lines.append(f"{label}: {detail}")
    lines.append(CLOSING[question.kind])
    return "\n".join([text_of(question.state), "", *lines])


def render(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> RenderedPrompt:
    shown = labels(row, question, tokenizer, chat_template)
    return user_turn(content(question, shown), shown, chat_template)


def check(
    row: EngineRow, question: DecisionQuestion, tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None
) -> LabelReport:
    rendered = render(row, question, tokenizer, chat_template)
    checks = request_checks(tokenizer, rendered.text or "", rendered.labels)
    if not _pairs_needed(row, question):
        return report_for(row, rendered, checks=tuple(checks))
    n = question.count
    answer = _answer_prompt(chat_template)
    text, text_ids, short_form = label_context(tokenizer, answer)
    if not short_form:
        note = (
            "above 26 options SGLang needs an added token between the message and the answer "
            "(the chat template and tokenizer give none): at most 26 options"
        )
        return report_for(row, rendered, checks=tuple(checks), note=note, usable=LETTERS, needed=n)
    pairs = _kept_pairs(tokenizer, answer)
    # the two-letter codes SGLang passed over shift every later label
    checks += skipped(
        tokenizer, PAIRS, pairs, n, lambda c: added_after(tokenizer, text, text_ids, c)[0], SHIFTED
    )
    return report_for(row, rendered, checks=tuple(checks), usable=len(pairs), needed=n)


def question_shown(
    row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
) -> QuestionShown:
    line = question_line(question)
    has_text = not blank(question.text)
    if not has_text and "nonblank" in row.required:
        what = "missing" if question.text is None else "blank"
        return QuestionShown(None, f"{refusal(row)}: the question text is {what}", True, refused=True)
    if (
        question.kind == "binary"
        and question.text is None
        and "noul-text" in row.required
        and not any(d is not None for d in question.descriptions)
    ):
        return QuestionShown(
            None, f"{refusal(row)}: a noul needs instructions or criteria", True, refused=True
        )
    if has_text:
        return QuestionShown(
            text_of(question.text), f"{row.name} shows the question as {quoted(line or '')}", True
        )
    if question.kind == "binary":
        return QuestionShown(
            None,
            f"{row.name} shows only {quoted(ASK_BINARY)}, with no statement after it: the text is blank",
            True,
        )
    return QuestionShown(
        None,
        f"{row.name} leaves the `Question:` line out when the text is blank: the model sees the "
        "input and the options only",
        True,
    )
