"""Decision requests read out of Python and JavaScript/TypeScript code, statically: the code is
parsed (Python's `ast`, tree-sitter's grammars), never imported, executed or evaluated.

A language reader (auditor.schema.python_static, auditor.schema.script_static) turns the file's
literals into `Value`s: dicts/objects, lists/arrays and scalars as written, with the line and
column of each; the SDK constructors (typesafe-sdk `Choice(...)`, `Score(...)`, `Noul(...)`,
`NoulCriteria(...)`; the JS SDK's `choice(...)`, `score(...)`, `noul(...)`) as the question
objects they build; names bound once to a literal in the same module (or function) and calls of
a same-module function that returns one literal followed one level; anything else (a variable,
a call, a comprehension, a template literal with substitutions, a spread of something unknown)
a `Dyn`: a part built at run time. This module finds the requests among them:

- a literal with a decision shape (any row of auditor.schema.decisions.SHAPES, dialects too);
- a call's keyword arguments with `questions=` (`client.system_one(state=…, questions=…)`,
  `client.decisions.create(model=…, input=…, questions=[…])`), and the positional form of the
  request calls (`router.predict(state, questions)`);
- a map of typed System One questions, or a list of typed questions, on its own (assigned to a
  name, returned), in a file that names a decision API (`CONTEXT`).

Each request becomes one body of the document's value (a list of bodies), positioned at the
code; a part built at run time holds a placeholder and is listed in `Document.runtime` (the rules
that need it skip the question, with one note: auditor.schema.sites). A literal reached from
several calls is reported once, at the literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from auditor.errors import InputFileError
from auditor.schema.code_values import Arr, Dyn, Lit, Obj, Reading, Value
from auditor.schema.decisions import SHAPES, SYSTEMONE, request_shape
from auditor.schema.documents import Document, Span, escape_token, parse_document

# Calls that take (state, questions) positionally (the Laya router, project wrappers)
POSITIONAL_CALLS = {"predict", "predict_batch", "system_one", "systemOne", "decide", "ask", "ask_jev"}
# A file that names a decision API: where a bare list or map of typed questions is a request
CONTEXT = re.compile(
    rb"system_?one|systemOne|typesafe|/decisions|decisions\.create|\bnoul\b|\bNoul\b|\blaya\b",
    re.IGNORECASE,
)
# The cheap test a walked code file passes before it is parsed at all
PREFILTER = re.compile(rb"questions|system_?one|systemOne|typesafe|decisions", re.IGNORECASE)
RUNTIME_TEXT = 60  # characters of a run-time expression kept in its placeholder


# --------------------------------------------------------------------------- finding requests


class _RunTime:
    """A run-time part in a probe (no dict, list or string: never read as one)."""


_RUNTIME = _RunTime()


def _built_at_run_time(value: Value) -> bool:
    """A question built at run time as a whole: an expression, or an object spread from one with
    no type of its own (`{...question, criteria: …}`)."""
    if isinstance(value, Dyn):
        return True
    return isinstance(value, Obj) and bool(value.rest) and all(key != "type" for key, _, _ in value.entries)


def _probe(value: Value, questions_level: bool = False) -> object:
    """The value as request_shape reads it: run-time parts as a marker, run-time questions left out."""
    if isinstance(value, Lit):
        return value.value
    if isinstance(value, Dyn):
        return _RUNTIME
    if isinstance(value, Arr):
        return [_probe(v) for v in value.items if not (questions_level and _built_at_run_time(v))]
    out = {}
    for key, _, item in value.entries:
        if isinstance(key, Dyn):
            key = f"[{key.text}]"
        if questions_level and _built_at_run_time(item):
            continue
        out[key] = _probe(item, key == "questions")
    return out


def _questions_of(value: Value) -> Value | None:
    if isinstance(value, Obj):
        for key, _, item in value.entries:
            if key == "questions":
                return item
            if key == "question" and isinstance(item, Obj):
                return item
    return None


def _is_question_map(value: Value) -> bool:
    """A map of typed System One questions (each an SDK constructor's or a dict with a System
    One type and its instructions or criteria)."""
    if not isinstance(value, Obj) or not value.entries:
        return False
    found = 0
    for _, _, item in value.entries:
        if _built_at_run_time(item):
            continue
        probe = _probe(item)
        if not (
            isinstance(probe, dict)
            and probe.get("type") in SYSTEMONE.types
            and ({"instructions", "criteria"} & probe.keys() or (isinstance(item, Obj) and item.constructor))
        ):
            return False
        found += 1
    return found > 0


@dataclass
class _Body:
    value: Obj
    questions: Value | None  # (the identity two finds of one request share)


def find_bodies(reading: Reading, context: bool) -> list[_Body]:
    """The requests of a file, each once, in source order."""
    bodies: list[_Body] = []
    seen: set[int] = set()

    def add(body: Obj) -> None:
        questions = _questions_of(body)
        key = id(questions) if questions is not None else id(body)
        if key in seen or id(body) in seen:
            return
        seen.update({key, id(body)})
        bodies.append(_Body(body, questions))

    for call in reading.calls:  # the richest form first: a call's state and model with its questions
        last = call.callee.rsplit(".", 1)[-1]
        if "questions" in call.kwargs:
            fields = {k: v for k, v in call.kwargs.items() if k in _BODY_FIELDS}
            body = Obj([(k, v.span, v) for k, v in fields.items()], call.span)
            if request_shape(_probe(body)) is not None:
                add(body)
        elif last in POSITIONAL_CALLS and len(call.args) >= 2 and _is_question_map(call.args[1]):
            body = Obj(
                [("state", call.args[0].span, call.args[0]), ("questions", call.args[1].span, call.args[1])],
                call.span,
            )
            add(body)
    for literal in reading.literals:
        if isinstance(literal, Obj) and request_shape(_probe(literal)) is not None:
            if not _questions_look_typed(literal):
                continue
            if SHAPES[request_shape(_probe(literal)) or ""].container != "map" and not context:
                continue  # (a list of typed questions is a survey form as often as a request)
            add(literal)
    for literal in reading.literals:
        if context and _is_question_map(literal):
            add(Obj([("questions", literal.span, literal)], literal.span))
        elif context and isinstance(literal, Arr) and literal.items:
            synthetic = Obj([("questions", literal.span, literal)], literal.span)
            shape = request_shape(_probe(synthetic))
            if shape is not None and SHAPES[shape].container == "list":
                add(synthetic)
    return sorted(bodies, key=lambda b: (b.value.span.line, b.value.span.column))


def _questions_look_typed(body: Obj) -> bool:
    """A System One body literal's questions are questions: each has instructions or criteria or
    was built by an SDK constructor (a `{"q": {"type": "choice"}}` config is no request)."""
    questions = _questions_of(body)
    if not isinstance(questions, Obj) or request_shape(_probe(body)) != SYSTEMONE.name:
        return True
    return _is_question_map(questions)


_BODY_FIELDS = frozenset().union(*(s.top_fields for s in SHAPES.values()))


# --------------------------------------------------------------------------- the document


class _Builder:
    def __init__(self) -> None:
        self.values: dict[str, Span] = {}
        self.keys: dict[str, Span] = {}
        self.runtime: dict[str, str] = {}
        self.emitted: set[int] = set()  # questions written already (a literal two requests share)
        # keys one literal writes twice: (pointer of the kept member, key, every key's span)
        self.duplicates: list[tuple[str, str, tuple[Span, ...]]] = []

    def data(self, value: Value, pointer: str, questions_level: bool = False) -> object:
        self.values[pointer] = value.span
        if isinstance(value, Lit):
            return value.value
        if isinstance(value, Dyn):
            self.runtime[pointer] = value.text
            return placeholder(value.text)
        if isinstance(value, Arr):
            items = [v for v in value.items if not (questions_level and _built_at_run_time(v))]
            if questions_level:
                items = [v for v in items if id(v) not in self.emitted]
                self.emitted.update(map(id, items))
            for rest in value.rest:
                self.runtime[f"{pointer}/..." if questions_level else pointer] = rest.text
            if questions_level:
                for v in value.items:
                    if _built_at_run_time(v):
                        self.runtime[f"{pointer}/-"] = _source(v)
            return [self.data(v, f"{pointer}/{i}") for i, v in enumerate(items)]
        out: dict = {}
        written: dict[str, list[Span]] = {}
        for key, key_span, item in value.entries:
            name = f"[{key.text}]" if isinstance(key, Dyn) else key
            at = f"{pointer}/{escape_token(name)}"
            if questions_level and _built_at_run_time(item):
                self.runtime[at] = _source(item)
                continue
            if questions_level:
                if id(item) in self.emitted:
                    continue
                self.emitted.add(id(item))
            if isinstance(key, Dyn):
                self.runtime[f"{at}/#name"] = key.text
            written.setdefault(name, []).append(key_span)
            self.keys[at] = key_span
            out[name] = self.data(item, at, name == "questions")  # (the last one kept, as at run time)
        for rest in value.rest:
            self.runtime[f"{pointer}/..."] = rest.text
        for name, spans in written.items():
            if len(spans) > 1 and not any(isinstance(k, Dyn) for k, _, _ in value.entries if k == name):
                self.duplicates.append((f"{pointer}/{escape_token(name)}", name, tuple(spans)))
        return out


def _source(value: Value) -> str:
    if isinstance(value, Dyn):
        return value.text
    return "{…}" if isinstance(value, Obj) else "[…]"


def placeholder(text: str) -> str:
    """A run-time part's value in the document: what it was written as."""
    short = " ".join(text.split())
    return f"<run time: {short[:RUNTIME_TEXT]}{'…' if len(short) > RUNTIME_TEXT else ''}>"


def build_document(display: str, text: str, reading: Reading, context: bool) -> Document:
    """The document of a code file: its requests, a list of bodies, positioned at the code."""
    builder = _Builder()
    data: list[object] = []
    for body in find_bodies(reading, context):
        part = _Builder()
        part.emitted = builder.emitted
        written = part.data(body.value, f"/{len(data)}")
        held = body.questions
        if isinstance(written, dict) and written.get("questions") in ({}, []):
            if (isinstance(held, Obj) and held.entries) or (isinstance(held, Arr) and held.items):
                continue  # (its every question was another request's: reported there)
        builder.values.update(part.values)
        builder.keys.update(part.keys)
        builder.runtime.update(part.runtime)
        builder.duplicates.extend(part.duplicates)
        data.append(written)
    lines = text.count("\n") + 1
    builder.values[""] = Span(1, 1, lines + 1, 1)
    document = Document(display, data, text, builder.values, builder.keys)
    document.runtime = builder.runtime
    document.notes = list(reading.notes)
    _record_duplicates(document, builder.duplicates)
    return document


def _record_duplicates(document: Document, duplicates: list[tuple[str, str, tuple[Span, ...]]]) -> None:
    """Keys a literal writes twice, through the documents' duplicate-key hook (issue 44:
    `Document.duplicates`, read by the duplicate-key rule)."""
    from auditor.schema.documents import DuplicateKey

    document.duplicates.extend(DuplicateKey(p, k, spans) for p, k, spans in duplicates)


def read_document(raw: bytes, suffix: str, display: str, max_depth: int | None = None) -> Document:
    """The one file-kind dispatch: a code file's requests (read_code), or a JSON/YAML document
    (auditor.schema.documents.parse_document), by suffix."""
    from auditor.schema.documents import CODE_SUFFIXES

    if suffix.lower() not in CODE_SUFFIXES:
        return parse_document(raw, suffix, display, max_depth)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(display, f"not UTF-8 text (byte {exc.start})") from None
    return read_code(text, suffix.lower(), display)


def read_code(text: str, suffix: str, display: str) -> Document:
    """A code file's document (never run: parsed, its literals read). A file that does not
    parse is a document with no request and a note saying why."""
    from auditor.schema.documents import PYTHON_SUFFIXES

    context = CONTEXT.search(text.encode("utf-8", "replace")) is not None
    if suffix in PYTHON_SUFFIXES:
        from auditor.schema.python_static import read_python_requests

        reading = read_python_requests(text)
    else:
        from auditor.schema.script_static import read_script_requests

        reading = read_script_requests(text, suffix)
    return build_document(display, text, reading, context)


def runtime_parts(runtime: dict[str, str], question_pointer: str, text_key: str) -> tuple[str, ...]:
    """Which parts of the question at `question_pointer` were built at run time: "options" (its
    criteria, choices, options, levels or candidates), "text" (its instructions), "name" (a
    computed key)."""
    parts: list[str] = []
    prefix = question_pointer + "/"
    for pointer in runtime:
        if pointer == f"{question_pointer}/#name":
            parts.append("name")
        elif pointer.startswith(prefix):
            first = pointer[len(prefix) :].split("/", 1)[0]
            if first == text_key:
                parts.append("text")
            elif first in _OPTION_KEYS:
                parts.append("options")
        elif pointer == question_pointer:
            parts.append("options")
    return tuple(dict.fromkeys(parts))


_OPTION_KEYS = {"criteria", "choices", "options", "levels", "candidates", "labels", "min", "max", "..."}


def prefilter(raw: bytes) -> bool:
    """Whether a walked code file is worth parsing (it names questions or a decision API)."""
    return PREFILTER.search(raw) is not None
