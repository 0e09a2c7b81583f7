"""The JSON Schema crawler: every enum-like field of the schemas the locator found in a
document (auditor.schema.locate), each reported once at its declaration node however many
`$ref`s (auditor.schema.refs) reach it; open unions recorded, not sites.
"""

from __future__ import annotations

import json
from functools import partial
from itertools import repeat
from typing import Any

from auditor.schema.documents import Document, Span, escape_token, resolve_pointer
from auditor.schema.locate import LocatedSchema
from auditor.schema.metaschema import meta_schema_errors
from auditor.schema.model import SUPPRESS_KEY, FileModel, OpenField, SchemaProblem, Site, suppressions_of
from auditor.schema.prose import prose_choices
from auditor.schema.refs import References

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

Options = tuple[list, list[str], str]  # a site's options, their pointers, its kind


class JsonSchemaCrawler:
    """One crawl over every located schema of a document, so a node many schemas reach (an
    OpenAPI component, a shared `$defs` entry) is one site, labelled by the first that reaches it."""

    def __init__(self, document: Document, model: FileModel) -> None:
        self.document, self.model = document, model
        self.visited: set[str] = set()
        self.site_pointers: set[str] = set()
        self.located = LocatedSchema("", "", "json-schema", "json-schema")
        self.refs = References(document, model)  # `$ref` lookups (auditor.schema.refs)
        self._pins_at: dict[str, dict[str, tuple[object, str]]] = {}  # pointer → _pins() there

    def run(self, located: list[LocatedSchema]) -> None:
        for schema_at in located:
            self.located = self.refs.located = schema_at
            schema = resolve_pointer(self.document.data, schema_at.pointer)
            self._validate_meta_schema(schema, schema_at)
            resolver = self.refs.resolver_for(schema_at.base)
            suppressed, holders = self._inherited(schema_at.pointer)
            self._visit(schema, schema_at.pointer, "", schema_at.name, resolver, suppressed, holders)
            # Definitions no property reaches are still declarations worth linting.
            self._visit_definitions(schema, schema_at.pointer, resolver)

    # -- setup

    def _inherited(self, pointer: str) -> tuple[frozenset[str], tuple[str, ...]]:
        """Suppressions on the wrappers above an embedded schema (a tool, an operation)."""
        suppressed: frozenset[str] = frozenset()
        holders: tuple[str, ...] = ()
        node: Any = self.document.data
        here = ""
        for token in pointer.split("/")[1:] if pointer else []:
            own = suppressions_of(node)
            if own:
                self.model.suppressions[here] = own
                suppressed, holders = suppressed | own, holders + (here,)
            key = token.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
            here = f"{here}/{token}"
        return suppressed, holders

    def _validate_meta_schema(self, schema: Any, located: LocatedSchema) -> None:
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

    # -- traversal

    def _visit(
        self,
        node: Any,
        pointer: str,
        field_path: str,
        name: str,
        resolver: Any,
        suppressed: frozenset[str],
        holders: tuple[str, ...],
    ) -> None:
        if not isinstance(node, dict) or pointer in self.visited:
            return
        self.visited.add(pointer)
        own = suppressions_of(node) if SUPPRESS_KEY in node else None
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
            target = self.refs.resolve(ref, resolver)
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

    def _open_union(self, node: dict, pointer: str, field_path: str, name: str, resolver: Any) -> None:
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
                target, _ = self.refs.deref(branch, at, resolver)
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

    def _visit_definitions(self, node: Any, pointer: str, resolver: Any) -> None:
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

    def _collect_site(
        self,
        node: dict,
        pointer: str,
        field_path: str,
        name: str,
        suppressed: frozenset[str],
        holders: tuple[str, ...],
        resolver: Any,
    ) -> None:
        # (each finder asks for its keywords: a node with none of them is no site, unasked)
        union = "oneOf" in node or "anyOf" in node
        found = (
            (self._enum_options(node, pointer) if "enum" in node else None)
            or (self._union_options(node, pointer) if union else None)
            or (self._boolean_options(node, pointer) if "type" in node else None)
            or (self._prose_options(node, pointer) if "description" in node else None)
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
        if kind == "prose":  # (a finding says where the set was read)
            field_name = f"{field_name} (values read from its description)"
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
        (self.model.prose_sites if kind == "prose" else self.model.sites).append(site)

    @staticmethod
    def _prose_options(node: dict, pointer: str) -> Options | None:
        """A string field whose description lists its values (auditor.schema.prose)."""
        if node.get("type", "string") != "string" or "enum" in node or "const" in node:
            return None
        values = prose_choices(node.get("description"))
        if values is None:
            return None
        return list(values), [f"{pointer}/description"] * len(values), "prose"

    @staticmethod
    def _enum_options(node: dict, pointer: str) -> Options | None:
        enum = node.get("enum")
        if not isinstance(enum, list):
            return None
        options, pointers = list(enum), [f"{pointer}/enum/{i}" for i in range(len(enum))]
        if node.get("nullable") is True and None not in options:
            # OpenAPI 3.0 / Gemini: `nullable: true` adds null to the values the model may pick
            return [*options, None], [*pointers, f"{pointer}/nullable"], "nullable-enum"
        return options, pointers, "enum"

    def _union_options(self, node: dict, pointer: str) -> Options | None:
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
    def _boolean_options(node: dict, pointer: str) -> Options | None:
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

    def _discriminator(self, node: dict, pointer: str, resolver: Any) -> tuple[str, list, list[str]] | None:
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

    def _pins(self, branch: Any, pointer: str, resolver: Any) -> dict[str, tuple[object, str]]:
        """property → (value, pointer of the value) for properties this branch (at pointer) fixes
        to one value."""
        node, pointer = self.refs.deref(branch, pointer, resolver)
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


def _array_depth(field_path: str) -> int:
    depth = 0
    while field_path.endswith("[]"):
        depth, field_path = depth + 1, field_path[:-2]
    return depth


def _const_branch(branch: Any) -> bool:
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


def _takes_any_string(branch: Any) -> bool:
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
