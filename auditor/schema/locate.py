"""Find every schema embedded in a document: one table of known wrappers, walked anywhere.

A document is either a JSON Schema itself, or it holds schemas inside wrappers that LLM APIs and
API descriptions define: a tool's `parameters`, a `response_format`, an OpenAPI operation's
request body, a test case's `schema`. `WRAPPERS` lists those shapes, one row each; `locate()`
walks the document (lists and objects, any depth) and applies every row whose test a node
passes, so a chat request body, a bare tool, a list of tools or a config that nests any of them
are all found the same way. Each hit is a `LocatedSchema`: where the schema is, what `#` means
for its `$ref`s (the schema itself for a schema sent to an LLM API; the document root for
OpenAPI and Swagger, so `#/components/schemas/X` resolves), which dialect it is written in, and
a label that field paths start with (`tool get_weather › unit`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from auditor.schema.decisions import locate_requests
from auditor.schema.documents import escape_token

DECISION_FORMAT = "decision-request"

# JSON Schema keywords whose presence marks an object as a schema (not a wrapper or config).
SCHEMA_HINTS = {
    "$schema",
    "properties",
    "enum",
    "oneOf",
    "anyOf",
    "allOf",
    "$defs",
    "definitions",
    "items",
    "const",
    "$ref",
    "patternProperties",
    "additionalProperties",
    "prefixItems",
    "required",
}
JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# Keys whose values are instance data, not definitions: the walk does not look inside them.
DATA_KEYS = {
    "tests",
    "examples",
    "example",
    "default",
    "const",
    "enum",
    "data",
    "messages",
    "input",
    "content_parts",
}
MAX_WALK_DEPTH = 16


@dataclass(frozen=True)
class LocatedSchema:
    pointer: str  # where the schema is
    base: str  # what `#` in its $refs means (a pointer into the same document)
    kind: str  # the wrapper's row: "openai-function", "openapi-request-body", ...
    family: str  # the format family: "openai", "anthropic", "mcp", "gemini", "openapi-3.1", ...
    # json-schema | openapi-3.0 | swagger-2.0 | gemini | swagger-parameter | python-types
    dialect: str = "json-schema"
    label: str = ""  # what field paths start with ("tool get_weather"); "" for none
    name: str = ""  # the field name of the schema's own root (an OpenAPI parameter's name)


def is_schema_like(node: Any) -> bool:
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict):
        return False
    if SCHEMA_HINTS & node.keys():
        return True
    kind = node.get("type")
    if isinstance(kind, str):
        return kind.lower() in JSON_TYPES
    return (
        isinstance(kind, list)
        and bool(kind)
        and all(isinstance(k, str) and k.lower() in JSON_TYPES for k in kind)
    )


def is_preset_fields(node: Any) -> bool:
    """`{"<field>": {"type": "enum"|"boolean", "choices": [...]}}`: a PCD preset, not a schema."""
    return (
        isinstance(node, dict)
        and bool(node)
        and all(isinstance(v, dict) for v in node.values())
        and any("choices" in v or v.get("type") in ("enum", "boolean", "multi") for v in node.values())
        and not any(k in SCHEMA_HINTS for k in node if k != "items")
    )


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Wrapper:
    """One known shape: a test on the node (and the key it sits under) and where its schemas are.

    `schemas(node)` yields (relative path, label, name[, dialect]) for each schema it holds; the
    path is a tuple of keys below the node; the dialect, when given, overrides the row's.
    """

    kind: str
    family: str | Callable[[dict], str]
    test: Callable[[dict, str], bool]
    schemas: Callable[[dict], Iterator[tuple]]
    dialect: str | Callable[[dict], str] = "json-schema"
    ref_base: str = "schema"  # "schema" or "document"
    root_only: bool = False


def _name(node: dict, *keys: str) -> str:
    for key in keys:
        value = node.get(key)
        if isinstance(value, dict):
            value = value.get("name")
        if isinstance(value, str) and value:
            return value
    return ""


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _one(path: tuple, label: str) -> Callable[[dict], Iterator[tuple[tuple, str, str]]]:
    def schemas(node: dict):
        yield path, label.format(name=_name(node, "name", "json_schema", "function")), ""

    return schemas


def _has(node: dict, *path: str) -> bool:
    """Whether a schema-like value sits at this path of keys below the node."""
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return is_schema_like(node)


def _openapi_schemas(node: dict) -> Iterator[tuple]:
    """OpenAPI 3.x / Swagger 2: what a client sends first (parameters, request bodies), then
    responses, then components — a shared `$ref` target is labelled by the first that reaches it."""
    swagger = "swagger" in node
    operations: list[tuple[str, str, dict]] = []
    for path, item in _items(node.get("paths")):
        if isinstance(item, dict):
            yield from _parameters(("paths", path, "parameters"), item.get("parameters"), path, swagger)
            operations.extend(
                (path, method, item[method]) for method in HTTP_METHODS if isinstance(item.get(method), dict)
            )
    for path, method, operation in operations:
        where = f"{method.upper()} {path}"
        yield from _parameters(
            ("paths", path, method, "parameters"), operation.get("parameters"), where, swagger
        )
        body = operation.get("requestBody")
        for media, entry in _items(body.get("content") if isinstance(body, dict) else None):
            if _has(entry, "schema"):
                yield ("paths", path, method, "requestBody", "content", media, "schema"), where, ""
    for path, method, operation in operations:
        where = f"{method.upper()} {path}"
        for status, response in _items(operation.get("responses")):
            if not isinstance(response, dict):
                continue
            label = f"{where} → {status}"
            if swagger and _has(response, "schema"):
                yield ("paths", path, method, "responses", status, "schema"), label, ""
            for media, entry in _items(response.get("content")):
                if _has(entry, "schema"):
                    yield ("paths", path, method, "responses", status, "content", media, "schema"), label, ""
    if swagger:
        for name, schema in _items(node.get("definitions")):
            if is_schema_like(schema):
                yield ("definitions", name), "", name
        yield from _parameters(("parameters",), node.get("parameters"), "", swagger)
        return
    found = node.get("components")
    components: dict = found if isinstance(found, dict) else {}
    for name, schema in _items(components.get("schemas")):
        if is_schema_like(schema):
            yield ("components", "schemas", name), "", name
    yield from _parameters(("components", "parameters"), components.get("parameters"), "", swagger)
    for group in ("requestBodies", "responses"):
        for name, entry in _items(components.get(group)):
            for media, item in _items(entry.get("content") if isinstance(entry, dict) else None):
                if _has(item, "schema"):
                    yield ("components", group, name, "content", media, "schema"), name, ""


def _parameters(base: tuple, params, where: str, swagger: bool):
    for key, param in _items(params):
        if not isinstance(param, dict) or "$ref" in param:
            continue
        name = _str(param.get("name"))
        label = where
        if _has(param, "schema"):
            yield (*base, key, "schema"), label, name
        elif swagger and ("enum" in param or param.get("type") == "boolean"):
            # a Swagger 2 non-body parameter is its own (schema-like) declaration
            yield (*base, key), label, name, "swagger-parameter"


def _items(container):
    if isinstance(container, dict):
        return list(container.items())
    if isinstance(container, list):
        return list(enumerate(container))
    return []


def _openapi_family(node: dict) -> str:
    if "swagger" in node:
        return "swagger-" + str(node.get("swagger"))
    version = str(node.get("openapi"))
    return "openapi-3.0" if version.startswith("3.0") else "openapi-3.1"


def _openapi_dialect(node: dict) -> str:
    family = _openapi_family(node)
    return {"openapi-3.1": "json-schema", "openapi-3.0": "openapi-3.0"}.get(family, "swagger-2.0")


def _gemini_declarations(node: dict):
    for key in ("functionDeclarations", "function_declarations"):
        for index, decl in _items(node.get(key)):
            if not isinstance(decl, dict):
                continue
            label = f"tool {_str(decl.get('name'))}".rstrip()
            for field, dialect in (
                ("parameters", "gemini"),
                ("parametersJsonSchema", "json-schema"),
                ("response", "gemini"),
                ("responseJsonSchema", "json-schema"),
            ):
                if _has(decl, field):
                    suffix = " output" if field.startswith("response") else ""
                    yield (key, index, field), label + suffix, "", dialect


# Type names of the dialects that are no JSON Schema, read off a schema's own root `type`:
# Gemini's OpenAPI subset writes them upper-case; BFCL and other Python-minded function docs
# write Python's (`dict`, `float`, `tuple`, `any`).
GEMINI_TYPES = frozenset(t.upper() for t in JSON_TYPES) | {"TYPE_UNSPECIFIED"}
PYTHON_TYPES = frozenset({"dict", "float", "tuple", "any", "int", "str", "bool", "list", "set"})


def types_dialect(schema: Any, default: str = "json-schema") -> str:
    """The dialect a schema's root `type` gives away ("gemini", "python-types"), else `default`."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str) and kind in GEMINI_TYPES:
        return "gemini"
    if isinstance(kind, str) and kind in PYTHON_TYPES:
        return "python-types"
    return default


def _declaration_dialect(node: dict) -> str:
    return types_dialect(node.get("parameters"))


def _declaration_family(node: dict) -> str:
    return {"gemini": "gemini", "python-types": "python-functions"}.get(_declaration_dialect(node), "openai")


def _gemini_config(node: dict):
    for key, dialect in (
        ("responseSchema", "gemini"),
        ("response_schema", "gemini"),
        ("responseJsonSchema", "json-schema"),
        ("response_json_schema", "json-schema"),
    ):
        if _has(node, key):
            yield (key,), "responseSchema", "", dialect


def _mcp_schemas(node: dict):
    name = _str(node.get("name"))
    if _has(node, "inputSchema"):
        yield ("inputSchema",), f"tool {name}", ""
    if _has(node, "outputSchema"):
        yield ("outputSchema",), f"tool {name} output", ""


def _generic_label(node: dict) -> str:
    for key in ("name", "title", "description", "id"):
        value = node.get(key)
        if isinstance(value, str) and value:
            return value if len(value) <= 60 else value[:57] + "..."
    return ""


def _generic_schema(node: dict):
    yield ("schema",), _generic_label(node), ""


WRAPPERS: tuple[Wrapper, ...] = (
    # OpenAPI 3.0/3.1 and Swagger 2: a whole document; `#` is the document root.
    Wrapper(
        "openapi",
        _openapi_family,
        lambda n, k: (
            isinstance(n.get("paths") or n.get("components") or n.get("definitions"), dict)
            and ("openapi" in n or str(n.get("swagger")) == "2.0")
        ),
        _openapi_schemas,
        _openapi_dialect,
        ref_base="document",
        root_only=True,
    ),
    # OpenAI Chat Completions response_format / json_schema: {"type": "json_schema", "json_schema": {...}}
    Wrapper(
        "openai-response-format",
        "openai",
        lambda n, k: n.get("type") == "json_schema" and _has(n, "json_schema", "schema"),
        _one(("json_schema", "schema"), "response_format {name}"),
    ),
    # OpenAI Responses API text.format: {"type": "json_schema", "name": ..., "schema": {...}}
    Wrapper(
        "openai-text-format",
        "openai",
        lambda n, k: n.get("type") == "json_schema" and _has(n, "schema"),
        _one(("schema",), "text.format {name}"),
    ),
    # OpenAI Chat Completions tool: {"type": "function", "function": {"name", "parameters"}}
    Wrapper(
        "openai-function-tool",
        "openai",
        lambda n, k: n.get("type") == "function" and _has(n, "function", "parameters"),
        _one(("function", "parameters"), "tool {name}"),
    ),
    # OpenAI Responses API tool: {"type": "function", "name": ..., "parameters": {...}}
    Wrapper(
        "openai-responses-tool",
        "openai",
        lambda n, k: n.get("type") == "function" and isinstance(n.get("name"), str) and _has(n, "parameters"),
        _one(("parameters",), "tool {name}"),
    ),
    # Gemini: a Tool's functionDeclarations[] (OpenAPI-subset dialect: "type": "STRING", nullable)
    Wrapper(
        "gemini-function",
        "gemini",
        lambda n, k: isinstance(n.get("functionDeclarations") or n.get("function_declarations"), list),
        _gemini_declarations,
        "gemini",
    ),
    # Gemini generationConfig.responseSchema
    Wrapper(
        "gemini-response-schema",
        "gemini",
        lambda n, k: any(
            _has(n, key)
            for key in ("responseSchema", "response_schema", "responseJsonSchema", "response_json_schema")
        ),
        _gemini_config,
        "gemini",
    ),
    # Anthropic Messages API tool: {"name", "description", "input_schema"}
    Wrapper(
        "anthropic-tool",
        "anthropic",
        lambda n, k: isinstance(n.get("name"), str) and _has(n, "input_schema"),
        _one(("input_schema",), "tool {name}"),
    ),
    # MCP Tool (also inside a tools/list result): {"name", "inputSchema", "outputSchema"?}
    Wrapper(
        "mcp-tool",
        "mcp",
        lambda n, k: isinstance(n.get("name"), str) and (_has(n, "inputSchema") or _has(n, "outputSchema")),
        _mcp_schemas,
    ),
    # OpenAI legacy `functions[]` (and any {"name", "parameters"} function declaration: a bare
    # list of Gemini declarations, told by its upper-case types; BFCL's Python-typed docs)
    Wrapper(
        "openai-function",
        _declaration_family,
        lambda n, k: (
            isinstance(n.get("name"), str)
            and "type" not in n
            and _has(n, "parameters")
            and k != "functionDeclarations"
        ),
        _one(("parameters",), "function {name}"),
        _declaration_dialect,
    ),
    # A named schema: {"name": ..., "schema": {...}} (OpenAI's json_schema object on its own)
    Wrapper(
        "named-schema",
        "schema-wrapper",
        lambda n, k: (
            isinstance(n.get("name"), str) and _has(n, "schema") and not is_preset_fields(n.get("schema"))
        ),
        _one(("schema",), "{name}"),
    ),
    # Any other {"schema": {...}, ...}: test-suite cases {description, schema, tests}, configs
    Wrapper(
        "schema-wrapper",
        "schema-wrapper",
        lambda n, k: _has(n, "schema") and not is_schema_like(n) and not is_preset_fields(n.get("schema")),
        _generic_schema,
    ),
)
# Rows that, at the document root, keep the plain field paths and the format name of old.
ROOT_WRAPPERS = {"openai-response-format", "openai-text-format", "named-schema"}


def _join(pointer: str, path: tuple) -> str:
    return pointer + "".join(f"/{escape_token(str(step))}" for step in path)


def _hits(wrapper: Wrapper, node: dict, pointer: str) -> Iterator[LocatedSchema]:
    family = wrapper.family(node) if callable(wrapper.family) else wrapper.family
    default = wrapper.dialect(node) if callable(wrapper.dialect) else wrapper.dialect
    for entry in wrapper.schemas(node):
        path, label, name = entry[:3]
        dialect: str = entry[3] if len(entry) > 3 else default  # a per-schema override
        target = _join(pointer, path)
        base = "" if wrapper.ref_base == "document" else target
        if pointer == "" and wrapper.kind in ROOT_WRAPPERS:
            family, label = "openai-wrapper", ""
        yield LocatedSchema(target, base, wrapper.kind, family, dialect, label, name)


def locate(data: Any) -> list[LocatedSchema]:
    """Every schema embedded anywhere in the document, in document order."""
    found: list[LocatedSchema] = []
    seen: set[str] = set()

    def add(hit: LocatedSchema) -> None:
        if hit.pointer not in seen and not any(hit.pointer.startswith(p + "/") for p in seen):
            seen.add(hit.pointer)
            found.append(hit)

    def walk(node, pointer: str, key: str, depth: int) -> None:
        if depth > MAX_WALK_DEPTH or pointer in seen:
            return
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{pointer}/{index}", key, depth + 1)
            return
        if not isinstance(node, dict):
            return
        for wrapper in WRAPPERS:
            if not wrapper.root_only and wrapper.test(node, key):
                for hit in _hits(wrapper, node, pointer):
                    add(hit)
        for child_key, value in node.items():
            if isinstance(value, (dict, list)) and child_key not in DATA_KEYS:
                walk(value, f"{pointer}/{escape_token(str(child_key))}", str(child_key), depth + 1)

    walk(data, "", "", 0)
    return found


# --------------------------------------------------------------------------- detection


@dataclass
class Detection:
    format: str  # "json-schema", "openai-wrapper", "openai", "openapi-3.1", "pcd-preset", "decision-request", "unknown", ...
    schemas: list[LocatedSchema]
    requests: list = dataclass_field(default_factory=list)  # decisions.LocatedRequest: decision requests


def detect(data: Any) -> Detection:
    """What the document is: its schemas, or a PCD preset, or nothing pcdlint can lint.

    Order: OpenAPI/Swagger documents and root wrappers; decision requests (auditor.schema.
    decisions); PCD presets; a document that is itself a
    JSON Schema; schemas embedded anywhere (tools, request bodies, test cases).
    """
    roots = _root_schemas(data)
    if roots:
        return Detection(_format_of(roots), roots)
    requests = locate_requests(data)
    if requests:
        return Detection(DECISION_FORMAT, [], requests)
    if looks_like_preset_container(data):
        return Detection("pcd-preset", [])
    if is_schema_like(data):
        return Detection(
            "json-schema", [LocatedSchema("", "", "json-schema", "json-schema", types_dialect(data))]
        )
    embedded = locate(data)
    return Detection(_format_of(embedded), embedded) if embedded else Detection("unknown", [])


def _root_schemas(data) -> list[LocatedSchema]:
    if not isinstance(data, dict):
        return []
    for wrapper in WRAPPERS:
        if (wrapper.root_only or wrapper.kind in ROOT_WRAPPERS) and wrapper.test(data, ""):
            return list(_hits(wrapper, data, ""))
    return []


def _format_of(schemas: list[LocatedSchema]) -> str:
    return "+".join(dict.fromkeys(s.family for s in schemas))


def looks_like_preset_container(node: Any, depth: int = 0) -> bool:
    if depth > 3:
        return False
    if isinstance(node, list):
        return any(looks_like_preset_container(item, depth + 1) for item in node[:50])
    if not isinstance(node, dict):
        return False
    if is_preset_fields(node.get("schema")):
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
        looks_like_preset_container(v, depth + 1) for v in node.values() if isinstance(v, (dict, list))
    )
