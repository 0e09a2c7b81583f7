"""The fast JSON writer (auditor.reporting.json_text) writes exactly what the pure-Python
`json.dumps(strict_json(v), indent=2, ensure_ascii=False, allow_nan=False)` writes.

Values are generated with hypothesis, heavy in what could throw the re-indentation off: strings
made of brackets, braces, commas, quotes, backslashes (runs of them before a quote), control
characters, lone surrogates and non-ASCII text; empty and nested empty containers; non-finite
floats (written as strings by `strict_json`); non-string keys. The whole-corpus report is
compared byte for byte in tests/test_bulk_parity.py.

`orjson` writes the document where its bytes are the same; elsewhere (`_orjson_text` gives
None) the C encoder and the re-indentation do. Both paths are checked against the reference.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.reporting import json_text
from auditor.reporting.escape import strict_json

TRICKY = '[]{},:" \\\n\t\x00\x1f\x7fé€\U0001f600\u2028\ud800\udcff'
texts = st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
)
keys = (
    texts | st.integers(-5, 5) | st.booleans() | st.none() | st.floats(allow_nan=False, allow_infinity=False)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(keys, inner, max_size=4)
    ),
    max_leaves=40,
)


def reference(value) -> str:
    return json.dumps(strict_json(value), indent=2, ensure_ascii=False, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(values)
def test_reindent_equals_pure_python_encoder(value):
    compact = json.dumps(strict_json(value), ensure_ascii=False, allow_nan=False, separators=(",", ": "))
    assert json_text.reindent(compact) == reference(value)


@settings(max_examples=400, deadline=None)
@given(values)
def test_orjson_path_writes_the_reference_or_steps_aside(value):
    text = json_text._orjson_text(value)
    assert text is None or text == reference(value)


# what orjson writes as json.dumps does: strings (control characters, non-ASCII, no surrogates),
# integers within 64 bits, floats of 1e-4 and more (or zero), string keys
plain_texts = st.text(
    alphabet=st.sampled_from(TRICKY.replace("\ud800\udcff", ""))
    | st.characters(blacklist_categories=("Cs",)),
    max_size=12,
)
plain_floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f == 0 or abs(f) >= 1e-4)
plain = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | plain_floats | plain_texts,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(plain_texts, inner, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(plain)
def test_orjson_path_is_taken_where_its_bytes_agree(value):
    assert json_text._orjson_text(value) == reference(value)


@pytest.mark.parametrize("text", ["0.00001", " 0.0000", "1e-9", "-1e-5", "x 0.00009 y"])
def test_a_string_that_looks_like_a_small_float_keeps_the_orjson_path(text):
    """Only float values step aside, never string text that reads like one."""
    document = {"findings": [{"message": text, "data": {"options": [text, 0.5, 0.0, -0.0, 1e-4]}}]}
    assert json_text._orjson_text(document) == reference(document)


@pytest.mark.parametrize(
    "value",
    [math.nan, -math.inf, 1e-05, -3.5e-07, 2**64, "\ud800", {1: "a"}],
    ids=["nan", "-inf", "1e-05", "-3.5e-07", "2**64", "surrogate", "int-key"],
)
def test_what_orjson_would_write_differently_goes_the_other_way(value):
    document = {"findings": [{"data": [value]}]}
    assert json_text._orjson_text(document) is None
    assert json_text.dumps_strict(document) == reference(document)


@pytest.mark.parametrize("value", [1e-05, -7.5e-09, [2e-06], {"p": -3e-07}])
def test_a_small_float_anywhere_goes_the_other_way(value):
    """At the top level, in a list, after a key: the forms orjson and repr disagree on."""
    assert json_text._orjson_text(value) is None
    assert json_text.dumps_strict(value) == reference(value)


def test_nesting_beyond_orjson_depth_falls_back():
    document: list = []
    for _ in range(300):
        document = [document]
    assert json_text._orjson_text(document) is None
    assert json_text.dumps_strict(document) == reference(document)


@settings(max_examples=200, deadline=None)
@given(values)
def test_dumps_strict_equals_reference_on_both_paths(value):
    expected = reference(value)
    assert json_text.dumps_strict(value) == expected  # orjson, or small: json.dumps itself
    assert json_text.dumps_strict(value, newline=True) == expected + "\n"
    saved_orjson = json_text._orjson_text
    json_text._orjson_text = lambda value, checked=frozenset(), newline=False: None  # the C encoder's paths
    try:
        assert json_text.dumps_strict(value) == expected
        assert json_text.dumps_strict(value, newline=True) == expected + "\n"
    finally:
        json_text._orjson_text = saved_orjson
    saved = json_text.REINDENT_MIN_CHARS
    json_text.REINDENT_MIN_CHARS = 0  # force the numpy path
    try:
        assert json_text.dumps_strict(value) == expected
    finally:
        json_text.REINDENT_MIN_CHARS = saved


def test_large_document_takes_the_reindent_path_and_matches():
    """Above the size threshold (numpy path), with deep nesting, empties and escapes at depth."""
    row = {
        "option": 'a"]},[{\\',
        "token_ids": list(range(30)),
        "pieces": ["\\", '\\"', "[", "}"],
        "empty": [],
        "nested": [[], {}, [[{}]], {"k": {"": []}}],
        "x": math.inf,
        "y": -0.0,
    }
    document = {
        "findings": [dict(row, n=i, deep=[[[[[[i]]]]]]) for i in range(3000)],
        "nan": math.nan,
        "summary": {},
    }
    compact = json.dumps(strict_json(document), ensure_ascii=False, separators=(",", ": "))
    assert len(compact) > json_text.REINDENT_MIN_CHARS
    assert json_text._orjson_text(document) is None  # infinities: the numpy path
    assert json_text.dumps_strict(document) == reference(document)
    finite = strict_json(document)
    assert json_text._orjson_text(finite) == reference(finite)


def test_without_orjson_the_c_encoder_path_writes_the_same(monkeypatch):
    import sys

    document = {"findings": [{"data": ["a", 1, 2.5, None, True]}], "summary": {}}
    expected = reference(document)
    assert json_text._orjson_text(document) == expected
    monkeypatch.setitem(sys.modules, "orjson", None)  # `import orjson` raises ImportError
    assert json_text._orjson_text(document) is None
    assert json_text.dumps_strict(document) == expected


@settings(max_examples=200, deadline=None)
@given(values)
def test_the_bytes_written_are_the_text_encoded_on_both_paths(value):
    """dumps_strict_bytes (what --format json/sarif write) is the text with its newline, encoded
    as the output writer encodes text (a lone surrogate as a backslash escape), whether orjson
    writes the bytes or the text is made and encoded."""
    expected = (reference(value) + "\n").encode("utf-8", "backslashreplace")
    assert json_text.dumps_strict_bytes(value) == expected
    saved = json_text.orjson_bytes
    json_text.orjson_bytes = lambda value, checked=frozenset(), newline=False: None
    try:
        assert json_text.dumps_strict_bytes(value) == expected
    finally:
        json_text.orjson_bytes = saved
