"""A cached analysis is the same model as a fresh one: every field the crawler fills survives
the JSON cache (a warm run once lost `files[].schemas` and array depths)."""

from __future__ import annotations

import dataclasses

import pytest

from auditor.schema.cache import analyse_file
from support import FIXTURES

INPUTS = sorted((FIXTURES / "inputs").glob("*")) + sorted((FIXTURES / "schemas").glob("*"))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_cached_model_equals_fresh_model(path, tmp_path, monkeypatch):
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path))
    fresh = analyse_file(path, str(path), use_cache=False)
    analyse_file(path, str(path), use_cache=True)  # cold: stores the entry
    warm = analyse_file(path, str(path), use_cache=True)  # warm: read back from JSON
    assert any(tmp_path.rglob("*")), "nothing was cached"
    assert warm.schemas == fresh.schemas
    assert [dataclasses.asdict(s) for s in warm.sites] == [dataclasses.asdict(s) for s in fresh.sites]
    assert warm.format == fresh.format and warm.suppressions == fresh.suppressions
    # the text comes from the file's bytes, a JSON value is parsed again when read: the same
    assert warm.document.text == fresh.document.text and warm.document.data == fresh.document.data
    assert warm.document.value_spans == fresh.document.value_spans
    assert warm.document.key_spans == fresh.document.key_spans


def test_a_deep_file_read_back_from_the_cache_gives_its_value(tmp_path, monkeypatch):
    """A cached JSON file's value is parsed again when read: as deep as the analysis allowed,
    not within the caller's recursion limit (1,402 levels under max-depth 2,000)."""
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    text = '{"type": "string", "enum": ["a", "b"]}'
    for _ in range(700):
        text = '{"type": "object", "properties": {"n": ' + text + "}}"
    path = tmp_path / "deep.json"
    path.write_text(text)
    analyse_file(path, str(path), max_depth=2000)  # cold: stores the entry
    warm = analyse_file(path, str(path), max_depth=2000)
    assert warm.document._data is ...  # not parsed until read
    node, depth = warm.document.data, 0
    while "properties" in node:
        node, depth = node["properties"]["n"], depth + 1
    assert depth == 700 and node["enum"] == ["a", "b"] and len(warm.sites) == 1
