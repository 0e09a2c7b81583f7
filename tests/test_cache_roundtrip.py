"""A cached analysis is the same model as a fresh one: every field the crawler fills survives
the JSON cache (a warm run once lost `files[].schemas` and array depths)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from auditor.schema.cache import analyse_file
from support import FIXTURES, NO_CORPUS

INPUTS = sorted((FIXTURES / "inputs").glob("*")) + sorted((FIXTURES / "schemas").glob("*"))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_cached_model_equals_fresh_model(path, tmp_path, monkeypatch):
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path))
    fresh = analyse_file(path, str(path), use_cache=False)
    analyse_file(path, str(path), use_cache=True)  # cold: stores the entry
    warm = analyse_file(path, str(path), use_cache=True)  # warm: read back from JSON
    assert any(tmp_path.rglob("*")), "nothing was cached"
    # spans are made where first read (a pool's parent reads the models and mostly never them)
    assert "value_spans" not in warm.document.__dict__ and "key_spans" not in warm.document.__dict__
    assert not any("option_spans" in s.__dict__ for s in warm.sites)
    assert warm.schemas == fresh.schemas
    assert [dataclasses.asdict(s) for s in warm.sites] == [dataclasses.asdict(s) for s in fresh.sites]
    assert warm.format == fresh.format and warm.suppressions == fresh.suppressions
    # the text comes from the file's bytes, a JSON value is parsed again when read: the same
    assert warm.document.text == fresh.document.text and warm.document.data == fresh.document.data
    assert warm.document.value_spans == fresh.document.value_spans
    assert warm.document.key_spans == fresh.document.key_spans
    # read back once more, an option's span read first (before its document's spans)
    again = analyse_file(path, str(path), use_cache=True)
    assert [s.option_spans for s in again.sites] == [s.option_spans for s in fresh.sites]
    assert again.document.value_spans == fresh.document.value_spans


def test_option_spans_read_back_without_the_documents_span_map(tmp_path, monkeypatch):
    """A finding at an option reads its site's option spans: an enum's options are listed one
    after another in the entry's value spans, so only theirs are made, not the file's map."""
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "schema.json"
    schema = {
        "type": "object",
        "properties": {"a": {"enum": ["x", "y", "z"]}, "b": {"enum": [1, True, None]}},
    }
    path.write_text(json.dumps(schema, indent=2))
    fresh = analyse_file(path, str(path), use_cache=False)
    analyse_file(path, str(path), use_cache=True)  # cold: stores the entry
    warm = analyse_file(path, str(path), use_cache=True)
    assert [s.option_spans for s in warm.sites] == [s.option_spans for s in fresh.sites]
    assert len(warm.sites) == 2 and not warm.document.made("value_spans")


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


def test_a_cache_hit_is_read_without_the_deep_stack_thread(tmp_path, monkeypatch):
    """A warm run reads each entry in the caller's thread: no analysis thread per file."""
    from auditor.schema import cache

    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path))
    path = FIXTURES / "schemas" / "risk_triage.json"
    cold = analyse_file(path, str(path))

    def no_thread(*args):
        raise AssertionError("a cache hit started the analysis thread")

    monkeypatch.setattr(cache, "run_deep", no_thread)
    warm = analyse_file(path, str(path))
    assert [dataclasses.asdict(s) for s in warm.sites] == [dataclasses.asdict(s) for s in cold.sites]


def _entry_payload(sites_options: list, **document) -> bytes:
    return json.dumps({"document": document, "sites": [{"options": o} for o in sites_options]}).encode()


@pytest.mark.parametrize(
    "payload",
    [
        _entry_payload([["a", 1, 2.5, -0.0, 1e300, "x\u00e9\n", None, True]]),
        _entry_payload([[float("nan"), float("inf"), -float("inf")]]),  # json.dumps writes NaN
        _entry_payload([[123456789012345678901234567890]]),  # orjson: a float (past 64 bits)
        _entry_payload([["a"], [-9223372036854775809]]),  # 19 digits, below the int64 range
        _entry_payload([[18446744073709551615, -9223372036854775808, 1e19]]),
        _entry_payload([["a"]], data={"n": 123456789012345678901234567890}),  # a YAML file's value
        _entry_payload([["\ud800", "\ud83d\ude00"]]),  # a lone surrogate round-trips escaped
        b'{"document": {}, "sites": [{"options": [1]}], "k": 1, "k": 2}',
        b'{"document": {}, "sites": ' + b"[" * 1100 + b"]" * 1100 + b"}",  # past orjson's nesting limit
        b"[1, 2]",  # not an entry's shape
    ],
    ids=[
        "plain",
        "non-finite",
        "big-int",
        "below-int64",
        "int64-edges",
        "yaml-data",
        "surrogate",
        "duplicate-key",
        "deep",
        "shape",
    ],
)
def test_an_entry_payload_reads_as_json_reads_it(payload):
    import sys

    from auditor.schema.cache import _loads

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # (json reads the deep one in the analysis thread's limit)
    try:
        assert repr(_loads(payload)) == repr(json.loads(payload))
    finally:
        sys.setrecursionlimit(limit)


def test_every_corpus_entry_reads_the_same_through_orjson(tmp_path, monkeypatch):
    """The payloads of the corpus's entries (YAML values kept in them included) read by orjson
    give what json.loads gives."""
    import orjson

    from auditor.errors import InputFileError
    from support import corpus_files

    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path))
    files = corpus_files()
    if not files:
        pytest.skip(NO_CORPUS)
    for path in files:
        try:
            analyse_file(path, str(path))
        except InputFileError:
            pass  # (a corpus file the analysis refuses has no entry)
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) >= 30
    for entry in entries:
        payload = entry.read_bytes().split(b"\n", 1)[1]
        assert repr(orjson.loads(payload)) == repr(json.loads(payload)), entry


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_a_model_survives_the_trip_back_from_a_pool_worker(path):
    """A worker that parsed a file pickles its model back (spans packed flat): the same model,
    its spans Span tuples again, its sites plain data (the run cache keeps nothing on them)."""
    import pickle

    from auditor.pcd.runcache import RunCache
    from auditor.schema.documents import Span
    from auditor.schema.sites import Site

    model = analyse_file(path, str(path), use_cache=False)
    cache = RunCache()
    for site in model.sites:
        cache.split(site)  # kept in the run cache, not on the site
    copy = pickle.loads(pickle.dumps(model))
    # what the collecting process may never read stays unread: the spans packed, a JSON file's
    # value not sent (parsed again from the text when read); sent on again, the same
    assert "value_spans" not in copy.document.__dict__ and "key_spans" not in copy.document.__dict__
    assert (copy.document._data is ...) == (path.suffix == ".json")
    again = pickle.loads(pickle.dumps(copy))
    assert again.document.value_spans == model.document.value_spans
    assert again.document.key_spans == model.document.key_spans
    assert again.document.data == model.document.data
    assert [dataclasses.asdict(s) for s in copy.sites] == [dataclasses.asdict(s) for s in model.sites]
    fields = {f.name for f in dataclasses.fields(Site)} | {"_deferred"}  # (spans made where read)
    assert all(set(s.__dict__) <= fields for s in copy.sites)
    assert copy.document.value_spans == model.document.value_spans
    assert copy.document.key_spans == model.document.key_spans
    assert copy.document.text == model.document.text and copy.document.data == model.document.data
    spans = [*copy.document.value_spans.values(), *(o for s in copy.sites for o in s.option_spans)]
    assert spans and all(type(s) is Span for s in spans)
