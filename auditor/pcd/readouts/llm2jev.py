"""llm2jev (PyPI, read at 0.6.1: `llm2jev/prompt.py`, `engine.py`): every question in one chat,
all its options labelled, an `Answer:` prefill, labels found once at start-up.

- The chat is the state (a list of `{role, content}` messages, or `{"messages": [...]}`, stays a
  chat; anything else becomes one user message, objects and arrays flattened to indented
  `key: value` and `- item` lines), then one user turn: llm2jev's instruction paragraph, a
  blank line, `Question: <instructions>` (its default question where they are missing or null;
  an empty `Question: ` line for `""`), `Options:` and one `A. <option>` line per option (a
  choice's `key: description`, a score's `i: level`, a noul's `Yes: …` / `No: …`). The model's
  chat template renders it (generation prompt on, thinking off); a template that refuses two
  user turns in a row gets the question folded into the last one. The assistant turn is
  opened with `Answer:`, after which the label token is read.
- Labels: A–Z then AA, AB, …, a code kept where `context + " " + code` adds one distinct token
  that decodes to the code, after the prompt of a bare noul about the state "x"; the service
  refuses to start with fewer than its option limit (255).

The same functions render for the linter (PCD106, pcdlint's sandboxed Jinja) and for the
decoder's in-process llm2jev (`auditor.decoder.llm2jev`, transformers' `apply_chat_template`), so
the decoder's parity with a live llm2jev server covers both. llm2jev's own prose (the
instruction paragraph, the default question and the prefill) is read from the installed llm2jev
package (`texts()`), not copied into pcdlint; where it is not installed the linter shows
placeholders in their place (the labels it finds are the same: they are read after the prefill,
far from that prose) and says so in the prompt's note.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.distribution import NO_DEPS, package_hint
from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts.base import (
    NO_TEMPLATE,
    PAIRS,
    SHIFTED,
    UPPER,
    DecisionQuestion,
    LabelReport,
    QuestionShown,
    RenderedPrompt,
    RenderError,
    Scheme,
    chat,
    memo,
    quoted,
    report_for,
    scheme_labels,
    skipped,
)
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

PROMPT = "llm2jev"
CHAT_TEMPLATE = True
# a prompt past the window (PCD207): llm2jev 0.6.1 __main__.py answers a backend's 400 with 422
OVER_WINDOW = "its backend (SGLang or vLLM) refuses the prompt with 400, which {engine} answers with 422"
TESTED_VERSION = NO_DEPS["llm2jev"].split("==")[1]  # the pin lives with the install hints
INSTALL = package_hint("llm2jev")
CODES = (*UPPER, *PAIRS)
PREFILL = "Answer:"  # the assistant turn's opening (llm2jev's ANSWER), where the package is absent
# Where the question goes while the chat template renders; split out again afterwards, so the
# text before it is byte-identical for every question of a request (as llm2jev does).
SLOT = "PCDLINT_QUESTION_SLOT_5b7e0c"

Chat = Callable[[list[dict]], str]  # messages → the rendered chat (generation prompt on, thinking off)


@dataclass(frozen=True)
class Texts:
    """llm2jev's own prose, read from the installed package; placeholders where it is absent."""

    instruction: str  # the paragraph the question's user turn opens with
    default_question: str  # the question line of a question without instructions
    prefill: str  # the assistant turn's opening, after which the label is read
    version: str | None  # the installed llm2jev's; None: not installed

    @property
    def installed(self) -> bool:
        return self.version is not None


PLACEHOLDERS = Texts(
    "[llm2jev's instruction paragraph: llm2jev is not installed here]",
    "[llm2jev's default question: llm2jev is not installed here]",
    PREFILL,
    None,
)


def read_texts() -> Texts:
    """The installed llm2jev's texts (`llm2jev.prompt`), or the placeholders."""
    try:
        from llm2jev import prompt
    except Exception:  # not installed, or an install that does not import
        return PLACEHOLDERS
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("llm2jev")
    except PackageNotFoundError:
        installed = "unknown"
    return Texts(
        str(getattr(prompt, "INSTRUCTION", PLACEHOLDERS.instruction)),
        str(getattr(prompt, "DEFAULT_QUESTION", PLACEHOLDERS.default_question)),
        str(getattr(prompt, "ANSWER", PREFILL)),
        installed,
    )


@functools.lru_cache(maxsize=1)
def texts() -> Texts:
    """`read_texts()`, once per process."""
    return read_texts()


def not_installed_note(shown: Texts) -> str:
    if shown.installed:
        return ""
    return (
        "llm2jev is not installed: its instruction paragraph and default question are shown as "
        f"placeholders ({INSTALL})"
    )


# ---------------------------------------------------------------- the text llm2jev writes


def render_value(value: Any, indent: int = 0) -> str:
    """A state or criterion as llm2jev shows it: strings verbatim, objects and arrays as indented lines."""
    pad = "  " * indent
    if isinstance(value, str):
        if not indent:
            return value
        return "\n".join(pad + line for line in (value.splitlines() or [""]))
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            nested = isinstance(item, (dict, list)) or (isinstance(item, str) and "\n" in item)
            lines.append(
                f"{pad}{key}:\n{render_value(item, indent + 1)}" if nested else f"{pad}{key}: {item}"
            )
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for item in value:
            body = render_value(item, indent + 1)
            lines.append(f"{pad}-\n{body}" if "\n" in body else f"{pad}- {body.strip()}")
        return "\n".join(lines)
    return f"{pad}{value}"


def state_text(state: Any) -> str:
    """The state as llm2jev writes it into its prompt (PCD207 counts its tokens)."""
    return render_value(state)


def chat_state(state: Any) -> list | None:
    """The state's own chat messages, where it is one (a list of `{role, …}` objects, bare or
    under `messages`); None where it becomes one user message."""
    messages = state["messages"] if isinstance(state, dict) and set(state) == {"messages"} else state
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
        return messages
    return None


def _part(part: Any) -> dict:
    """A content part as the chat template gets it: text as it is, a media part as a slot."""
    kind = part.get("type") if isinstance(part, dict) else None
    if kind == "text":
        return {"type": "text", "text": part["text"]}
    media = kind.removesuffix("_url") if isinstance(kind, str) else None
    if media in ("image", "video", "audio"):
        return {"type": media}
    raise RenderError(f"unsupported content part type {kind!r}")


def state_messages(state: Any) -> list[dict]:
    """The chat a state becomes: its own messages (content parts as slots), or one user message."""
    messages = chat_state(state)
    if messages is None:
        return [{"role": "user", "content": render_value(state)}]
    out = []
    for message in messages:
        content = message.get("content")
        out.append(
            {**message, "content": [_part(p) for p in content] if isinstance(content, list) else content}
        )
    return out


def option_texts(question: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(answer keys, the option texts shown to the model) of a System One question; counts are
    the caller's to check (the engine table's limits)."""
    kind, criteria = question.get("type"), question.get("criteria")
    if kind == "noul":
        given = criteria or {}
        if not isinstance(given, Mapping):
            raise RenderError("a noul's criteria is an object")
        return ["true", "false"], [f"Yes: {given.get('true', 'yes')}", f"No: {given.get('false', 'no')}"]
    if kind == "choice" and isinstance(criteria, Mapping):
        return list(criteria), [
            key if text is None else f"{key}: {render_value(text)}" for key, text in criteria.items()
        ]
    if kind == "score" and isinstance(criteria, list):
        return [str(i) for i in range(len(criteria))], [
            f"{i}: {render_value(level)}" for i, level in enumerate(criteria)
        ]
    raise RenderError(
        f"unknown question type {kind!r}" if kind not in ("choice", "score") else f"{kind} criteria"
    )


def question_head(question: Mapping[str, Any], shown: Texts) -> str:
    """What follows `Question: `: the instructions flattened, or the default question where
    they are missing or null."""
    instructions = question.get("instructions")
    return render_value(instructions) if instructions is not None else shown.default_question


def chat_halves(render_chat: Chat, state: Any, shown: Texts) -> tuple[str, str]:
    """The rendered chat before and after the question slot."""
    messages = state_messages(state)
    ask = shown.instruction + "\n\n" + SLOT
    try:
        text = render_chat([*messages, {"role": "user", "content": ask}])
    except Exception:
        # templates that demand strict user/assistant turns: the ask joins the last user turn
        if not messages or messages[-1]["role"] != "user":
            raise
        last = messages[-1]["content"]
        folded = (
            [*last, {"type": "text", "text": "\n\n" + ask}] if isinstance(last, list) else f"{last}\n\n{ask}"
        )
        text = render_chat([*messages[:-1], {**messages[-1], "content": folded}])
    if text.count(SLOT) != 1:
        raise RenderError("the chat template dropped or duplicated the question slot")
    before, after = text.split(SLOT)
    return before, after


def render_request(
    render_chat: Chat,
    state: Any,
    questions: Mapping[str, Mapping[str, Any]],
    shown_labels: Sequence[str],
    shown: Texts,
) -> dict[str, tuple[str, list[str]]]:
    """Per question id: (the whole prompt, ending with the prefill; the answer keys)."""
    before, after = chat_halves(render_chat, state, shown)
    prompts = {}
    for qid, question in questions.items():
        keys, options = option_texts(question)
        lines = "".join(f"{shown_labels[i]}. {text}\n" for i, text in enumerate(options)).rstrip()
        head = question_head(question, shown)
        prompts[qid] = (f"{before}Question: {head}\nOptions:\n{lines}{after}{shown.prefill}", keys)
    return prompts


def plain_chat(messages: list[dict]) -> str:
    """The chat without a template (llm2jev needs one): each message's text, a blank line apart."""
    return "\n\n".join(str(m["content"]) for m in messages) + "\n"


def template_chat(template: ChatTemplate | None) -> Chat:
    """The linter's chat renderer: the template in pcdlint's sandbox, else plain text."""
    if template is None:
        return plain_chat
    return functools.partial(chat, template)


def probe(render_chat: Chat, shown: Texts) -> str:
    """The prompt llm2jev finds its labels after at start-up: a bare noul about the state "x"."""
    return render_request(render_chat, "x", {"q": {"type": "noul"}}, ["A", "B"], shown)["q"][0]


# ---------------------------------------------------------------- labels


def find_labels(tokenizer: LoadedTokenizer, context: str, n: int) -> tuple[list[str], list[int]]:
    """Codes A…Z, AA… that are ONE distinct token when written after `context` with a space
    (at most n), and their ids."""

    def find() -> tuple[list[str], list[int]]:
        base = tokenizer.encode(context)
        codes: list[str] = []
        ids: list[int] = []
        for code in CODES:
            full = tokenizer.encode(context + " " + code)
            if (
                full[: len(base)] == base
                and len(full) == len(base) + 1
                and full[-1] not in ids
                and tokenizer.decode(full[-1:]).strip() == code
            ):
                codes.append(code)
                ids.append(full[-1])
                if len(codes) == n:
                    break
        return codes, ids

    return memo(tokenizer, (PROMPT, context, n), find)


def _spaced(n: int, tokenizer: LoadedTokenizer | None, context: str) -> list[str]:
    if tokenizer is None:
        return [" " + c for c in CODES[:n]]
    return [" " + c for c in find_labels(tokenizer, context, n)[0]]


SCHEMES = {
    s.name: s
    for s in (
        Scheme(
            "space-upper-pairs-kept",
            "' A' … then ' AA' …, a code kept only if context + ' ' + code adds one distinct token that "
            "decodes to the code",
            _spaced,
        ),
        Scheme(
            "llm2jev-yes-no",
            "Yes / No shown under the first two codes of space-upper-pairs-kept",
            lambda _n, tokenizer, context: _spaced(2, tokenizer, context),
        ),
    )
}


def needed(row: EngineRow) -> int:
    """The labels the service needs to start: its option limit (the engine table's)."""
    highs = [
        limit.high for limit in (row.options, row.levels) if limit is not None and limit.high is not None
    ]
    return max(highs) if highs else len(CODES)


def labels(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> list[str]:
    context = probe(template_chat(chat_template), texts())
    return scheme_labels(SCHEMES, row.labels_for(question.kind), question.count, tokenizer, context)


def render(
    row: EngineRow,
    question: DecisionQuestion,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None,
) -> RenderedPrompt:
    shown = texts()
    scored = labels(row, question, tokenizer, chat_template)
    codes = [label.strip() for label in scored]
    body = question.systemone()
    keys, _ = option_texts(body)
    if len(codes) < len(keys):  # (the tokenizer gives too few codes: PCD106 says so)
        codes += [c for c in CODES if c not in set(codes)][: len(keys) - len(codes)]
    text, _ = render_request(template_chat(chat_template), question.state, {"q": body}, codes, shown)["q"]
    note = "; ".join(n for n in ("" if chat_template else NO_TEMPLATE, not_installed_note(shown)) if n)
    origin = chat_template.origin if chat_template is not None else None
    return RenderedPrompt(text, tuple(scored), tuple(codes[: len(scored)]), origin, note)


def check(
    row: EngineRow, question: DecisionQuestion, tokenizer: LoadedTokenizer, chat_template: ChatTemplate | None
) -> LabelReport:
    rendered = render(row, question, tokenizer, chat_template)
    context = probe(template_chat(chat_template), texts())
    need = needed(row)
    kept = [" " + c for c in find_labels(tokenizer, context, need)[0]]
    context_ids = tokenizer.encode(context)

    def ids_of(code: str) -> tuple[int, ...]:
        full = tokenizer.encode(context + code)
        same = full[: len(context_ids)] == context_ids
        return tuple(full[len(context_ids) :] if same else full)

    checks = skipped(tokenizer, [" " + c for c in CODES], kept, question.count, ids_of, SHIFTED)
    return report_for(row, rendered, checks=tuple(checks), usable=len(kept), needed=need)


def question_shown(
    row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
) -> QuestionShown:
    shown = texts()
    head = question_head(question.systemone(), shown)
    if question.text is None:
        which = quoted(head) if shown.installed else "(llm2jev is not installed here to quote it)"
        return QuestionShown(
            head, f"{row.name} shows its default question {which} in place of the missing instructions", True
        )
    if not head.strip():
        return QuestionShown(
            head, f"{row.name} shows an empty `Question: ` line: the instructions are blank", True
        )
    return QuestionShown(head, f"{row.name} shows the question as {quoted('Question: ' + head)}", True)
