"""`$ref` resolution for the JSON Schema crawler: one `referencing` resolver per schema base,
each lookup cached per base URI, and the pointer of every target (read off the ref, or found
in an index of the document's objects). Unresolvable local refs become schema problems;
remote ones are recorded, not followed.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from typing import Any
from urllib.parse import unquote

from auditor.schema.documents import Document, escape_token, resolve_pointer
from auditor.schema.locate import LocatedSchema
from auditor.schema.model import FileModel, SchemaProblem
from auditor.schema.positions import ARRAY_INDEX

# (a target's pointer, the resolver to follow its own refs with, the target node)
Target = tuple[str, Any, Any]


class References:
    """The `$ref`s of one document's crawl: resolvers, cached lookups and the object index."""

    def __init__(self, document: Document, model: FileModel) -> None:
        self.document, self.model = document, model
        # the schema being crawled: its base (where `#/…` refs start) and where problems point
        self.located = LocatedSchema("", "", "json-schema", "json-schema")
        # id of every object of the document → its pointer: built on first need (target_pointer)
        self.pointer_of: dict[int, str] | None = None
        # (a resolver's context, ref) → (that resolver, kept alive so the ids in its context
        # stay its own; the resolved target): a `$ref` to a shared definition is looked up once
        # per base URI, however many resolvers (one per lookup) reach it
        self._resolved: dict[tuple[tuple, str], tuple[Any, Target]] = {}
        self._resolvers: dict[str, Any] = {}  # base pointer → its resolver

    def resolver_for(self, base: str) -> Any:
        """The resolver of the schema resource at pointer `base` (made once; None if it cannot
        be made). OpenAPI: every schema's base is the root."""
        if base not in self._resolvers:
            self._resolvers[base] = self._make_resolver(resolve_pointer(self.document.data, base))
        return self._resolvers[base]

    def _make_resolver(self, base_node: Any) -> Any:
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

    def index(self) -> dict[int, str]:
        """pointer_of, built now if it is not yet."""
        if self.pointer_of is None:
            self.pointer_of = {}
            if isinstance(self.document.data, (dict, list)):
                self._index(self.document.data, "")
        return self.pointer_of

    def _index(self, node: Any, pointer: str) -> None:
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

    def resolve(self, ref: str, resolver: Any) -> Target | None:
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
        pointer = self.target_pointer(ref, resolved.contents)
        if pointer is None:
            # Resolved into something we did not index (another document): not followed.
            if ref not in self.model.remote_refs:
                self.model.remote_refs.append(ref)
            return None
        target = pointer, resolved.resolver, resolved.contents  # the node at pointer (_index)
        self._resolved[key] = (resolver, target)
        return target

    def target_pointer(self, ref: str, target: Any) -> str | None:
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

    def deref(self, node: Any, pointer: str, resolver: Any, depth: int = 0) -> tuple[Any, str]:
        """(node, pointer) after following local `$ref`s from the node at pointer."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 8:
            target = self.resolve(node["$ref"], resolver)
            if target is None:
                return node, pointer
            pointer, resolver, node = target
            depth += 1
        return node, pointer


# A `$ref` that is not a JSON pointer into its own document (`#/…`): an anchor, a URI.
_OTHER_REF = re.compile(r'"\$ref"\s*:\s*"(?!#/)')
_ANCHORS = ('"$anchor"', '"$dynamicAnchor"', '"$recursiveAnchor"')


def crawl_needed(text: str, base_node: Any) -> bool:
    """Whether `$ref` lookups in a JSON document may need its registry crawled (every embedded
    resource and anchor indexed) before the first one. Not when its refs are all JSON pointers
    (`#/$defs/a`) and no subschema names itself (`$id`, or `id` in drafts 3 and 4) or an anchor:
    each lookup then finds the one resource the registry holds, which is most of the corpus
    (docs/benchmarks.md has the figure). A key written with `\\u` escapes
    hides from this reading of the text: such a document is crawled. This decides only speed: a
    lookup that misses crawls the registry then (`referencing`);
    tests/test_parse_speed_equivalence.py compares the models."""
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


def _lookup_context(resolver: Any) -> tuple:
    """What `resolver.lookup(ref)` depends on: the resolver's base URI and registry. Not the
    URIs it was reached through (`_previous`: only `$dynamicRef` reads them), which differ from
    one resolver to the next; each lookup returns a new resolver. The resolver itself where
    `referencing` names its fields otherwise."""
    try:
        return resolver._base_uri, id(resolver._registry)
    except AttributeError:
        return (id(resolver),)
