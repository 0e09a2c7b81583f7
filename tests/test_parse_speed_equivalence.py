"""The fast paths of parsing and crawling give what the plain definitions give (issue 17).

- positions: an array's elements read off a run of string matches, spans found in bulk (each
  container's children asked for together, as the crawler asks for an enum's options), lines
  and columns by C-level maps, a scalar's end on its start's line — against an eager reference
  scan written here the plain way, on the corpus, on fixtures/, on hand-written edge cases and
  on generated documents in every layout `json.dumps` writes;
- nesting_depth, level by level, against the recursive definition;
- the crawler: `$ref` lookups cached per base URI and registry (not per resolver object), a
  lookup's target pointer read off the ref (the index of every object only where that fails),
  its node taken from the lookup, and the index's pointers.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.schema import refs, sites
from auditor.schema.cache import _model_to_data
from auditor.schema.documents import (
    Document,
    Span,
    escape_token,
    nesting_depth,
    parse_document,
    resolve_pointer,
)
from auditor.schema.positions import JsonPositions
from support import FIXTURES, corpus_files, slow_corpus

JSON_FILES = [p for p in corpus_files() if p.suffix == ".json"] + sorted(FIXTURES.rglob("*.json"))
ALL_FILES = corpus_files() + sorted([*FIXTURES.rglob("*.json"), *FIXTURES.rglob("*.yaml")])

EDGE_CASES = [
    '{"a/b": {"~x": [1, 2.5e3, true, null]}, "": "empty key"}',
    '{\r\n  "crlf": ["x",\r\n  "y"]\r\n}\r\n',
    '{"astral \U0001f600": "\U0001f600\U0001f600", "after": {"k": -0}}',
    '  [ [], {}, [[["deep"]]], "tab\\t\\"quoted\\"" ]  ',
    '{"dup": {"first": 1}, "dup": {"second": 2}}',
    '["a", "b", {"c": ["d"]}, "e", ["f", "g"], "h"]',  # string runs broken by containers
    '["", "\\\\", "\\"", "]", ",", "\\\\\\"", "x\\u0022y", "\\ud83d\\ude00"]',  # escapes, brackets
    '[\n  "one"\n  ,\n  "two" ,"three"\t]',
    '{"e": [], "s": [""], "n": [1, -2.5E-3, NaN, Infinity, -Infinity, true, false, null]}',
    '{"a\\u0062": ["x"], "q\\"": {"r": ["s", "t"]}, "k": "v"}',
    '"just a string"',
    '[["a", "b"], ["c"], []]',
]


# --------------------------------------------------------------------------- the reference

_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]


def reference_entries(text: str) -> dict[str, tuple[int, int, int, int]]:
    """(key start, key end, value start, value end) of every node, by one plain recursive scan."""
    out: dict[str, tuple[int, int, int, int]] = {}

    def value(pos: int, pointer: str, key: tuple[int, int]) -> int:
        start = pos
        if text[pos] == "{":
            pos = _SPACE.match(text, pos + 1).end()
            while text[pos] != "}":
                name, key_end = json.decoder.scanstring(text, pos + 1)
                pos = value(
                    _SPACE.match(text, _SPACE.match(text, key_end).end() + 1).end(),
                    f"{pointer}/{escape_token(name)}",
                    (pos, key_end),
                )
                pos = _SPACE.match(text, pos).end()
                if text[pos] == ",":
                    pos = _SPACE.match(text, pos + 1).end()
            end = pos + 1
        elif text[pos] == "[":
            pos, index = _SPACE.match(text, pos + 1).end(), 0
            while text[pos] != "]":
                pos = _SPACE.match(text, value(pos, f"{pointer}/{index}", (-1, -1))).end()
                index += 1
                if text[pos] == ",":
                    pos = _SPACE.match(text, pos + 1).end()
            end = pos + 1
        else:
            end = _SCALAR(text, pos)[1]
        out[pointer] = (*key, start, end)
        return end

    value(_SPACE.match(text).end(), "", (-1, -1))
    # a repeated key: the last one counts (json.loads), and the first one's nodes are no nodes
    nodes = pointers_of(json.loads(text))
    return {p: entry for p, entry in out.items() if p in nodes}


def pointers_of(data) -> set[str]:
    out, stack = set(), [(data, "")]
    while stack:
        node, pointer = stack.pop()
        out.add(pointer)
        if isinstance(node, dict):
            stack.extend((v, f"{pointer}/{escape_token(k)}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{pointer}/{i}") for i, v in enumerate(node))
    return out


def reference_span(text: str, start: int, end: int) -> Span:
    def at(offset: int) -> tuple[int, int]:
        line = text.count("\n", 0, offset)
        return line + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1

    return Span(*at(start), *at(end))


def children_by_parent(entries) -> dict[str, list[str]]:
    """Each container's child pointers, in document order (as the crawler asks for options)."""
    out: dict[str, list[str]] = {}
    for pointer in entries:
        if pointer:
            out.setdefault(pointer.rsplit("/", 1)[0], []).append(pointer)
    for children in out.values():
        children.sort(key=lambda p: entries[p][2])
    return out


def assert_bulk_spans_are_the_reference(text: str) -> None:
    entries = reference_entries(text)
    document = Document("t.json", None, text, positions=JsonPositions(text))
    for parent, children in children_by_parent(entries).items():
        # a container's children together: an array's take the leading-elements path
        assert document.spans(children) == [reference_span(text, *entries[p][2:]) for p in children], parent
    for pointer, (key_start, key_end, start, end) in entries.items():
        assert document.span(pointer) == reference_span(text, start, end), pointer
        if key_start >= 0:
            assert document.key_span(pointer) == reference_span(text, key_start, key_end), pointer
    assert len(document.value_spans) == len(entries)


# --------------------------------------------------------------------------- positions


@pytest.mark.parametrize("text", EDGE_CASES)
def test_bulk_spans_of_edge_cases_are_the_reference(text):
    json.loads(text)  # valid JSON: what the scanner is ever given
    assert_bulk_spans_are_the_reference(text)


@pytest.mark.parametrize("path", slow_corpus(JSON_FILES))
def test_bulk_spans_of_every_file_are_the_reference(path):
    assert_bulk_spans_are_the_reference(path.read_bytes().decode("utf-8-sig"))


def test_a_partial_or_foreign_list_of_pointers_takes_the_general_path():
    text = '{"a": ["x", "y", "z"], "o": {"0": "zero", "1": "one"}}'
    positions = JsonPositions(text)
    assert positions.leading_elements(["/a/0", "/a/1"]) == ([7, 12], [10, 15])
    for pointers in (
        ["/a/1", "/a/2"],
        ["/a/0", "/a/2"],
        ["/a/0", "/a/1", "/a/2", "/a/3"],
        ["/o/0", "/o/1"],
        ["/a/0"],
        ["/a/00", "/a/1"],
        ["/missing/0", "/missing/1"],
    ):
        assert positions.leading_elements(pointers) is None, pointers
    document = Document("t.json", None, text, positions=JsonPositions(text))
    # past the end: the nearest ancestor's span, as span() gives
    assert document.spans(["/a/0", "/a/1", "/a/2", "/a/3"])[3] == document.span("/a")


def test_line_columns_are_line_column():
    text = '\n\n{\n  "a": ["x",\n"y"]  }\n\n'
    positions = JsonPositions(text)
    offsets = list(range(len(text) + 1))
    lines, columns = positions.line_columns(offsets)
    assert list(zip(lines, columns)) == [positions.line_column(o) for o in offsets]
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    for offset in offsets:
        line = bisect_left(newlines, offset)
        assert positions.line_column(offset) == (
            line + 1,
            offset - (newlines[line - 1] + 1 if line else 0) + 1,
        )


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=6), children, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=_JSON_VALUES,
    indent=st.sampled_from([None, 0, 1, 2, "\t"]),
    ensure_ascii=st.booleans(),
    compact=st.booleans(),
    crlf=st.booleans(),
)
def test_bulk_spans_of_generated_documents_are_the_reference(value, indent, ensure_ascii, compact, crlf):
    separators = (",", ":") if compact else None
    text = json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, separators=separators)
    if crlf:
        text = text.replace("\n", "\r\n")  # (no raw newline inside a string: it is escaped)
    assert_bulk_spans_are_the_reference(text)


def assert_prefetched_tables_are_the_plain_ones(text: str, pointers) -> None:
    """A prefetch scans each container on the way to `pointers` inside its parent's scan: the
    tables it keeps are those a scan of each container alone gives, every pointer's parent has
    one, and every node's span is then the reference."""
    document = Document("t.json", None, text, positions=JsonPositions(text))
    document.prefetch(pointers)
    prefetched = document.positions
    plain = JsonPositions(text)
    for start, members in prefetched._objects.items():
        assert members == plain._scan_object(start)[0], start
    for start, elements in prefetched._arrays.items():
        assert elements == plain._scan_array(start)[0], start
    entries = reference_entries(text)
    for pointer in pointers:
        parent = entries.get(pointer.rpartition("/")[0]) if pointer else None
        if parent is not None and pointer in entries:
            assert parent[2] in prefetched._objects or parent[2] in prefetched._arrays, pointer
    for pointer, (key_start, key_end, start, end) in entries.items():
        assert document.span(pointer) == reference_span(text, start, end), pointer
        if key_start >= 0:
            assert document.key_span(pointer) == reference_span(text, key_start, key_end), pointer


@pytest.mark.parametrize("text", EDGE_CASES)
def test_prefetched_tables_of_edge_cases_are_the_plain_ones(text):
    every = sorted(reference_entries(text))
    for pointers in (every, every[::2], every[1::3], ["/nowhere/0", "/dup/first"], []):
        assert_prefetched_tables_are_the_plain_ones(text, pointers)


@pytest.mark.parametrize("path", slow_corpus(JSON_FILES))
def test_prefetched_tables_of_every_file_are_the_plain_ones(path):
    text = path.read_bytes().decode("utf-8-sig")
    every = sorted(reference_entries(text))
    assert_prefetched_tables_are_the_plain_ones(text, every[::7])


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON_VALUES, indent=st.sampled_from([None, 2]), data=st.data())
def test_prefetched_tables_of_generated_documents_are_the_plain_ones(value, indent, data):
    text = json.dumps(value, indent=indent)
    every = sorted(reference_entries(text))
    chosen = data.draw(st.lists(st.sampled_from(every), unique=True)) if every else []
    assert_prefetched_tables_are_the_plain_ones(text, chosen + ["/not/there"])


# --------------------------------------------------------------------------- nesting depth


def recursive_depth(node) -> int:
    if isinstance(node, dict):
        return 1 + max(map(recursive_depth, node.values()), default=0)
    if isinstance(node, list):
        return 1 + max(map(recursive_depth, node), default=0)
    return 0


@settings(max_examples=300, deadline=None, database=None)
@given(value=_JSON_VALUES)
def test_nesting_depth_is_the_recursive_definition(value):
    assert nesting_depth(value) == recursive_depth(value)


@pytest.mark.parametrize("path", slow_corpus(JSON_FILES))
def test_nesting_depth_of_every_file_is_the_recursive_definition(path):
    data = json.loads(path.read_bytes().decode("utf-8-sig"))
    assert nesting_depth(data) == recursive_depth(data)


# --------------------------------------------------------------------------- the crawler


def load(path):
    return parse_document(path.read_bytes(), path.suffix, path.name)


def model_data(model) -> dict:
    data = _model_to_data(model, keep_data=True)
    data["span_order"] = [list(model.document.value_spans.items()), list(model.document.key_spans.items())]
    data["site_spans"] = [[s.span, s.option_spans] for s in model.sites]
    return data


@pytest.mark.parametrize("path", slow_corpus(ALL_FILES))
def test_lookups_cached_per_base_uri_find_what_lookups_per_resolver_find(path, monkeypatch):
    fast = model_data(sites.analyse(load(path)))
    # the plain definition: a cached lookup only for the very resolver object that made it
    monkeypatch.setattr(refs, "_lookup_context", lambda resolver: (id(resolver),))
    assert model_data(sites.analyse(load(path))) == fast


@pytest.mark.parametrize("path", slow_corpus(ALL_FILES))
def test_the_index_names_each_object_by_the_pointer_that_resolves_to_it(path):
    """What lets a lookup hand over its target node instead of resolving its pointer again."""
    document = load(path)
    crawler = sites.JsonSchemaCrawler(document, sites.FileModel(document, "test"))
    index = crawler.refs.index()
    objects = []
    stack = [document.data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            objects.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    assert len(index) == len(objects)
    for node in objects:
        assert resolve_pointer(document.data, index[id(node)]) is node


# The same `$ref` text meaning different nodes under different base URIs (nested `$id`s),
# anchors, a relative `$id`, and refs that resolve nowhere or outside the document.
REF_CASES = {
    "nested-ids": {
        "$id": "urn:root",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/kind"},
            "b": {
                "$id": "urn:inner",
                "$defs": {"kind": {"enum": ["p", "q"]}},
                "properties": {"c": {"$ref": "#/$defs/kind"}, "d": {"$ref": "urn:root#/$defs/kind"}},
            },
        },
        "$defs": {"kind": {"enum": ["x", "y"]}},
    },
    "anchors-and-relative-ids": {
        "$id": "https://example.com/root.json",
        "properties": {
            "a": {"$ref": "#pick"},
            "b": {"$ref": "inner.json#/$defs/k"},
            "c": {"$ref": "inner.json"},
            "d": {"$ref": "https://elsewhere.example/x.json"},
            "e": {"$ref": "#/$defs/missing"},
            "f": {"oneOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}]},
            "g": {"anyOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}]},
        },
        "$defs": {
            "pick": {"$anchor": "pick", "enum": ["one", "two"]},
            "inner": {"$id": "inner.json", "enum": ["m", "n"], "$defs": {"k": {"enum": ["k1", "k2"]}}},
            "cat": {"properties": {"kind": {"const": "cat"}}},
            "dog": {"properties": {"kind": {"const": "dog"}}},
        },
    },
    "pointers": {  # (x-data: no keyword, so no subresource; its array is no schema)
        "properties": {
            "a": {"$ref": "#/$defs/a%20b"},
            "b": {"$ref": "#/$defs/c~1d"},
            "c": {"$ref": "#/x-data/arr/1"},
            "d": {"$ref": "#/x-data/arr/01"},
            "e": {"$ref": "#/x-data/arr"},
            "f": {"$ref": "#/x-data/arr/-1"},
            "g": {"$ref": "#/$defs/t~0"},
            "h": {"$ref": "#/x-data/arr/1/enum"},
            "i": {"$ref": "#"},
            "j": {"oneOf": [{"$ref": "#/x-data/arr/0"}, {"$ref": "#/x-data/arr/1"}]},
        },
        "$defs": {"a b": {"enum": ["s", "t"]}, "c/d": {"enum": ["u", "v"]}, "t~": {"type": "boolean"}},
        "x-data": {
            "arr": [{"properties": {"k": {"const": 1}}}, {"properties": {"k": {"const": 2}}, "enum": [3, 4]}]
        },
    },
}


def ref_case(tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(REF_CASES[name], indent=2))
    return path


@pytest.mark.parametrize("name", REF_CASES)
def test_lookups_cached_per_base_uri_in_schemas_with_ids_and_anchors(name, tmp_path, monkeypatch):
    path = ref_case(tmp_path, name)
    fast = model_data(sites.analyse(load(path)))
    monkeypatch.setattr(refs, "_lookup_context", lambda resolver: (id(resolver),))
    assert model_data(sites.analyse(load(path))) == fast


@pytest.mark.parametrize("path", [*slow_corpus(ALL_FILES), *REF_CASES])
def test_a_ref_target_read_off_the_ref_is_the_one_the_index_names(path, tmp_path, monkeypatch):
    path = ref_case(tmp_path, path) if isinstance(path, str) else path
    fast = model_data(sites.analyse(load(path)))
    # the plain definition: every target looked up in the index of every object
    monkeypatch.setattr(
        refs.References, "target_pointer", lambda self, ref, target: self.index().get(id(target))
    )
    assert model_data(sites.analyse(load(path))) == fast


@pytest.mark.parametrize("path", [*slow_corpus(ALL_FILES), *REF_CASES])
def test_a_registry_left_uncrawled_gives_the_models_a_crawled_one_gives(path, tmp_path, monkeypatch):
    """crawl_needed decides only speed: with no crawl before the lookups (a lookup that misses
    crawls then), even where ids, anchors and URIs need one, the models are the same."""
    path = ref_case(tmp_path, path) if isinstance(path, str) else path
    monkeypatch.setattr(refs, "crawl_needed", lambda text, node: True)
    crawled = model_data(sites.analyse(load(path)))
    monkeypatch.setattr(refs, "crawl_needed", lambda text, node: False)
    assert model_data(sites.analyse(load(path))) == crawled


def test_a_registry_is_crawled_first_where_lookups_would_miss():
    def needed(schema) -> bool:
        return sites.crawl_needed(json.dumps(schema), schema)

    assert not needed({"$id": "urn:x", "properties": {"a": {"$ref": "#/$defs/b"}}, "$defs": {"b": {}}})
    assert not needed({"properties": {"id": {"type": "string"}}})  # a property named id (2020-12)
    assert needed({"$id": "urn:x", "$defs": {"b": {"$id": "urn:y"}}})  # an embedded resource
    assert needed({"$defs": {"b": {"$anchor": "b"}}})
    assert needed({"properties": {"a": {"$ref": "#b"}}})
    assert needed({"properties": {"a": {"$ref": "other.json#/x"}}})
    assert needed({"properties": {"a": {"$ref": "#"}}})
    assert needed(
        {"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"id": {"id": "urn:z"}}}
    )
    # a key written with escapes (`"\\u0024id"` is `"$id"`): the text does not show it
    assert sites.crawl_needed(r'{"$defs": {"b": {"\u0024id": "urn:y"}}}', {"$defs": {"b": {"$id": "urn:y"}}})


def test_the_lookup_context_is_what_a_lookup_depends_on():
    """A lookup's result depends on the resolver's base URI and registry, not on the URIs it was
    reached through; `referencing` names them `_base_uri` and `_registry`."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    schema = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}}
    resolver = (
        Registry()
        .with_resource("urn:t", Resource.from_contents(schema, default_specification=DRAFT202012))
        .crawl()
        .resolver(base_uri="urn:t")
    )
    first = resolver.lookup("#/$defs/a")
    second = first.resolver.lookup("#/$defs/b")
    assert (
        sites._lookup_context(first.resolver)
        == sites._lookup_context(resolver)
        == ("urn:t", id(resolver._registry))
    )
    assert second.contents is resolver.lookup("#/$defs/b").contents is schema["$defs"]["b"]


def test_the_crawl_never_descends_into_definitions_or_values():
    """_visit builds a child's pointer only for keywords of the subschema tables: none of them
    is one it skips (definitions are visited on their own; the others hold values)."""
    tables = {*sites.SINGLE_SUBSCHEMA, *sites.LIST_SUBSCHEMAS, *sites.MAP_SUBSCHEMAS}
    assert tables == sites.SUBSCHEMA_KEYWORDS  # what _visit looks at before the tables
    assert not tables & {*sites.DEFINITION_KEYWORDS, "enum", "const", "examples", "default"}
