"""JSON source positions found on demand (auditor.schema.positions) are the ones main reported.

Two references: `json-source-map`, which main used to map every node (every node of every JSON
file of the corpus and fixtures/ must get the same value and key span), and the positions of
every site main reported, recorded in tests/golden/positions_main.json before the change (the
findings recorded there are checked by tests/test_lint_pool.py, which lints the corpus).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.schema.cache import analyse_file
from auditor.schema.documents import Span, escape_token, parse_document
from auditor.schema.positions import JsonPositions
from support import CORPUS, FIXTURES, NO_CORPUS, REPO, corpus_files, slow_corpus

json_source_map = pytest.importorskip("json_source_map")

GOLDEN = json.loads((REPO / "tests" / "golden" / "positions_main.json").read_text(encoding="utf-8"))
JSON_FILES = [p for p in corpus_files() if p.suffix == ".json"] + sorted(FIXTURES.rglob("*.json"))


def golden_name(path: Path) -> str:
    return (
        f"corpus/{path.relative_to(CORPUS)}" if path.is_relative_to(CORPUS) else str(path.relative_to(REPO))
    )


def reference_spans(text: str, data) -> dict[str, tuple[Span, Span | None]]:
    """Every node's (value span, key span) by json-source-map, keyed by RFC 6901 pointer."""
    entries = json_source_map.calculate(text)
    out: dict[str, tuple[Span, Span | None]] = {}
    stack = [(data, "", "")]
    while stack:
        node, raw, pointer = stack.pop()
        entry = entries[raw]  # KeyError: a node json-source-map did not map
        value = Span(
            entry.value_start.line + 1,
            entry.value_start.column + 1,
            entry.value_end.line + 1,
            entry.value_end.column + 1,
        )
        key = (
            None
            if entry.key_start is None
            else Span(
                entry.key_start.line + 1,
                entry.key_start.column + 1,
                entry.key_end.line + 1,
                entry.key_end.column + 1,
            )
        )
        out[pointer] = (value, key)
        if isinstance(node, dict):
            stack.extend((v, f"{raw}/{k}", f"{pointer}/{escape_token(k)}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{raw}/{i}", f"{pointer}/{i}") for i, v in enumerate(node))
    return out


def scanned_spans(text: str, pointer: str) -> tuple[Span, Span | None] | None:
    positions = JsonPositions(text)
    entry = positions.locate(pointer)
    if entry is None:
        return None
    at = positions.line_column
    key = Span(*at(entry[0]), *at(entry[1])) if entry[0] >= 0 else None
    return Span(*at(entry[2]), *at(entry[3])), key


@pytest.mark.parametrize("path", slow_corpus(JSON_FILES))
def test_every_node_has_the_span_json_source_map_gave(path):
    text = path.read_bytes().decode("utf-8-sig")
    data = json.loads(text)
    expected = reference_spans(text, data)
    document = parse_document(path.read_bytes(), ".json", path.name)
    mismatched = []
    for pointer, (value, key) in expected.items():
        if document.span(pointer) != value or document.key_spans.get(pointer) != key:
            mismatched.append((pointer, value, key, document.span(pointer), document.key_spans.get(pointer)))
    assert not mismatched, mismatched[:5]
    assert len(document.value_spans) == len(expected)


@pytest.mark.parametrize(
    "path", [p for p in JSON_FILES if golden_name(p) in GOLDEN["sites"]], ids=lambda p: p.name
)
def test_site_positions_are_mains(path):
    model = analyse_file(path, str(path), use_cache=False)
    found = [[s.pointer, s.span.line, s.span.column] for s in model.sites]
    assert found == GOLDEN["sites"][golden_name(path)]


def test_the_golden_record_covers_the_corpus():
    if not corpus_files():
        pytest.skip(NO_CORPUS)
    recorded = {name for name in GOLDEN["sites"] if name.startswith("corpus/")}
    assert len(recorded) == len([p for p in corpus_files() if p.suffix == ".json"]) == 36


EDGE_CASES = [
    '{"a/b": {"~x": [1, 2.5e3, true, null]}, "": "empty key"}',
    '\ufeff{\r\n  "crlf": ["x",\r\n  "y"]\r\n}\r\n',  # BOM stripped; \r counts as a column
    '{"astral \U0001f600": "\U0001f600\U0001f600", "after": {"k": -0}}',  # columns in code points
    '  [ [], {}, [[["deep"]]], "tab\\t\\"quoted\\"" ]  ',
    '{"dup": {"first": 1}, "dup": {"second": 2}}',  # the last one counts, as in json.loads
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_match_json_source_map(text):
    text = text.removeprefix("\ufeff")
    expected = reference_spans(text, json.loads(text))
    for pointer, spans in expected.items():
        assert scanned_spans(text, pointer) == spans, pointer


def test_missing_and_malformed_pointers_have_no_node():
    text = '{"a": [10, 20], "b": {"c": 1}}'
    for pointer in ("/a/2", "/a/01", "/a/-", "/a/x", "/b/d", "/b/c/0", "a", "/missing/deeper"):
        assert scanned_spans(text, pointer) is None, pointer
    document = parse_document(text.encode(), ".json", "t.json")
    assert document.span("/b/d") == document.span("/b")  # the nearest ancestor, as before


def test_an_escaped_key_is_found_under_the_key_it_decodes_to():
    # json-source-map keyed this node by its source text (`/a\u0062`), so it had no position.
    text = '{\n "a\\u0062": {"x": 1},\n "q\\"": 2}'
    assert scanned_spans(text, "/ab/x") == (Span(2, 19, 2, 20), Span(2, 14, 2, 17))
    assert scanned_spans(text, "/ab") == (Span(2, 13, 2, 21), Span(2, 2, 2, 11))
    assert scanned_spans(text, '/q"') == (Span(3, 9, 3, 10), Span(3, 2, 3, 7))


def test_settled_spans_are_all_a_document_keeps(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "color": {"type": "string", "enum": ["red", "green", "blue"]},
                    "unused": {"type": "object", "properties": {"n": {"type": "integer"}}},
                },
            },
            indent=2,
        )
    )
    model = analyse_file(path, "s.json", use_cache=False)
    document = model.document
    assert document.positions is None
    assert "/properties/color/enum/2" in document.value_spans
    assert "/properties/unused/properties/n" not in document.value_spans
    # after settling, an unknown pointer falls back to its nearest kept ancestor
    assert document.span("/properties/unused/properties/n") == document.span("/properties")
