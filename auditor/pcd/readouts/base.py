"""What every rendering family shares: the question as renderers see it, what a family returns
(a rendered prompt, a label report, the question the model is shown), the fixed alphabets, and
the token tests engines apply to their labels (pure; the tokenizer and chat template come in as
arguments).

A family module (one per engine-table `prompt` value, beside this one) provides what the
`Readout` protocol names; `auditor.pcd.readouts` finds it from the table.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from auditor.pcd.chat import ChatTemplateError, render_chat
from auditor.pcd.engines.table import EngineRow
from auditor.schema.decisions import SHAPES, SYSTEMONE, option_key
from auditor.schema.documents import resolve_pointer
from auditor.shown import shorten
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
LETTERS = len(UPPER)  # single-letter labels before an engine turns to two letters
PAIRS = tuple(a + b for a in UPPER for b in UPPER)


class RenderError(ChatTemplateError):
    """A question a family cannot render as its engine would (the engine refuses it too)."""


# ---------------------------------------------------------------- the question


@dataclass(frozen=True)
class DecisionQuestion:
    """A decision question as the renderers see it. `options`: option names (choice), level
    descriptions (score) or ("true", "false") (binary); `descriptions`: per option, or ().
    `text` is the question's instructions / question text (None: missing or null; `null_text`
    says it was written as null). `body` is the System One question as written, where the
    question is one: a renderer of System One bodies then reads exactly what a server gets."""

    kind: str  # "choice" | "score" | "binary"
    options: tuple[Any, ...]
    descriptions: tuple[Any, ...] = ()
    text: Any = None
    state: Any = None  # the request's state / input
    name: str = "q"
    null_text: bool = False
    body: Mapping[str, Any] | None = field(default=None, compare=False)

    def description(self, index: int) -> Any:
        return self.descriptions[index] if index < len(self.descriptions) else None

    @property
    def count(self) -> int:
        """How many labels the question takes (a binary question two)."""
        return 2 if self.kind == "binary" else len(self.options)

    def systemone(self) -> dict[str, Any]:
        """The question as a System One body holds it: as written where it is one, else
        converted (a noul's criteria hold only the descriptions given)."""
        if self.body is not None:
            return dict(self.body)
        out: dict[str, Any] = {"type": {"choice": "choice", "score": "score", "binary": "noul"}[self.kind]}
        if self.text is not None or self.null_text:
            out["instructions"] = self.text
        if self.kind == "choice":
            out["criteria"] = {str(o): self.description(i) for i, o in enumerate(self.options)}
        elif self.kind == "score":
            out["criteria"] = list(self.options)
        else:
            given = {k: self.description(i) for i, k in enumerate(("true", "false"))}
            if any(v is not None for v in given.values()):
                out["criteria"] = {k: v for k, v in given.items() if v is not None}
        return out


def decision_question(site: Any, state: Any = None, data: Any = None) -> DecisionQuestion:
    """A decision site (auditor.schema.decisions) as the renderers see it: a score's options
    are its level descriptions, a two-outcome question's are true then false. With the
    document's value (`data`), the question's own body is kept (System One) and a text written
    as null told from a missing one."""
    written = _question_body(data, site) if data is not None else None
    body = written if site.request_shape == SYSTEMONE.name and isinstance(written, dict) else None
    text_key = SHAPES[site.request_shape].text_key if site.request_shape in SHAPES else "instructions"
    null_text = isinstance(written, dict) and text_key in written and written[text_key] is None
    if site.question_kind == "score":
        kind, options, descriptions = "score", tuple(site.option_details) or tuple(site.options), ()
    elif site.question_kind == "binary":
        kind, options, descriptions = "binary", ("true", "false"), tuple(site.option_details)
    else:
        # each option as it is sent (a JSON value as its JSON text: `true`, never `True`)
        options = tuple(option_key(o) for o in site.options)
        kind, descriptions = "choice", tuple(site.option_details)
    return DecisionQuestion(
        kind, options, descriptions, site.question_text, state, site.question_name, null_text, body
    )


def _question_body(data: Any, site: Any) -> Any:
    try:
        return resolve_pointer(data, site.pointer)
    except (KeyError, IndexError, ValueError, TypeError):
        return None


def request_state(data: Any, site: Any) -> Any:
    """The state (System One) or input (OpenAI, SGLang) of the request a decision site belongs
    to, read from the document's value: "" where the body has none, None where there is no body."""
    try:
        body = resolve_pointer(data, site.request_pointer)
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    if not isinstance(body, dict):
        return None
    # (a body without one: "", as the servers and system_one_body read it)
    return body.get("state", "") if site.request_shape == SYSTEMONE.name else body.get("input", "")


def site_question(data: Any, site: Any) -> DecisionQuestion:
    """A decision site with its request's state and its own body, read from the document."""
    return decision_question(site, request_state(data, site), data)


# ---------------------------------------------------------------- what a family returns


@dataclass(frozen=True)
class RenderedPrompt:
    """The prompt an engine scores after, and the labels it reads there (in option order).
    `labels` are the scored texts (llm2jev's carry their leading space), `shown` the codes the
    prompt prints. `text` is None where nothing is rendered (a closed readout, a checkpoint's
    trained prompt, or llama.cpp without a `systemone` template)."""

    text: str | None
    labels: tuple[str, ...]
    shown: tuple[str, ...]
    template: str | None  # where the chat template came from; None: none was available
    note: str = ""


@dataclass(frozen=True)
class QuestionShown:
    """What the model is shown of a question's text under one engine. `text`: the question as
    the prompt carries it (None: no question text at all); `sentence`: one sentence saying so,
    naming the engine; `rendered`: True where it comes from pcdlint's rendering of the engine's
    prompt, False where the prompt is not rendered here and the engine's documented behaviour
    is said instead; `refused`: the engine refuses the question as written."""

    text: str | None
    sentence: str
    rendered: bool
    refused: bool = False


@dataclass(frozen=True)
class LabelCheck:
    """One label: the token ids it became where the engine reads it, and whether it is viable."""

    label: str
    option: int | None  # the option it labels (a skipped code: the first option it moved); None: none
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    viable: bool
    why: str = ""
    consequence: str = ""  # where it differs from the report's (a code an engine skips)


CONSEQUENCES = {
    "request": "the engine refuses the request (400)",
    "model-load": "the server will not serve the model as a decision model",
    "skip-codes": "the engine skips the code, so every later label shifts and fewer options fit",
    "startup": "the engine skips the code, and refuses to start with fewer labels than its option limit",
    "route-startup": "the server starts without its decision route: every request to it fails (501)",
}
SHIFTED = CONSEQUENCES["skip-codes"]


@dataclass(frozen=True)
class LabelReport:
    engine: str
    check: str  # the row's label_check
    labels: tuple[str, ...]  # the labels the engine will really use, in option order
    checks: tuple[LabelCheck, ...]
    template: str | None
    note: str = ""
    usable: int | None = None  # codes a skipping engine keeps
    needed: int | None = None  # labels the engine needs (llm2jev: its limit; a question: its options)
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


def report_for(row: EngineRow, rendered: RenderedPrompt, **fields: Any) -> LabelReport:
    """A label report on a rendered prompt (its labels, template and note), with `fields`."""
    known: dict[str, Any] = {
        "labels": rendered.labels,
        "checks": (),
        "template": rendered.template,
        "note": rendered.note,
        "prompt": rendered.text,
    }
    return LabelReport(engine=row.name, check=row.label_check, **{**known, **fields})


@dataclass(frozen=True)
class Scheme:
    """A label scheme (named in the engine table's *_labels columns): what it is, and the labels
    it gives n options, in order, given the tokenizer and the prompt text a family checks codes
    after (fewer than n where it runs out; without a tokenizer every code counts as kept)."""

    name: str
    description: str
    labels: Callable[[int, LoadedTokenizer | None, str], list[str]]


def _fixed(name: str, description: str, alphabet: Sequence[str]) -> Scheme:
    return Scheme(name, description, lambda n, _tokenizer, _context: list(alphabet[:n]))


# the fixed alphabets more than one family uses; a family's own schemes live in its module
SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        _fixed("upper", "A–Z in list order (at most 26)", UPPER),
        _fixed("digits", "0–9 (at most 10)", string.digits),
        _fixed("yes-no", "yes / no", ("yes", "no")),
    )
}


def scheme_labels(
    own: Mapping[str, Scheme], name: str, n: int, tokenizer: LoadedTokenizer | None, context: str = ""
) -> list[str]:
    """The labels scheme `name` (a family's own, or a shared alphabet) gives n options."""
    scheme = own.get(name) or SCHEMES.get(name)
    if scheme is None:
        raise ValueError(f"unknown label scheme {name!r}")
    return scheme.labels(n, tokenizer, context)


def scheme_reader(
    own: Mapping[str, Scheme],
) -> Callable[[EngineRow, DecisionQuestion, LoadedTokenizer | None, ChatTemplate | None], list[str]]:
    """A family's `labels` where the row's scheme alone gives them (no prompt text to read codes after)."""

    def labels(
        row: EngineRow,
        question: DecisionQuestion,
        tokenizer: LoadedTokenizer | None,
        chat_template: ChatTemplate | None,
    ) -> list[str]:
        return scheme_labels(own, row.labels_for(question.kind), question.count, tokenizer)

    return labels


class Readout(Protocol):
    """What a family module provides (module-level names; `auditor.pcd.readouts` reads them).

    PROMPT: the engine table's `prompt` value it renders (its module name, `-` as `_`).
    SCHEMES: the label schemes it introduces (the fixed alphabets above are shared).
    CHAT_TEMPLATE: whether its engine renders the question in the model's chat template.
    """

    PROMPT: str
    SCHEMES: Mapping[str, Scheme]
    CHAT_TEMPLATE: bool

    def labels(
        self,
        row: EngineRow,
        question: DecisionQuestion,
        tokenizer: LoadedTokenizer | None,
        chat_template: ChatTemplate | None,
    ) -> list[str]:
        """The labels the engine reads for the question's options, in order (fewer where it runs out)."""
        ...

    def render(
        self,
        row: EngineRow,
        question: DecisionQuestion,
        tokenizer: LoadedTokenizer | None,
        chat_template: ChatTemplate | None,
    ) -> RenderedPrompt:
        """The prompt the engine scores the question after, and its labels."""
        ...

    def check(
        self,
        row: EngineRow,
        question: DecisionQuestion,
        tokenizer: LoadedTokenizer,
        chat_template: ChatTemplate | None,
    ) -> LabelReport:
        """Whether every label is one distinct token where the engine reads it, as it checks."""
        ...

    def question_shown(
        self, row: EngineRow, question: DecisionQuestion, chat_template: ChatTemplate | None
    ) -> QuestionShown:
        """What the model is shown of the question's text, and one sentence saying so."""
        ...


# ---------------------------------------------------------------- rendering helpers


def text_of(value: Any) -> str:
    """A question or state value as SGLang writes it: strings as they are, others compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def quoted(text: str, width: int = 60) -> str:
    """`text` shortened for a sentence, in backticks."""
    return f"`{shorten(' '.join(text.split()), width)}`"


def chat(template: ChatTemplate, messages: list[dict]) -> str:
    """`messages` in the chat template, generation prompt on, thinking off (as the decision
    servers render them)."""
    return render_chat(
        template.source,
        messages,
        add_generation_prompt=True,
        bos_token=template.bos_token,
        eos_token=template.eos_token,
        enable_thinking=False,
    )


NO_TEMPLATE = (
    "no chat template: the tokenizer ships none and --chat-template was not given; "
    "labels checked alone after a newline"
)


def user_turn(message: str, shown: Sequence[str], chat_template: ChatTemplate | None) -> RenderedPrompt:
    """A question shown as one user message in the chat template (thinking off), its labels
    read after the generation prompt; without a template, the message and a newline."""
    text = chat(chat_template, [{"role": "user", "content": message}]) if chat_template else message + "\n"
    origin = chat_template.origin if chat_template is not None else None
    return RenderedPrompt(text, tuple(shown), tuple(shown), origin, "" if chat_template else NO_TEMPLATE)


# ---------------------------------------------------------------- token tests


def memo(tokenizer: LoadedTokenizer, key: tuple, make: Callable[[], Any]) -> Any:
    """`make()` once per tokenizer and key (kept on the tokenizer's derived data)."""
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


def alone(tokenizer: LoadedTokenizer, code: str) -> tuple[int, ...]:
    return tuple(tokenizer.encode(code))


def pieces(tokenizer: LoadedTokenizer, ids: Sequence[int]) -> tuple[str, ...]:
    return tuple(tokenizer.pieces(ids))


def request_checks(tokenizer: LoadedTokenizer, prompt: str, labels: Sequence[str]) -> list[LabelCheck]:
    """Each label checked after the prompt as SGLang checks it per request: one more token,
    distinct from the other labels'."""
    text, text_ids, _ = label_context(tokenizer, prompt)
    out: list[LabelCheck] = []
    owner: dict[int, str] = {}
    for i, label in enumerate(labels):
        ids, ok = added_after(tokenizer, text, text_ids, label)
        why = ""
        if not ok:
            where = f"after {text[-12:]!r}" if text else "right after an added token"
            why = f"{label!r} {where} becomes {len(ids)} tokens {list(pieces(tokenizer, ids))} (ids {list(ids)})"
        elif ids[0] in owner:
            ok, why = False, f"{label!r} is the same token as {owner[ids[0]]!r}"
        else:
            owner[ids[0]] = label
        out.append(LabelCheck(label, i, ids, pieces(tokenizer, ids), ok, why))
    return out


def alone_checks(tokenizer: LoadedTokenizer, alphabet: Sequence[str], n: int) -> list[LabelCheck]:
    """Every symbol of an alphabet checked alone (as engines that check at model load do); a
    symbol past the question's n options labels no option."""
    out = []
    for index, code in enumerate(alphabet):
        ids = alone(tokenizer, code)
        ok = len(ids) == 1
        why = "" if ok else f"{code!r} alone encodes as {len(ids)} tokens {list(pieces(tokenizer, ids))}"
        out.append(LabelCheck(code, index if index < n else None, ids, pieces(tokenizer, ids), ok, why))
    return out


def skipped(
    tokenizer: LoadedTokenizer,
    codes: Sequence[str],
    kept: Sequence[str],
    n: int,
    ids_of: Callable[[str], tuple[int, ...]],
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
        shown = list(pieces(tokenizer, ids))
        moved = (
            f"option {used + 1} gets {kept[used]!r} instead" if used < min(n, len(kept)) else "no code left"
        )
        out.append(
            LabelCheck(
                code,
                used if used < n else None,
                ids,
                tuple(shown),
                False,
                f"{code!r} becomes {len(ids)} tokens {shown} (ids {list(ids)}): skipped, {moved}",
                consequence,
            )
        )
    return out


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
