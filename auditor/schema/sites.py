"""Find the enum-like decision fields ("sites") of a document, whatever format it is in.

Formats, detected from content: JSON Schema (any draft), OpenAI structured-output wrappers around
one, and PCD/RLCD presets (`schema` maps of typed fields, `fields` lists, `questions` maps). A site
is one declaration node with >= 2 options; it is reported once, at that node, however many `$ref`s
reach it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.schema.documents import Document, Span, escape_token, resolve_pointer

SUPPRESS_KEY = "x-pcdlint-ignore"

# Keywords whose value is one subschema, a list of them, or a name → subschema map.
SINGLE_SUBSCHEMA = {
    "additionalProperties": "*",
    "items": "[]",
    "additionalItems": "[]",
    "unevaluatedItems": "[]",
    "unevaluatedProperties": "*",
    "contains": "[]",
    "propertyNames": "",
    "not": "",
    "if": "",
    "then": "",
    "else": "",
}
LIST_SUBSCHEMAS = {"allOf": "", "anyOf": "", "oneOf": "", "prefixItems": "[]", "items": "[]"}
MAP_SUBSCHEMAS = {"properties": ".", "patternProperties": ".", "dependentSchemas": ""}
DEFINITION_KEYWORDS = ("$defs", "definitions")
SCHEMA_HINTS = {
    "$schema", "properties", "enum", "oneOf", "anyOf", "allOf", "$defs", "definitions", "items",
    "const", "$ref", "patternProperties", "additionalProperties", "prefixItems", "required",
}
JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


@dataclass
class Site:
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

    def to_dict(self) -> dict:
        return {
            "pointer": self.pointer,
            "field": self.field,
            "name": self.name,
            "kind": self.kind,
            "options": len(self.options),
            "line": self.span.line,
            "column": self.span.column,
        }


@dataclass
class SchemaProblem:
    pointer: str
    message: str


@dataclass
class FileModel:
    """What the crawler learnt about one file."""

    document: Document
    format: str  # "json-schema" | "openai-wrapper" | "pcd-preset" | "unknown"
    sites: list[Site] = field(default_factory=list)
    schema_problems: list[SchemaProblem] = field(default_factory=list)
    remote_refs: list[str] = field(default_factory=list)
    suppressions: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.document.path


def analyse(document: Document) -> FileModel:
    data = document.data
    root_pointer, fmt = _locate_json_schema(data)
    if root_pointer is not None:
        model = FileModel(document, fmt)
        _JsonSchemaCrawler(document, model, root_pointer).run()
    elif _looks_like_preset_container(data):
        model = FileModel(document, "pcd-preset")
        _crawl_presets(document, model, data, "", 0)
    else:
        model = FileModel(document, "unknown")
    _keep_needed_spans(model)
    return model


def _keep_needed_spans(model: FileModel) -> None:
    """Drop positions no finding can point at (big enums make the map huge; it is cached)."""
    document = model.document
    wanted: set[str] = set()
    for site in model.sites:
        wanted.add(site.pointer)
        wanted.update(site.option_pointers)
    wanted.update(p.pointer for p in model.schema_problems)
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
    document.value_spans = {p: s for p, s in document.value_spans.items() if p in wanted}
    document.key_spans = {p: s for p, s in document.key_spans.items() if p in wanted}


# --------------------------------------------------------------------------- detection


def _is_schema_like(node) -> bool:
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    if SCHEMA_HINTS & node.keys():
        return True
    kind = node.get("type")
    return kind in JSON_TYPES or (
        isinstance(kind, list) and bool(kind) and all(k in JSON_TYPES for k in kind)
    )


def _is_preset_fields(node) -> bool:
    """`{"<field>": {"type": "enum"|"boolean", "choices": [...]}}`."""
    return (
        isinstance(node, dict)
        and bool(node)
        and all(isinstance(v, dict) for v in node.values())
        and any(
            "choices" in v or v.get("type") in ("enum", "boolean", "multi") for v in node.values()
        )
        and not any(k in SCHEMA_HINTS for k in node if k != "items")
    )


def _locate_json_schema(data) -> tuple[str | None, str]:
    if not isinstance(data, dict):
        return None, "unknown"
    wrapper = data.get("json_schema")
    if data.get("type") == "json_schema" and isinstance(wrapper, dict):
        if isinstance(wrapper.get("schema"), dict):
            return "/json_schema/schema", "openai-wrapper"
    inner = data.get("schema")
    if "name" in data and isinstance(inner, dict) and _is_schema_like(inner):
        if not _is_preset_fields(inner):
            return "/schema", "openai-wrapper"
    if _looks_like_preset_container(data):
        return None, "unknown"
    if _is_schema_like(data):
        return "", "json-schema"
    return None, "unknown"


def _looks_like_preset_container(node, depth: int = 0) -> bool:
    if depth > 3:
        return False
    if isinstance(node, list):
        return any(_looks_like_preset_container(item, depth + 1) for item in node[:50])
    if not isinstance(node, dict):
        return False
    if _is_preset_fields(node.get("schema")):
        return True
    fields = node.get("fields")
    if isinstance(fields, list) and any(isinstance(f, dict) and "choices" in f for f in fields):
        return True
    questions = node.get("questions")
    if isinstance(questions, dict) and any(
        isinstance(q, dict) and isinstance(q.get("criteria"), dict) for q in questions.values()
    ):
        return True
    return any(
        _looks_like_preset_container(v, depth + 1)
        for v in node.values()
        if isinstance(v, (dict, list))
    )


# --------------------------------------------------------------------------- presets


def _suppressions_of(node) -> frozenset[str]:
    value = node.get(SUPPRESS_KEY) if isinstance(node, dict) else None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    return frozenset()


def _crawl_presets(document: Document, model: FileModel, node, pointer: str, depth: int,
                   inherited: frozenset[str] = frozenset(), holders: tuple[str, ...] = ()) -> None:
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
    if isinstance(schema, dict) and _is_preset_fields(schema):
        for name, spec in schema.items():
            _preset_field(document, model, spec, f"{pointer}/schema/{escape_token(name)}", name,
                          inherited, holders)
        return
    fields = node.get("fields")
    if isinstance(fields, list) and any(isinstance(f, dict) and "choices" in f for f in fields):
        for index, spec in enumerate(fields):
            if isinstance(spec, dict):
                name = str(spec.get("name", index))
                _preset_field(document, model, spec, f"{pointer}/fields/{index}", name,
                              inherited, holders)
        return
    questions = node.get("questions")
    if isinstance(questions, dict):
        for name, spec in questions.items():
            if isinstance(spec, dict) and isinstance(spec.get("criteria"), dict):
                _question_field(document, model, spec, f"{pointer}/questions/{escape_token(name)}",
                                name, inherited, holders)
        return
    for key, value in node.items():
        if isinstance(value, (dict, list)):
            _crawl_presets(document, model, value, f"{pointer}/{escape_token(key)}", depth + 1,
                           inherited, holders)


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
        spans = [document.span(p) for p in pointers]
        options = choices
    elif spec.get("type") == "boolean":
        pointers = [f"{pointer}/type", f"{pointer}/type"]
        spans = [document.span(p) for p in pointers]
        options, kind = [True, False], "preset-boolean"
    else:
        if "choices" in spec and not isinstance(choices, list):
            model.schema_problems.append(SchemaProblem(f"{pointer}/choices", "'choices' must be a list"))
        return
    model.sites.append(Site(document.path, pointer, name, name, list(options), pointers,
                            document.key_span(pointer), spans, kind, description, suppressed, holders))


def _question_field(document, model, spec, pointer, name, inherited, holders) -> None:
    suppressed, holders = _field_suppressions(model, spec, pointer, inherited, holders)
    criteria = spec["criteria"]
    if len(criteria) < 2:
        return
    pointers = [f"{pointer}/criteria/{escape_token(k)}" for k in criteria]
    spans = [document.key_span(p) for p in pointers]
    description = str(spec.get("instructions", "") or "")
    model.sites.append(Site(document.path, pointer, name, name, list(criteria), pointers,
                            document.key_span(pointer), spans, "question-" + str(spec.get("type")),
                            description, suppressed, holders))


# --------------------------------------------------------------------------- JSON Schema


class _JsonSchemaCrawler:
    def __init__(self, document: Document, model: FileModel, root_pointer: str):
        self.document, self.model, self.root_pointer = document, model, root_pointer
        self.schema = resolve_pointer(document.data, root_pointer)
        self.pointer_of: dict[int, str] = {}
        self.visited: set[str] = set()
        self.site_pointers: set[str] = set()

    def run(self) -> None:
        self._index(self.schema, self.root_pointer)
        self._validate_meta_schema()
        resolver = self._make_resolver()
        self._visit(self.schema, self.root_pointer, "", "", resolver, frozenset(), ())
        # Definitions no property reaches are still declarations worth linting.
        self._visit_definitions(self.schema, self.root_pointer, resolver)

    # -- setup

    def _index(self, node, pointer: str) -> None:
        if isinstance(node, dict):
            self.pointer_of[id(node)] = pointer
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    self._index(value, f"{pointer}/{escape_token(key)}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                if isinstance(value, (dict, list)):
                    self._index(value, f"{pointer}/{index}")

    def _validate_meta_schema(self) -> None:
        from jsonschema import validators

        schema = self.schema
        if not isinstance(schema, (dict, bool)):
            self.model.schema_problems.append(SchemaProblem(self.root_pointer, "a schema must be an object"))
            return
        declared = schema.get("$schema") if isinstance(schema, dict) else None
        if declared is None or isinstance(declared, str):
            cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        else:  # `"$schema": 5`: the meta-schema check below reports it
            cls = validators.Draft202012Validator
        try:
            errors = sorted(cls(cls.META_SCHEMA).iter_errors(schema), key=lambda e: list(e.path))
        except RecursionError:
            raise  # the file is nested too deeply: an input error, not a schema problem
        except Exception as exc:  # a broken meta-schema lookup must not crash the lint
            self.model.schema_problems.append(SchemaProblem(self.root_pointer, f"meta-schema check failed: {exc}"))
            return
        for error in errors[:50]:
            pointer = self.root_pointer + "".join(f"/{escape_token(str(p))}" for p in error.path)
            message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
            self.model.schema_problems.append(SchemaProblem(pointer, message))

    def _make_resolver(self):
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        base = "urn:pcdlint:document"
        if isinstance(self.schema, dict) and isinstance(self.schema.get("$id"), str):
            base = self.schema["$id"]
        try:
            resource = Resource.from_contents(self.schema, default_specification=DRAFT202012)
            registry = Registry().with_resource(base, resource).crawl()
            return registry.resolver(base_uri=base)
        except Exception:
            return None

    # -- traversal

    def _resolve(self, ref: str, resolver):
        """(target pointer, its resolver) for a local ref; None for remote or unresolvable."""
        if resolver is None:
            return None
        try:
            resolved = resolver.lookup(ref)
        except Exception:
            if not ref.startswith("#") and ref not in self.model.remote_refs:
                self.model.remote_refs.append(ref)
            elif ref.startswith("#"):
                self.model.schema_problems.append(SchemaProblem(self.root_pointer, f"unresolvable $ref '{ref}'"))
            return None
        pointer = self.pointer_of.get(id(resolved.contents))
        if pointer is None:
            # Resolved into something we did not index (another document): not followed.
            if ref not in self.model.remote_refs:
                self.model.remote_refs.append(ref)
            return None
        return pointer, resolved.resolver

    def _visit(self, node, pointer, field_path, name, resolver, suppressed, holders) -> None:
        if not isinstance(node, dict) or pointer in self.visited:
            return
        self.visited.add(pointer)
        own = _suppressions_of(node)
        if own:
            self.model.suppressions[pointer] = own
            suppressed, holders = suppressed | own, holders + (pointer,)
        if resolver is not None and isinstance(node.get("$id"), str) and pointer != self.root_pointer:
            try:
                from referencing.jsonschema import DRAFT202012

                resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
            except Exception:
                pass
        self._collect_site(node, pointer, field_path, name, suppressed, holders)
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref, resolver)
            if target is not None:
                target_pointer, target_resolver = target
                target_node = resolve_pointer(self.document.data, target_pointer)
                self._visit(target_node, target_pointer, field_path, name, target_resolver,
                            suppressed, holders)
        for keyword, value in node.items():
            if keyword in DEFINITION_KEYWORDS or keyword in ("enum", "const", "examples", "default"):
                continue
            child = f"{pointer}/{escape_token(keyword)}"
            if keyword in MAP_SUBSCHEMAS and isinstance(value, dict):
                for key, sub in value.items():
                    sub_field = _join(field_path, key) if keyword != "dependentSchemas" else field_path
                    sub_name = key if keyword != "dependentSchemas" else name
                    self._visit(sub, f"{child}/{escape_token(key)}", sub_field, sub_name,
                                resolver, suppressed, holders)
            elif keyword in LIST_SUBSCHEMAS and isinstance(value, list):
                suffix = LIST_SUBSCHEMAS[keyword]
                for index, sub in enumerate(value):
                    self._visit(sub, f"{child}/{index}", field_path + suffix, name, resolver,
                                suppressed, holders)
            elif keyword in SINGLE_SUBSCHEMA and isinstance(value, dict):
                suffix = SINGLE_SUBSCHEMA[keyword]
                sub_field = _join(field_path, "*") if suffix == "*" else field_path + suffix
                self._visit(value, child, sub_field, name, resolver, suppressed, holders)

    def _visit_definitions(self, node, pointer, resolver) -> None:
        if not isinstance(node, dict):
            return
        for keyword in DEFINITION_KEYWORDS:
            defs = node.get(keyword)
            if isinstance(defs, dict):
                for key, sub in defs.items():
                    sub_pointer = f"{pointer}/{keyword}/{escape_token(key)}"
                    holders = tuple(p for p in self.model.suppressions if sub_pointer.startswith(p))
                    suppressed = frozenset().union(*(self.model.suppressions[p] for p in holders)) if holders else frozenset()
                    self._visit(sub, sub_pointer, key, key, resolver, suppressed, holders)
                    self._visit_definitions(sub, sub_pointer, resolver)

    def _collect_site(self, node, pointer, field_path, name, suppressed, holders) -> None:
        options: list | None = None
        pointers: list[str] | None = None
        kind = ""
        enum = node.get("enum")
        if isinstance(enum, list):
            options = enum
            pointers = [f"{pointer}/enum/{i}" for i in range(len(enum))]
            kind = "enum"
        else:
            for keyword in ("oneOf", "anyOf"):
                branches = node.get(keyword)
                if isinstance(branches, list) and branches and all(_const_branch(b) for b in branches):
                    options, pointers = [], []
                    for index, branch in enumerate(branches):
                        branch_pointer = f"{pointer}/{keyword}/{index}"
                        if "const" in branch:
                            options.append(branch["const"])
                            pointers.append(f"{branch_pointer}/const")
                        else:  # an enum branch joins the union; it is not a site of its own
                            self.site_pointers.add(branch_pointer)
                            options.extend(branch["enum"])
                            pointers.extend(f"{branch_pointer}/enum/{i}" for i in range(len(branch["enum"])))
                    kind = f"{keyword}-const"
                    break
        if options is None and node.get("type") == "boolean" and "const" not in node:
            options = [True, False]
            pointers = [f"{pointer}/type", f"{pointer}/type"]
            kind = "boolean"
        if options is None or pointers is None or len(options) < 2 or pointer in self.site_pointers:
            return
        if any(isinstance(o, (dict, list)) for o in options):
            return  # structured enum values are not decision labels
        self.site_pointers.add(pointer)
        description = node.get("description") or node.get("title") or ""
        span = self.document.key_span(pointer) if pointer else self.document.span(pointer)
        self.model.sites.append(Site(
            self.document.path, pointer, field_path or name or "(root)", name or "value",
            list(options), pointers, span, [self.document.span(p) for p in pointers], kind,
            str(description), suppressed, holders,
        ))


def _const_branch(branch) -> bool:
    if not isinstance(branch, dict):
        return False
    if "const" in branch:
        return True
    enum = branch.get("enum")
    return isinstance(enum, list) and bool(enum)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
