"""Cache of parsed and crawled files, keyed by content, so unchanged schemas skip the slow part.

Parsing with source positions and checking a schema against its draft's meta-schema cost far
more than tokenizing its options. Both depend only on the file's bytes and on pcdlint's own
parsing code, so the resulting FileModel is stored under the user cache directory, keyed by the
sha256 of the bytes, the file suffix, and a digest of the modules that produce it (an edit to
the crawler invalidates every entry).

An entry holds data only: one JSON header line (format name, version, key, sha256 and length of
the payload) and a JSON payload. It holds neither the file's text (the bytes the key is made of)
nor a JSON file's parsed value (the document parses its text again if something reads it).
Nothing in it is ever executed — CI caches are restored from other branches, so an entry is
untrusted input. A missing, truncated, foreign, tampered or unreadable entry (wrong format,
version, key or checksum, bad JSON, wrong shapes) is ignored and rebuilt. Entries are written atomically (tempfile.mkstemp + os.replace).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from auditor.cachedir import cache_dir, read_checked, write_checked
from auditor.errors import InputFileError
from auditor.schema.code_requests import read_document
from auditor.schema.decisions import QUESTION_KINDS, SHAPES
from auditor.schema.documents import (
    CODE_SUFFIXES,
    YAML_SUFFIXES,
    Document,
    DuplicateKey,
    Span,
    pack_spans,
    read_source,
    run_deep,
    unpack_spans,
)
from auditor.schema.evalconfigs import analyse_with_label_sets, known_kind
from auditor.schema.includes import IncludeReader, unchanged
from auditor.schema.locate import LocatedSchema
from auditor.schema.model import DECISION_FIELDS, FileModel, OpenField, SchemaProblem, Site
from auditor.version import __version__

CACHE_FORMAT = "pcdlint-analysis"
# 1 was a pickle; 2 lacked schemas and array depths; 3 stored option spans twice; 4 stored the
# file's text and, for JSON, its parsed value (5: the text comes from the file's own bytes and
# JSON is parsed again only when read; spans are one flat list of numbers)
# 6: decision sites and notes; 7: open fields; 8: code files, run-time parts; 9: the includes read
CACHE_VERSION = 9


@lru_cache(maxsize=1)
def _code_key() -> str:
    digest = hashlib.sha256(f"{__version__}|{CACHE_VERSION}".encode())
    # the meta-schema check's code, and the grammars that read script files (a file analysed
    # while they were missing holds a note saying so, which must not outlive their install)
    for package in (
        "jsonschema",
        "jsonschema_rs",
        "tree_sitter",
        "tree_sitter_javascript",
        "tree_sitter_typescript",
    ):
        digest.update(f"|{_installed(package)}".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):  # every module of auditor.schema
        digest.update(source.name.encode() + source.read_bytes())
    return digest.hexdigest()[:16]


def _installed(package: str) -> str:
    """The installed version of a package, from its `NAME-VERSION.dist-info` folder beside it
    (the same across machines, so CI caches stay valid), without importing it or
    importlib.metadata (slow at start-up: docs/benchmarks.md); its file's path where there is
    no such folder."""
    import re
    from importlib.util import find_spec

    spec = find_spec(package)
    if spec is None or not spec.origin:
        return "-"
    site = Path(spec.origin).parent.parent
    pattern = re.compile(rf"{re.escape(package)}-([0-9][^-]*)\.dist-info", re.IGNORECASE)
    try:
        versions = sorted(m.group(1) for name in os.listdir(site) if (m := pattern.fullmatch(name)))
    except OSError:
        versions = []
    return versions[-1] if len(versions) == 1 else spec.origin


def analyse_file(
    path: Path,
    display: str,
    use_cache: bool = True,
    max_bytes: int | None = None,
    max_depth: int | None = None,
    top: str | None = None,
) -> FileModel:
    """The file's model; any problem with the file is an InputFileError naming it. `top`: the
    folder named on the command line that holds it (an lm-eval task's includes are read within
    its project, and within `top` where no marker says where that is: auditor.schema.includes)."""
    raw = read_source(path, display, max_bytes)
    if use_cache:
        # a cache hit is read in this thread (no deep-stack thread per file: a warm run of many
        # files makes none); an entry too deep for this thread's recursion limit reads as a
        # miss here and is read again by the analysis below, in its thread
        model = _read_entry(path, raw, display, max_depth, top)
        if model is not None:
            return model
    try:
        return run_deep(_analyse, path, raw, display, use_cache, max_depth, top)
    except RecursionError:
        raise InputFileError(display, "nested too deeply to analyse (config key max-depth)") from None
    except InputFileError:
        raise
    except Exception as exc:  # a bug on one file must not lose the others' findings
        if os.environ.get("PCDLINT_DEBUG"):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputFileError(
            display,
            f"internal error while analysing this file: "
            f"{type(exc).__name__}: {first} (rerun with PCDLINT_DEBUG=1 "
            "and report it)",
        ) from None


def _entry(path: Path, raw: bytes, max_depth: int | None) -> tuple[Path, str]:
    """(cache entry file, key) of a file's analysis. The files an lm-eval task includes are
    not in the key: the entry lists what its analysis read, checked on every hit (load_entry)."""
    key = hashlib.sha256(
        raw + path.suffix.lower().encode() + _code_key().encode() + f"|{max_depth}".encode()
    ).hexdigest()
    return Path(f"{cache_dir()}/analysis/{key[:40]}.json"), key


def cached_analysis(
    path: Path,
    display: str,
    max_bytes: int | None = None,
    max_depth: int | None = None,
    top: str | None = None,
) -> FileModel | None:
    """The file's model from the analysis cache (what analyse_file reads on a hit), or None:
    no entry, a damaged one, or a file `read_source` refuses (analyse_file reports it)."""
    try:
        raw = read_source(path, display, max_bytes)
    except InputFileError:
        return None
    return _read_entry(path, raw, display, max_depth, top)


def _read_entry(
    path: Path, raw: bytes, display: str, max_depth: int | None, top: str | None
) -> FileModel | None:
    """The cached model of the file whose bytes are `raw`, or None (see load_entry)."""
    entry, key = _entry(path, raw, max_depth)
    model = load_entry(entry, key, display, raw, IncludeReader(str(path), top, max_depth))
    if model is not None:
        model.content_key = key
    return model


def _analyse(
    path: Path, raw: bytes, display: str, use_cache: bool, max_depth: int | None, top: str | None
) -> FileModel:
    includes = IncludeReader(str(path), top, max_depth)
    if not use_cache:
        return analyse_with_label_sets(read_document(raw, path.suffix, display, max_depth), includes)
    entry, key = _entry(path, raw, max_depth)
    model = load_entry(entry, key, display, raw, includes)
    if model is None:
        model = analyse_with_label_sets(read_document(raw, path.suffix, display, max_depth), includes)
        # (a code file's value is no parse of its text: kept, as a YAML file's is)
        store_entry(entry, key, model, keep_data=path.suffix.lower() in YAML_SUFFIXES | CODE_SUFFIXES)
    model.content_key = key
    return model


# --------------------------------------------------------------------------- entry format


def _spans(value: Any) -> list:
    """An entry's packed spans (documents.pack_spans: [pointers, numbers]), checked; made into
    Spans where first read (Document.packed)."""
    pointers, numbers = value
    if (
        not isinstance(pointers, list)
        or not isinstance(numbers, list)
        or len(numbers) != 4 * len(pointers)
        or not set(map(type, pointers)) <= {str}
        or not set(map(type, numbers)) <= {int}
    ):
        raise ValueError("spans")
    return [pointers, numbers]


def _model_to_data(model: FileModel, keep_data: bool) -> dict:
    doc = model.document
    span = lambda s: [s.line, s.column, s.end_line, s.end_column]  # noqa: E731
    return {
        "document": {
            **({"data": doc.data} if keep_data else {}),
            "value_spans": pack_spans(doc.value_spans),
            "key_spans": pack_spans(doc.key_spans),
            "duplicates": [[d.pointer, d.key, [list(span) for span in d.spans]] for d in doc.duplicates],
            **({"runtime": doc.runtime} if doc.runtime else {}),
        },
        "format": model.format,
        "sites": [
            {
                "pointer": s.pointer,
                "field": s.field,
                "name": s.name,
                "options": s.options,
                "option_pointers": s.option_pointers,
                "span": span(s.span),
                # null: the options' value spans, already in value_spans (a big enum's, once)
                "option_spans": (
                    None
                    if s.option_spans == doc.spans(s.option_pointers)
                    else [span(o) for o in s.option_spans]
                ),
                "kind": s.kind,
                "description": s.description,
                "suppressed": sorted(s.suppressed),
                "suppression_pointers": list(s.suppression_pointers),
                "array_depth": s.array_depth,
                **({"decision": s.decision_state()} if s.question_kind is not None else {}),
            }
            for s in [*model.sites, *model.prose_sites]
        ],
        "notes": model.notes,
        "include_reads": [[list(chain), fingerprint] for chain, fingerprint in model.include_reads],
        "schemas": [dataclasses.asdict(located) for located in model.schemas],
        "schema_problems": [[p.pointer, p.message] for p in model.schema_problems],
        "remote_refs": model.remote_refs,
        "open_fields": [dataclasses.astuple(o) for o in model.open_fields],
        "suppressions": {p: sorted(codes) for p, codes in model.suppressions.items()},
    }


def _duplicate(value: Any) -> DuplicateKey:
    pointer, key, spans = value
    if type(pointer) is str and type(key) is str and type(spans) is list:
        return DuplicateKey(pointer, key, tuple(map(_span, spans)))
    raise ValueError("duplicate")


def _span(value: Any) -> Span:
    line, column, end_line, end_column = value
    if type(line) is int and type(column) is int and type(end_line) is int and type(end_column) is int:
        return Span(line, column, end_line, end_column)
    raise ValueError("span")


def _model_from_data(data: dict, display: str, text: str) -> FileModel:
    d = data["document"]
    value_spans = _spans(d["value_spans"])
    duplicates = [_duplicate(item) for item in d.get("duplicates", [])]
    document = Document.packed(
        display, d.get("data", ...), text, value_spans, _spans(d["key_spans"]), duplicates
    )
    document.runtime = {str(p): str(t) for p, t in d.get("runtime", {}).items()}
    sites = []
    for s in data["sites"]:
        options, pointers = list(s["options"]), s["option_pointers"]
        if type(pointers) is not list or not set(map(type, pointers)) <= {str}:
            raise ValueError("site")
        # null: the options' value spans, made from the document's when first read
        spans = None if s["option_spans"] is None else [_span(o) for o in s["option_spans"]]
        if len(options) != len(pointers) or (spans is not None and len(options) != len(spans)):
            raise ValueError("site")
        if type(s["kind"]) is not str or not known_kind(s["kind"]):
            raise ValueError("site kind")  # (an engine this pcdlint does not know)
        site = Site(
            display,
            str(s["pointer"]),
            str(s["field"]),
            str(s["name"]),
            options,
            pointers,
            _span(s["span"]),
            spans or [],
            str(s["kind"]),
            str(s["description"]),
            frozenset(str(c) for c in s["suppressed"]),
            tuple(str(p) for p in s["suppression_pointers"]),
            int(s["array_depth"]),
            **_decision_fields(s.get("decision")),
        )
        if spans is None:
            site.defer("option_spans", partial(_option_spans, document, value_spans, pointers))
        sites.append(site)
    problems = [SchemaProblem(str(p), str(m)) for p, m in data["schema_problems"]]
    suppressions = {str(p): frozenset(str(c) for c in codes) for p, codes in data["suppressions"].items()}
    schemas = [LocatedSchema(**{k: str(v) for k, v in located.items()}) for located in data["schemas"]]
    open_fields = [OpenField(str(p), str(f), list(o), str(b)) for p, f, o, b in data["open_fields"]]
    model = FileModel(
        document,
        str(data["format"]),
        [site for site in sites if site.kind != "prose"],
        problems,
        [str(r) for r in data["remote_refs"]],
        suppressions,
        schemas,
        [str(n) for n in data.get("notes", [])],
        open_fields,
    )
    model.prose_sites = [site for site in sites if site.kind == "prose"]
    return model


def _option_spans(document: Document, packed: list, pointers: list[str]) -> list[Span]:
    """document.spans(pointers) of a site's options, from the entry's packed value spans
    (pack_spans: each pointer once) where the options are listed one after another there (an
    enum's are): only their spans are made, not the map of every value of the file, which a
    finding at an option would otherwise build."""
    names, numbers = packed
    if pointers and not document.made("value_spans"):
        try:
            start = names.index(pointers[0])
        except ValueError:
            start = -1
        end = start + len(pointers)
        if start >= 0 and names[start:end] == pointers:
            return unpack_spans(numbers[4 * start : 4 * end])
    return document.spans(pointers)


def _decision_fields(stored: Any) -> dict:
    """A decision site's fields as stored (Site.decision_state); {} for a schema's field."""
    if stored is None:
        return {}
    if (
        not isinstance(stored, dict)
        or set(stored) != set(DECISION_FIELDS)
        or stored["question_kind"] not in QUESTION_KINDS
        or stored["request_shape"] not in SHAPES
        or not all(type(stored[name]) is str for name in _DECISION_TEXTS)
        or not all(type(stored[name]) is int and stored[name] >= 0 for name in _DECISION_COUNTS)
        or type(stored["option_details"]) is not list
    ):
        raise ValueError("site")
    return {**stored, "runtime": tuple(str(part) for part in stored["runtime"])}


_DECISION_TEXTS = ("question_name", "question_type", "request_pointer", "request_source")
_DECISION_COUNTS = ("question_index", "request_questions")


def load_entry(
    entry: Path, key: str, display: str, raw: bytes, includes: IncludeReader | None = None
) -> FileModel | None:
    """The cached model of the file whose bytes are `raw`, or None when the entry is missing,
    not a valid entry for `key`, or lists an include that would not be read the same now
    (`includes`: how the file's includes are read; auditor.schema.includes.unchanged)."""
    checked = read_checked(entry, {"format": CACHE_FORMAT, "version": CACHE_VERSION, "key": key})
    if checked is None:
        return None
    try:
        data = _loads(checked[1])
        reads = data.get("include_reads", [])
        if reads and (
            includes is None or not unchanged(reads, includes.path, includes.fallback, includes.max_depth)
        ):
            return None
        model = _model_from_data(data, display, raw.decode("utf-8-sig"))
        model.include_reads = [(tuple(chain), fingerprint) for chain, fingerprint in reads]
        return model
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # missing, truncated, foreign or tampered with: rebuilt by the caller


def _loads(payload: bytes) -> Any:
    """json.loads of an entry's payload; through orjson (faster) where that is sure to
    give the same. What orjson refuses (NaN and infinities, escaped lone surrogates, nesting
    past 1,024 levels) is read by json; so is a YAML file's kept value and any payload with a
    float option of 2**63 or more: orjson reads an integer past 64 bits as a float, silently,
    and the options are the only numbers of a JSON file's entry that are not small positions
    (tests/test_cache_roundtrip.py)."""
    try:
        import orjson
    except ImportError:  # a core dependency; an environment without it reads with json
        return json.loads(payload)
    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return json.loads(payload)
    try:
        exact = "data" not in value["document"] and not any(
            type(o) is float and not -_INT64 < o < _INT64
            for s in value["sites"]
            if float in set(map(type, s["options"]))
            for o in s["options"]
        )
    except (KeyError, TypeError):
        exact = False  # not an entry's shape: json gives what the checks then refuse
    return value if exact else json.loads(payload)


_INT64 = float(2**63)


def store_entry(entry: Path, key: str, model: FileModel, keep_data: bool) -> None:
    """Write the entry; `keep_data`: store the parsed value too (YAML: slow to parse again)."""
    try:
        # ensure_ascii: lone surrogates in a schema round-trip as \\udXXX escapes
        payload = json.dumps(
            _model_to_data(model, keep_data), ensure_ascii=True, separators=(",", ":")
        ).encode()
    except (ValueError, TypeError, RecursionError):
        return  # not representable: simply not cached
    write_checked(entry, {"format": CACHE_FORMAT, "version": CACHE_VERSION, "key": key}, payload)
