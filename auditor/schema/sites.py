"""Find the enum-like decision fields ("sites") of a document, whatever format it is in.

Formats, detected from content: JSON Schema (any draft), OpenAI structured-output wrappers around
one, and PCD/RLCD presets (`schema` maps of typed fields, `fields` lists, `questions` maps). A site
is one declaration node with >= 2 options; it is reported once, at that node, however many `$ref`s
reach it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, repeat
from typing import Any
from urllib.parse import unquote

from auditor.lazy import Deferred
from auditor.schema.decisions import LocatedRequest, decision_text, field_pointers, request_questions
from auditor.schema.documents import Document, Span, escape_token, pack_spans, resolve_pointer, unpack_spans
from auditor.schema.locate import JSON_TYPES, SCHEMA_HINTS, Detection, LocatedSchema, detect, is_preset_fields
from auditor.schema.metaschema import meta_schema_errors
from auditor.schema.positions import ARRAY_INDEX

SUPPRESS_KEY = "x-pcdlint-ignore"

# Keywords whose value is one subschema, a list of them, or a name → subschema map.
SINGLE_SUBSCHEMA = {
    "additionalProperties": "*",
    "items": "[]",
    "additionalItems": "[]",
    "unevaluatedItems": "[]",
    "unevaluatedProperties": "*",
    # Not followed: `contains`, `propertyNames`, `not`, `if` (and `dependentRequired`) constrain
    # a value; their enums are not values a model picks, so they are no decision sites.
    "then": "",
    "else": "",
}
LIST_SUBSCHEMAS = {"allOf": "", "anyOf": "", "oneOf": "", "prefixItems": "[]", "items": "[]"}
MAP_SUBSCHEMAS = {"properties": ".", "patternProperties": ".", "dependentSchemas": ""}
DEFINITION_KEYWORDS = ("$defs", "definitions")
SUBSCHEMA_KEYWORDS = frozenset({*SINGLE_SUBSCHEMA, *LIST_SUBSCHEMAS, *MAP_SUBSCHEMAS})
__all__ = ["JSON_TYPES", "SCHEMA_HINTS", "FileModel", "OpenField", "SchemaProblem", "Site", "analyse"]


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

    @property
    def is_decision(self) -> bool:
        return self.question_kind is not None

    def name_scored(self, names_decisions: bool) -> bool:
        """Whether the option-name rules and the cost model read this site: a schema's field
        always; a decision request's question where an engine named scores option names and it
        has two options or more (a choice whose criteria are no map has none)."""
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
    source: str | None = None  # the input as named where it is no path (`pkg.module:Name`)

    @property
    def path(self) -> str:
        return self.document.path

    @property
    def recognized(self) -> bool:
        return self.format != "unknown"


def analyse(document: Document, detection: Detection | None = None) -> FileModel:
    """Crawl a document: every schema the locator finds in it, or its PCD presets."""
    detection = detection or detect(document.data)
    model = FileModel(document, detection.format, schemas=list(detection.schemas))
    if detection.schemas:
        _JsonSchemaCrawler(document, model).run(detection.schemas)
    elif detection.requests:
        crawl_requests(document, model, detection.requests)
    elif detection.format == "pcd-preset":
        _crawl_presets(document, model, document.data, "", 0)
    _keep_needed_spans(model)
    return model


def _keep_needed_spans(model: FileModel) -> None:
    """Drop positions no finding can point at (big enums make the map huge; it is cached)."""
    document = model.document
    wanted: set[str] = set()
    for site in model.sites:
        wanted.add(site.pointer)
        wanted.update(site.option_pointers)
        if site.question_kind is not None:  # a field finding may point at any of its fields
            wanted.update(field_pointers(document.data, site.request_pointer, site.pointer))
    wanted.update(p.pointer for p in model.schema_problems)
    wanted.update(o.pointer for o in model.open_fields)
    for holder, codes in model.suppressions.items():
        key = f"{holder}/{SUPPRESS_KEY}"
        wanted.update([holder, key, *(f"{key}/{i}" for i in range(len(codes)))])
    for pointer in list(wanted):
        while pointer:
            pointer = pointer.rsplit("/", 1)[0]
            if pointer in wanted:
                break
            wanted.add(pointer)
    wanted.add("")
    # The way to every pointer is scanned at once (each container once), then each site's spans
    # are found, in the order the crawl met them, then the rest (found already: an enum's options)
    document.prefetch(wanted)
    for site in model.sites:
        site.make_deferred()
    document.settle_spans(sorted(p for p in wanted if p not in document.value_spans))
    if not document.value_spans.keys() <= wanted:
        document.value_spans = {p: s for p, s in document.value_spans.items() if p in wanted}
    if not document.key_spans.keys() <= wanted:
        document.key_spans = {p: s for p, s in document.key_spans.items() if p in wanted}


def crawl_requests(document: Document, model, requests: list[LocatedRequest]) -> None:
    """Every question of every request becomes a Site of the file model (a `box` question, read
    but not linted, a note)."""
    for request in requests:
        body = resolve_pointer(document.data, request.pointer)
        questions = request_questions(request, body)
        for index, question in enumerate(questions):
            where = f"{request.label} › " if request.label else ""
            if question.kind is None:
                model.notes.append(
                    f"{where}question {question.name!r} is a "
                    f"{question.type!r} question, which pcdlint does not lint"
                )
                continue
            site = Site(
                document.path,
                question.pointer,
                f"{where}question {question.name} › {question.type}",
                question.name,
                question.options,
                question.option_pointers,
                document.key_span(question.pointer) if question.keyed else document.span(question.pointer),
                [document.key_span(p) for p in question.option_pointers]
                if question.option_keys
                else document.spans(question.option_pointers),
                f"{request.shape}-{question.type}",
                decision_text(question.text),
                question_kind=question.kind,
                request_shape=request.shape,
                question_name=question.name,
                question_type=question.type,
                question_text=question.text,
                option_details=question.details,
                request_pointer=request.pointer,
                request_source=request.source,
                question_index=index,
                request_questions=len(questions),
            )
            model.sites.append(site)


# --------------------------------------------------------------------------- presets


def _suppressions_of(node) -> frozenset[str]:
    value = node.get(SUPPRESS_KEY) if isinstance(node, dict) else None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    return frozenset()


def _crawl_presets(
    document: Document,
    model: FileModel,
    node,
    pointer: str,
    depth: int,
    inherited: frozenset[str] = frozenset(),
    holders: tuple[str, ...] = (),
) -> None:
    if depth > 4:
        return
    if isinstance(node, list):
        for index, item in enumerate(node):
            _crawl_presets(document, model, item, f"{pointer}/{index}", depth + 1, inherited, holders)
        return
    if not isinstance(node, dict):
        return
    own = _suppressions_of(node)
    if own:
        model.suppressions[pointer] = own
        inherited, holders = inherited | own, holders + (pointer,)
    schema = node.get("schema")
    if isinstance(schema, dict) and is_preset_fields(schema):
        for name, spec in schema.items():
            _preset_field(
                document, model, spec, f"{pointer}/schema/{escape_token(name)}", name, inherited, holders
            )
        return
    fields = node.get("fields")
    if isinstance(fields, list) and any(isinstance(f, dict) and "choices" in f for f in fields):
        for index, spec in enumerate(fields):
            if isinstance(spec, dict):
                name = str(spec.get("name", index))
                _preset_field(document, model, spec, f"{pointer}/fields/{index}", name, inherited, holders)
        return
    questions = node.get("questions")
    if isinstance(questions, dict):
        for name, spec in questions.items():
            if isinstance(spec, dict) and isinstance(spec.get("criteria"), dict):
                _question_field(
                    document,
                    model,
                    spec,
                    f"{pointer}/questions/{escape_token(name)}",
                    name,
                    inherited,
                    holders,
                )
        return
    for key, value in node.items():
        if isinstance(value, (dict, list)):
            _crawl_presets(
                document, model, value, f"{pointer}/{escape_token(key)}", depth + 1, inherited, holders
            )


def _field_suppressions(model, spec, pointer, inherited, holders):
    own = _suppressions_of(spec)
    if own:
        model.suppressions[pointer] = own
        return inherited | own, holders + (pointer,)
    return inherited, holders


def _preset_field(document, model, spec, pointer, name, inherited, holders) -> None:
    if not isinstance(spec, dict):
        return
    suppressed, holders = _field_suppressions(model, spec, pointer, inherited, holders)
    description = str(spec.get("description", "") or "")
    choices = spec.get("choices")
    if isinstance(choices, list) and len(choices) >= 2:
        pointers = [f"{pointer}/choices/{i}" for i in range(len(choices))]
        kind = "preset-" + str(spec.get("type", "enum"))
        spans = document.spans(pointers)
        options = choices
    elif spec.get("type") == "boolean":
        pointers = [f"{pointer}/type", f"{pointer}/type"]
        spans = [document.span(p) for p in pointers]
        options, kind = [True, False], "preset-boolean"
    else:
        if "choices" in spec and not isinstance(choices, list):
            model.schema_problems.append(SchemaProblem(f"{pointer}/choices", "'choices' must be a list"))
        return
    model.sites.append(
        Site(
            document.path,
            pointer,
            name,
            name,
            list(options),
            pointers,
            document.key_span(pointer),
            spans,
            kind,
            description,
            suppressed,
            holders,
        )
    )


def _question_field(document, model, spec, pointer, name, inherited, holders) -> None:
    suppressed, holders = _field_suppressions(model, spec, pointer, inherited, holders)
    criteria = spec["criteria"]
    if len(criteria) < 2:
        return
    pointers = [f"{pointer}/criteria/{escape_token(k)}" for k in criteria]
    spans = [document.key_span(p) for p in pointers]
    description = str(spec.get("instructions", "") or "")
    model.sites.append(
        Site(
            document.path,
            pointer,
            name,
            name,
            list(criteria),
            pointers,
            document.key_span(pointer),
            spans,
            "question-" + str(spec.get("type")),
            description,
            suppressed,
            holders,
        )
    )


# --------------------------------------------------------------------------- JSON Schema


class _JsonSchemaCrawler:
    """One crawl over every located schema of a document, so a node many schemas reach (an
    OpenAPI component, a shared `$defs` entry) is one site, labelled by the first that reaches it."""

    def __init__(self, document: Document, model: FileModel):
        self.document, self.model = document, model
        # id of every object of the document → its pointer: built on first need (_target_pointer)
        self.pointer_of: dict[int, str] | None = None
        self.visited: set[str] = set()
        self.site_pointers: set[str] = set()
        self.located = LocatedSchema("", "", "json-schema", "json-schema")
        # (a resolver's context, ref) → (that resolver, kept alive so the ids in its context
        # stay its own; the resolved target): a `$ref` to a shared definition is looked up once
        # per base URI, however many resolvers (one per lookup) reach it
        self._resolved: dict[tuple[tuple, str], tuple[Any, tuple[str, Any, Any]]] = {}
        self._resolvers: dict[str, Any] = {}  # base pointer → its resolver
        self._pins_at: dict[str, dict[str, tuple[object, str]]] = {}  # pointer → _pins() there

    def run(self, located: list[LocatedSchema]) -> None:
        for schema_at in located:
            self.located = schema_at
            schema = resolve_pointer(self.document.data, schema_at.pointer)
            self._validate_meta_schema(schema, schema_at)
            if schema_at.base not in self._resolvers:  # OpenAPI: every schema's base is the root
                self._resolvers[schema_at.base] = self._make_resolver(
                    resolve_pointer(self.document.data, schema_at.base)
                )
            resolver = self._resolvers[schema_at.base]
            suppressed, holders = self._inherited(schema_at.pointer)
            self._visit(schema, schema_at.pointer, "", schema_at.name, resolver, suppressed, holders)
            # Definitions no property reaches are still declarations worth linting.
            self._visit_definitions(schema, schema_at.pointer, resolver)

    # -- setup

    def index(self) -> dict[int, str]:
        """pointer_of, built now if it is not yet."""
        if self.pointer_of is None:
            self.pointer_of = {}
            if isinstance(self.document.data, (dict, list)):
                self._index(self.document.data, "")
        return self.pointer_of

    def _index(self, node, pointer: str) -> None:
        """pointer_of every object at or below node (a `$ref` target is known by its identity;
        a parsed document holds each object once, so it has one pointer)."""
        assert self.pointer_of is not None
        if isinstance(node, dict):
            self.pointer_of[id(node)] = pointer
            for key, value in node.items():
                if isinstance(value, (dict, list)):  # (escape_token, inline: one call per object)
                    self._index(value, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
        else:  # a list: its objects and arrays picked out in C (an enum can list thousands)
            for index, value in compress(enumerate(node), map(isinstance, node, repeat((dict, list)))):
                self._index(value, f"{pointer}/{index}")

    def _inherited(self, pointer: str) -> tuple[frozenset[str], tuple[str, ...]]:
        """Suppressions on the wrappers above an embedded schema (a tool, an operation)."""
        suppressed: frozenset[str] = frozenset()
        holders: tuple[str, ...] = ()
        node: Any = self.document.data
        here = ""
        for token in pointer.split("/")[1:] if pointer else []:
            own = _suppressions_of(node)
            if own:
                self.model.suppressions[here] = own
                suppressed, holders = suppressed | own, holders + (here,)
            key = token.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
            here = f"{here}/{token}"
        return suppressed, holders

    def _validate_meta_schema(self, schema, located: LocatedSchema) -> None:
        from jsonschema import validators

        if located.dialect in ("gemini", "swagger-parameter", "python-types"):
            return  # no meta-schema of their own: Gemini's OpenAPI subset, a Swagger parameter,
            # a function doc typed with Python's names (BFCL): never checked against another's
        if not isinstance(schema, (dict, bool)):
            self.model.schema_problems.append(SchemaProblem(located.pointer, "a schema must be an object"))
            return
        declared = schema.get("$schema") if isinstance(schema, dict) else None
        if located.dialect in ("openapi-3.0", "swagger-2.0"):
            cls = validators.Draft4Validator  # their Schema Objects extend draft 4 / wright-00
        elif declared is None or isinstance(declared, str):
            cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        else:  # `"$schema": 5`: the meta-schema check below reports it
            cls = validators.Draft202012Validator
        try:
            errors = meta_schema_errors(cls, schema)
        except RecursionError:
            raise  # the file is nested too deeply: an input error, not a schema problem
        except Exception as exc:  # a broken meta-schema lookup must not crash the lint
            self.model.schema_problems.append(
                SchemaProblem(located.pointer, f"meta-schema check failed: {exc}")
            )
            return
        reported: set[tuple[str, str]] = set()  # one problem per (place, message), not per sub-error
        for error in errors:
            pointer = located.pointer + "".join(f"/{escape_token(str(p))}" for p in error.path)
            message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
            if (pointer, message) in reported:
                continue
            reported.add((pointer, message))
            self.model.schema_problems.append(SchemaProblem(pointer, message))
            if len(reported) == 50:
                break

    def _make_resolver(self, base_node):
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        base = "urn:pcdlint:document"
        if isinstance(base_node, dict) and isinstance(base_node.get("$id"), str):
            base = base_node["$id"]
        try:
            resource = Resource.from_contents(base_node, default_specification=DRAFT202012)
            registry = Registry().with_resource(base, resource)
            if not self.document.reparse or crawl_needed(self.document.text, base_node):
                registry = registry.crawl()
            return registry.resolver(base_uri=base)
        except Exception:
            return None

    # -- traversal

    def _resolve(self, ref: str, resolver):
        """(target pointer, its resolver, the target) for a local ref; None for remote or unresolvable
        (each time: those record a remote ref or a schema problem)."""
        if resolver is None:
            return None
        key = (_lookup_context(resolver), ref)
        known = self._resolved.get(key)
        if known is not None:
            return known[1]
        try:
            resolved = resolver.lookup(ref)
        except Exception:
            if not ref.startswith("#") and ref not in self.model.remote_refs:
                self.model.remote_refs.append(ref)
            elif ref.startswith("#"):
                self.model.schema_problems.append(
                    SchemaProblem(self.located.pointer, f"unresolvable $ref '{ref}'")
                )
            return None
        pointer = self._target_pointer(ref, resolved.contents)
        if pointer is None:
            # Resolved into something we did not index (another document): not followed.
            if ref not in self.model.remote_refs:
                self.model.remote_refs.append(ref)
            return None
        target = pointer, resolved.resolver, resolved.contents  # the node at pointer (_index)
        self._resolved[key] = (resolver, target)
        return target

    def _target_pointer(self, ref: str, target) -> str | None:
        """The pointer of the object a lookup of `ref` found; None for anything else (a list, a
        value of another document). Read off the ref where its JSON pointer, walked from the
        schema's base, reaches that very object (`#/$defs/…`, `#/components/schemas/…`: almost
        every ref); else looked up in the index of every object, built for it."""
        if not isinstance(target, dict):
            return None
        if ref.startswith("#/"):
            node, pointer = resolve_pointer(self.document.data, self.located.base), self.located.base
            for token in unquote(ref[2:]).split("/"):  # as referencing reads it
                if isinstance(node, list) and ARRAY_INDEX.fullmatch(token) and int(token) < len(node):
                    node, pointer = node[int(token)], f"{pointer}/{token}"
                elif isinstance(node, dict) and (key := token.replace("~1", "/").replace("~0", "~")) in node:
                    node, pointer = node[key], f"{pointer}/{escape_token(key)}"
                else:
                    break
            else:
                if node is target:  # the one path to it, spelt as the index spells it
                    return pointer
        return self.index().get(id(target))

    def _deref(self, node, pointer, resolver, depth: int = 0):
        """(node, pointer) after following local `$ref`s from the node at pointer."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 8:
            target = self._resolve(node["$ref"], resolver)
            if target is None:
                return node, pointer
            pointer, resolver, node = target
            depth += 1
        return node, pointer

    def _visit(self, node, pointer, field_path, name, resolver, suppressed, holders) -> None:
        if not isinstance(node, dict) or pointer in self.visited:
            return
        self.visited.add(pointer)
        own = _suppressions_of(node) if SUPPRESS_KEY in node else None
        if own:
            self.model.suppressions[pointer] = own
            suppressed, holders = suppressed | own, holders + (pointer,)
        if resolver is not None and isinstance(node.get("$id"), str) and pointer != self.located.pointer:
            try:
                from referencing.jsonschema import DRAFT202012

                resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
            except Exception:
                pass
        if "anyOf" in node or "oneOf" in node:
            self._open_union(node, pointer, field_path, name, resolver)
        self._collect_site(node, pointer, field_path, name, suppressed, holders, resolver)
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref, resolver)
            if target is not None:
                target_pointer, target_resolver, target_node = target
                self._visit(
                    target_node, target_pointer, field_path, name, target_resolver, suppressed, holders
                )
        # (no table names `$defs`, `definitions`, `enum`, `const`, `examples` or `default`:
        # definitions are visited on their own, the others hold values, not schemas)
        for keyword, value in node.items():
            if keyword not in SUBSCHEMA_KEYWORDS:  # (most keywords: one look, not three)
                continue
            if keyword in MAP_SUBSCHEMAS and isinstance(value, dict):
                child = f"{pointer}/{escape_token(keyword)}"
                for key, sub in value.items():
                    sub_field = _join(field_path, key) if keyword != "dependentSchemas" else field_path
                    sub_name = key if keyword != "dependentSchemas" else name
                    self._visit(
                        sub,
                        f"{child}/{escape_token(key)}",
                        sub_field,
                        sub_name,
                        resolver,
                        suppressed,
                        holders,
                    )
            elif keyword in LIST_SUBSCHEMAS and isinstance(value, list):
                child = f"{pointer}/{escape_token(keyword)}"
                suffix = LIST_SUBSCHEMAS[keyword]
                for index, sub in enumerate(value):
                    self._visit(
                        sub, f"{child}/{index}", field_path + suffix, name, resolver, suppressed, holders
                    )
            elif keyword in SINGLE_SUBSCHEMA and isinstance(value, dict):
                suffix = SINGLE_SUBSCHEMA[keyword]
                sub_field = _join(field_path, "*") if suffix == "*" else field_path + suffix
                self._visit(
                    value,
                    f"{pointer}/{escape_token(keyword)}",
                    sub_field,
                    name,
                    resolver,
                    suppressed,
                    holders,
                )

    def _open_union(self, node, pointer, field_path, name, resolver) -> None:
        """A union with listed values and a branch that takes any string is an open field: its
        inline value branches become no site (a `$ref`ed definition stays one: it may be used
        closed elsewhere), and the field is recorded in `open_fields`."""
        for keyword in ("anyOf", "oneOf"):
            branches = node.get(keyword)
            if not isinstance(branches, list) or len(branches) < 2:
                continue
            options: list = []
            closed_at: list[str] = []
            open_branch = None
            for index, branch in enumerate(branches):
                at = f"{pointer}/{keyword}/{index}"
                if _const_branch(branch):
                    closed_at.append(at)
                    options.extend([branch["const"]] if "const" in branch else branch.get("enum") or [])
                    continue
                target, _ = self._deref(branch, at, resolver)
                if _const_branch(target):
                    options.extend([target["const"]] if "const" in target else target.get("enum") or [])
                elif open_branch is None and _takes_any_string(target):
                    open_branch = json.dumps(branch, ensure_ascii=False)
            options = [o for o in options if o is not None]
            if open_branch is None or not any(isinstance(o, str) for o in options):
                continue
            self.site_pointers.update(closed_at)
            shown = field_path or name or ("" if self.located.label else "(root)")
            label = self.located.label
            self.model.open_fields.append(
                OpenField(
                    pointer,
                    f"{label} › {shown}" if label and shown else (label or shown),
                    options,
                    open_branch if len(open_branch) <= 80 else open_branch[:77] + "...",
                )
            )
            return

    def _visit_definitions(self, node, pointer, resolver) -> None:
        if not isinstance(node, dict):
            return
        for keyword in DEFINITION_KEYWORDS:
            defs = node.get(keyword)
            if isinstance(defs, dict):
                for key, sub in defs.items():
                    sub_pointer = f"{pointer}/{keyword}/{escape_token(key)}"
                    holders = tuple(p for p in self.model.suppressions if sub_pointer.startswith(p))
                    suppressed = (
                        frozenset().union(*(self.model.suppressions[p] for p in holders))
                        if holders
                        else frozenset()
                    )
                    self._visit(sub, sub_pointer, key, key, resolver, suppressed, holders)
                    self._visit_definitions(sub, sub_pointer, resolver)

    # -- sites

    def _collect_site(self, node, pointer, field_path, name, suppressed, holders, resolver) -> None:
        # (each finder asks for its keywords: a node with none of them is no site, unasked)
        union = "oneOf" in node or "anyOf" in node
        found = (
            (self._enum_options(node, pointer) if "enum" in node else None)
            or (self._union_options(node, pointer) if union else None)
            or (self._boolean_options(node, pointer) if "type" in node else None)
        )
        if found is None:
            discriminator = self._discriminator(node, pointer, resolver) if union else None
            if discriminator is None:
                return
            prop, options, pointers = discriminator
            field_path, name, kind = _join(field_path or name, prop), prop, "discriminator"
        else:
            options, pointers, kind = found
        if len(options) < 2 or pointer in self.site_pointers:
            return
        if any(map(isinstance, options, repeat((dict, list)))):
            return  # structured enum values are not decision labels
        self.site_pointers.add(pointer)
        description = node.get("description") or node.get("title") or ""
        shown = field_path or name or ("" if self.located.label else "(root)")
        label = self.located.label
        field_name = f"{label} › {shown}" if label and shown else (label or shown)
        site = Site(
            self.document.path,
            pointer,
            field_name,
            name or "value",
            list(options),
            pointers,
            Span(0, 0, 0, 0),
            [],
            kind,
            str(description),
            suppressed,
            holders,
            _array_depth(field_path),
        )
        # its spans are found once the crawl is over, with every other pointer's (_keep_needed_spans)
        document = self.document
        site.defer("span", partial(document.key_span if pointer else document.span, pointer))
        site.defer("option_spans", partial(document.spans, pointers))
        self.model.sites.append(site)

    @staticmethod
    def _enum_options(node, pointer):
        enum = node.get("enum")
        if not isinstance(enum, list):
            return None
        options, pointers = list(enum), [f"{pointer}/enum/{i}" for i in range(len(enum))]
        if node.get("nullable") is True and None not in options:
            # OpenAPI 3.0 / Gemini: `nullable: true` adds null to the values the model may pick
            return [*options, None], [*pointers, f"{pointer}/nullable"], "nullable-enum"
        return options, pointers, "enum"

    def _union_options(self, node, pointer):
        for keyword in ("oneOf", "anyOf"):
            branches = node.get(keyword)
            if not (isinstance(branches, list) and branches and all(_const_branch(b) for b in branches)):
                continue
            options, pointers = [], []
            for index, branch in enumerate(branches):
                branch_pointer = f"{pointer}/{keyword}/{index}"
                if "const" in branch:
                    options.append(branch["const"])
                    pointers.append(f"{branch_pointer}/const")
                elif "enum" in branch:  # an enum branch joins the union; it is not a site of its own
                    self.site_pointers.add(branch_pointer)
                    options.extend(branch["enum"])
                    pointers.extend(f"{branch_pointer}/enum/{i}" for i in range(len(branch["enum"])))
                elif str(branch["type"]).lower() == "boolean":  # Optional[bool]: true/false/null
                    self.site_pointers.add(branch_pointer)
                    options.extend([True, False])
                    pointers.extend([f"{branch_pointer}/type"] * 2)
                else:  # {"type": "null"}: a nullable enum as Pydantic writes Optional[Literal]
                    options.append(None)
                    pointers.append(f"{branch_pointer}/type")
            if any(o is not None for o in options):
                return options, pointers, f"{keyword}-const"
        return None

    @staticmethod
    def _boolean_options(node, pointer):
        if "const" in node:
            return None
        kind = node.get("type")
        if isinstance(kind, str) and kind.lower() == "boolean":
            if node.get("nullable") is True:
                return (
                    [True, False, None],
                    [f"{pointer}/type"] * 2 + [f"{pointer}/nullable"],
                    "nullable-boolean",
                )
            return [True, False], [f"{pointer}/type", f"{pointer}/type"], "boolean"
        if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
            lowered = [k.lower() for k in kind]
            if "boolean" in lowered and set(lowered) <= {"boolean", "null"}:
                at = f"{pointer}/type/{lowered.index('boolean')}"
                if "null" in lowered:
                    return (
                        [True, False, None],
                        [at, at, f"{pointer}/type/{lowered.index('null')}"],
                        "nullable-boolean",
                    )
                return [True, False], [at, at], "boolean"
        return None

    def _discriminator(self, node, pointer, resolver):
        """(property, values, value pointers) when every oneOf/anyOf branch pins one property."""
        for keyword in ("oneOf", "anyOf"):
            branches = node.get(keyword)
            if not isinstance(branches, list) or len(branches) < 2:
                continue
            pins = [
                self._pins(branch, f"{pointer}/{keyword}/{index}", resolver)
                for index, branch in enumerate(branches)
            ]
            if not all(pins):
                continue
            # a discriminator tells the branches apart: pinned in every branch, to distinct values
            # (`"jsonrpc": "2.0"` in every branch is a constant, not a choice)
            common = [
                p
                for p in pins[0]
                if all(p in other for other in pins[1:])
                and len({json.dumps(pin[p][0], sort_keys=True) for pin in pins}) == len(pins)
            ]
            if not common:
                continue
            named = node.get("discriminator")
            named = named.get("propertyName") if isinstance(named, dict) else None
            prop = named if named in common else common[0]
            return prop, [pin[prop][0] for pin in pins], [pin[prop][1] for pin in pins]
        return None

    def _pins(self, branch, pointer, resolver) -> dict[str, tuple[object, str]]:
        """property → (value, pointer of the value) for properties this branch (at pointer) fixes
        to one value."""
        node, pointer = self._deref(branch, pointer, resolver)
        if not isinstance(node, dict):
            return {}
        known = self._pins_at.get(pointer)  # a shared definition is a branch of many unions
        if known is not None:
            return known
        out: dict[str, tuple[object, str]] = {}
        self._pins_at[pointer] = out
        properties = node.get("properties")
        if isinstance(properties, dict):
            for prop, sub in properties.items():
                if not isinstance(sub, dict):
                    continue
                at = f"{pointer}/properties/{escape_token(prop)}"
                if "const" in sub:
                    out[prop] = (sub["const"], f"{at}/const")
                elif isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1:
                    out[prop] = (sub["enum"][0], f"{at}/enum/0")
        return out


# A `$ref` that is not a JSON pointer into its own document (`#/…`): an anchor, a URI.
_OTHER_REF = re.compile(r'"\$ref"\s*:\s*"(?!#/)')
_ANCHORS = ('"$anchor"', '"$dynamicAnchor"', '"$recursiveAnchor"')


def crawl_needed(text: str, base_node) -> bool:
    """Whether `$ref` lookups in a JSON document may need its registry crawled (every embedded
    resource and anchor indexed) before the first one. Not when its refs are all JSON pointers
    (`#/$defs/a`) and no subschema names itself (`$id`, or `id` in drafts 3 and 4) or an anchor:
    each lookup then finds the one resource the registry holds, which is most of the corpus
    (0.1 s of `--no-cache` parsing). A key written with `\\u` escapes hides from this reading of
    the text: such a document is crawled. This decides only speed: a lookup that misses
    crawls the registry then (`referencing`); tests/test_parse_speed_equivalence.py compares
    the models."""
    from referencing.jsonschema import DRAFT3, DRAFT4, DRAFT202012, specification_with

    own_id = isinstance(base_node, dict) and isinstance(base_node.get("$id"), str)
    if text.count('"$id"') > own_id or "\\u" in text or any(a in text for a in _ANCHORS):
        return True
    declared = base_node.get("$schema") if isinstance(base_node, dict) else None
    if (
        '"id"' in text
        and isinstance(declared, str)
        and specification_with(declared, default=DRAFT202012) in (DRAFT3, DRAFT4)
    ):
        return True
    return _OTHER_REF.search(text) is not None


def _lookup_context(resolver) -> tuple:
    """What `resolver.lookup(ref)` depends on: the resolver's base URI and registry. Not the
    URIs it was reached through (`_previous`: only `$dynamicRef` reads them), which differ from
    one resolver to the next; each lookup returns a new resolver. The resolver itself where
    `referencing` names its fields otherwise."""
    try:
        return resolver._base_uri, id(resolver._registry)
    except AttributeError:
        return (id(resolver),)


def _array_depth(field_path: str) -> int:
    depth = 0
    while field_path.endswith("[]"):
        depth, field_path = depth + 1, field_path[:-2]
    return depth


def _const_branch(branch) -> bool:
    if not isinstance(branch, dict):
        return False
    if "const" in branch:
        return True
    if set(branch) - {"title", "description"} == {"type"} and str(branch["type"]).lower() in (
        "null",
        "boolean",
    ):
        return True
    enum = branch.get("enum")
    return isinstance(enum, list) and bool(enum)


def _takes_any_string(branch) -> bool:
    """Whether a (non-value) branch lets the model write a string of its own: `{"type":
    "string"}`, a `pattern` or `format`, or no type at all (`{}`, a description only)."""
    if branch is True:
        return True
    if not isinstance(branch, dict) or "enum" in branch or "const" in branch:
        return False
    if any(k in branch for k in ("anyOf", "oneOf", "allOf", "$ref", "properties", "items", "not")):
        return False  # structured, or not resolved here: not a plain open string
    kind = branch.get("type")
    if kind is None:
        return True
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return any(isinstance(k, str) and k.lower() == "string" for k in kinds)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
