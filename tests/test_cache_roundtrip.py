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
