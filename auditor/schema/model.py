"""The data model of a crawled file: its sites (the enum-like decision fields), the problems
and open fields the crawl met, and the suppressions it read. Plain data: the analysis cache
(auditor.schema.cache) writes and reads it, a pool worker pickles it back.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from auditor.errors import InputFileError
from auditor.lazy import Deferred
from auditor.paths import shorten
from auditor.schema.documents import Document, Span, pack_spans, unpack_spans
from auditor.schema.locate import LocatedSchema

SUPPRESS_KEY = "x-pcdlint-ignore"
# The longest option or field name pcdlint tokenizes (docs/security.md): no engine scores a
# label this long, and a text of millions of characters costs the encoders tens of seconds
MAX_TEXT_CHARS = 100_000


@dataclass
class Site(Deferred):
    """One enum-like field: where it is declared and which options it offers."""

    path: str
    pointer: str
    field: str
    name: str
    options: list
    option_pointers: list[str]
    span: Span
    option_spans: list[Span]
    kind: str
    description: str = ""
    suppressed: frozenset[str] = frozenset()
    suppression_pointers: tuple[str, ...] = ()
    # Items of an array are typed after `"<field>": [`: how many brackets open before the value.
    array_depth: int = 0
    # A decision request's question (auditor.schema.decisions); all left at their defaults for
    # a schema's enum-like field. question_kind: "choice" | "score" | "binary"; request_shape:
    # "systemone" | "openai-decisions" | "sglang-decisions"; question_type: the type as written
    # ("noul", "predicate", "yes_no", ...); question_text: its instructions / question (any JSON);
    # option_details: per option its description (criteria value, level text), in order;
    # request_pointer: the body's pointer ("" also for a document that is one body);
    # request_source: "body" | "promptfoo"; question_index / request_questions: its position
    # among, and the number of, the request's questions
    question_kind: str | None = None
    request_shape: str = ""
    question_name: str = ""
    question_type: str = ""
    question_text: Any = None
    option_details: list = dataclasses.field(default_factory=list)
    request_pointer: str = ""
    request_source: str = ""
    question_index: int = 0
    request_questions: int = 0
    # the parts of a question built at run time in the code it was read from ("options",
    # "text", "name"): the rules that need one skip the site (auditor.schema.code_requests)
    runtime: tuple[str, ...] = ()

    @property
    def is_decision(self) -> bool:
        return self.question_kind is not None

    def name_scored(self, names_decisions: bool) -> bool:
        """Whether the option-name rules and the cost model read this site: a schema's field
        always; a decision request's question where an engine named scores option names and it
        has two options or more (a choice whose criteria are no map has none)."""
        if self.runtime:  # (options or names built at run time: none to score)
            return False
        return self.question_kind is None or (names_decisions and len(self.options) >= 2)

    def __getstate__(self) -> dict:
        """What pickling keeps (a pool worker sends sites back): the fields, every deferred one
        made, the option spans packed flat (documents.pack_spans)."""
        self.make_deferred()
        state = {k: v for k, v in self.__dict__.items() if k != "_deferred"}
        state["option_spans"] = pack_spans(self.option_spans)
        return state

    def __setstate__(self, state: dict) -> None:
        (numbers,) = state.pop("option_spans")
        self.__dict__.update(state)
        self.defer("option_spans", partial(unpack_spans, numbers))  # (made where first read)

    def to_dict(self) -> dict:
        out = {
            "pointer": self.pointer,
            "field": self.field,
            "name": self.name,
            "kind": self.kind,
            "options": len(self.options),
            "line": self.span.line,
            "column": self.span.column,
            "array_depth": self.array_depth,
        }
        if self.question_kind is not None:  # (keys only grow: schema sites keep their old ones)
            out.update(
                question_kind=self.question_kind,
                request_shape=self.request_shape,
                question_name=self.question_name,
                question_type=self.question_type,
                request_pointer=self.request_pointer,
            )
        return out

    def decision_state(self) -> dict:
        """The decision fields, for the analysis cache (empty for a schema's field)."""
        if self.question_kind is None:
            return {}
        return {name: getattr(self, name) for name in DECISION_FIELDS}


DECISION_FIELDS = (
    "question_kind",
    "request_shape",
    "question_name",
    "question_type",
    "question_text",
    "option_details",
    "request_pointer",
    "request_source",
    "question_index",
    "request_questions",
    "runtime",
)


@dataclass
class SchemaProblem:
    pointer: str
    message: str


@dataclass
class OpenField:
    """A union that offers listed values and also lets the model write any string (`Literal[...]
    | str`, `anyOf: [{"enum": …}, {"type": "string"}]`): no decision, so no site."""

    pointer: str
    field: str
    options: list  # the listed values, in the union's order
    open_branch: str  # the branch that leaves it open, as written: `{"type": "string"}`


@dataclass
class FileModel:
    """What the crawler learnt about one file."""

    document: Document
    # "json-schema" | "openai-wrapper" | "pcd-preset" | "unknown" | the families of the embedded
    # schemas joined by "+" ("openai", "anthropic", "mcp", "gemini", "openapi-3.1", ...)
    format: str
    sites: list[Site] = field(default_factory=list)
    schema_problems: list[SchemaProblem] = field(default_factory=list)
    remote_refs: list[str] = field(default_factory=list)
    suppressions: dict[str, frozenset[str]] = field(default_factory=dict)
    schemas: list[LocatedSchema] = field(default_factory=list)  # the schemas the locator found
    notes: list[str] = field(default_factory=list)  # said once beside the findings (text output)
    open_fields: list[OpenField] = field(default_factory=list)
    # choice sets read from descriptions (kind "prose", auditor.schema.prose): linted only with
    # the config key `prose-choices` (the engine adds them to `sites` then)
    prose_sites: list[Site] = field(default_factory=list)
    source: str | None = None  # the input as named where it is no path (`pkg.module:Name`)
    # its analysis cache key (bytes, parsing code), where the caches are used: the encoding
    # cache's entries are kept under it too (auditor.tokenizers.encodings)
    content_key: str = ""
    # what its analysis read besides the file: each lm-eval include as the names that reach it
    # and its fingerprint (auditor.schema.includes); the analysis cache checks them on a hit
    include_reads: list = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.document.path

    @property
    def recognized(self) -> bool:
        return self.format != "unknown"

    @property
    def dialect(self) -> str:
        """What the file is written in: its decision requests' shapes and dialects
        (auditor.schema.decisions.SHAPES), or its schemas' dialects ("json-schema",
        "openapi-3.0", ...), joined by "+"; "" for a file with neither."""
        names = [s.request_shape for s in self.sites if s.request_shape] or [s.dialect for s in self.schemas]
        if not names and self.format == "pcd-preset":
            names = ["pcd-preset"]
        return "+".join(dict.fromkeys(names))


def suppressions_of(node: object) -> frozenset[str]:
    """The rule codes a node's SUPPRESS_KEY names (one string or a list), none if it has none."""
    value = node.get(SUPPRESS_KEY) if isinstance(node, dict) else None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    return frozenset()


def refuse_long_texts(model: FileModel) -> None:
    """An InputFileError (the file is not linted, exit 2) where a site's option or name is
    longer than MAX_TEXT_CHARS, naming the first and the limit."""
    for site in [*model.sites, *model.prose_sites]:
        if len(site.name) > MAX_TEXT_CHARS:
            raise InputFileError(model.path, _too_long("the field name", site.pointer, len(site.name)))
        for option, pointer in zip(site.options, site.option_pointers):
            if isinstance(option, str) and len(option) > MAX_TEXT_CHARS:
                raise InputFileError(model.path, _too_long("the option", pointer, len(option)))


def _too_long(what: str, pointer: str, size: int) -> str:
    return (
        f"{what} at {shorten(pointer or '/', 80)} is {size:,} characters, over the limit of "
        f"{MAX_TEXT_CHARS:,} (no engine scores a label this long)"
    )
