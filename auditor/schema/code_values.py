"""The values a code reader makes of a file's literals (auditor.schema.code_requests): scalars,
objects and arrays as written, each with its position, and `Dyn`, a part built at run time; the
calls it met; the SDK constructors it builds question objects for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from auditor.schema.documents import Span

# The SDK constructors: name → the question type they build (their arguments: instructions,
# criteria, positionally or by keyword)
CONSTRUCTORS = {
    "Choice": "choice",
    "Score": "score",
    "Noul": "noul",
    "choice": "choice",
    "score": "score",
    "noul": "noul",
}
NOUL_CRITERIA = "NoulCriteria"  # typesafe-sdk's `NoulCriteria(true=…, false=…)`
MAX_FOLLOW = 6  # names and returns followed from one literal (a cycle stops sooner)


@dataclass(eq=False)
class Lit:
    value: object
    span: Span


@dataclass(eq=False)
class Dyn:
    """A part built at run time: its source text."""

    text: str
    span: Span


@dataclass(eq=False)
class Obj:
    entries: list[tuple[str | Dyn, Span, Value]]  # (key, key span, value); a Dyn key: computed
    span: Span
    rest: list[Dyn] = field(default_factory=list)  # spreads of something unknown
    constructor: str = ""  # the SDK constructor that built it


@dataclass(eq=False)
class Arr:
    items: list[Value]
    span: Span
    rest: list[Dyn] = field(default_factory=list)


Value = Lit | Dyn | Obj | Arr


@dataclass(eq=False)
class Call:
    callee: str  # as written, dotted: "client.decisions.create"
    args: list[Value]
    kwargs: dict[str, Value]
    span: Span


@dataclass
class Reading:
    """What a language reader found: every dict/list literal, every call, and notes."""

    literals: list[Value] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def constructed(kind: str, args: list[Value], kwargs: dict[str, Value], span: Span, name: str) -> Obj:
    """The question object an SDK constructor builds: `{"type", "instructions", "criteria"}`."""
    entries: list[tuple[str | Dyn, Span, Value]] = [("type", span, Lit(kind, span))]
    given = dict(zip(("instructions", "criteria"), args))
    given.update({k: v for k, v in kwargs.items() if k in ("instructions", "criteria")})
    for key in ("instructions", "criteria"):
        argument = given.get(key)
        if argument is None or (key == "criteria" and isinstance(argument, Lit) and argument.value is None):
            continue  # (`criteria=None`: the SDK sends none)
        entries.append((key, argument.span, argument))
    return Obj(entries, span, constructor=name)


def noul_criteria(kwargs: dict[str, Value], span: Span) -> Obj:
    return Obj([(k, v.span, v) for k, v in kwargs.items() if k in ("true", "false")], span)


class Scope:
    """A module's or function's names, as a code reader binds them: a name's one value (a
    syntax node), or None where it is bound more than once, changed in place, a parameter or an
    import; and its functions that return one expression. Looked up from the inside out."""

    def __init__(self, parent: Scope | None):
        self.parent = parent
        self.bindings: dict[str, Any] = {}
        self.functions: dict[str, tuple[Any, Any]] = {}  # name → (definition, returned expression)

    def lookup(self, name: str) -> tuple[str, Any, Scope] | None:
        """("function" | "value", the returned expression or the bound value, the scope)."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.functions:
                return "function", scope.functions[name][1], scope
            if name in scope.bindings:
                return "value", scope.bindings[name], scope
            scope = scope.parent
        return None
