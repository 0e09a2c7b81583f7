"""Issue 49: a tampered cache never changes a finding.

One real run fills a cache with an entry of every kind pcdlint keeps: the file's analysis, its
encodings, the qwen2.5 rank tables, the converted qwen2.5 tokenizer.json (a non-ASCII option
needs it) and the file-hash memo. Each case copies that cache, tampers with one entry of one
kind, and runs `pcdlint check` again as a process (a FIFO would block one in this process): the
exit code and the JSON findings must equal those of a run with a fresh cache and `--no-cache`,
with no traceback, and where the tamper left no regular file, the entry is rebuilt as one.

An entry re-checksummed by someone who can write the cache is believed where it still has the
shape pcdlint checks (docs/security.md, "Caches": the Action restores caches only from scopes
it trusts); the re-checksummed tampers below are those whose shape gives them away.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"enum": ["CAT_001", "CAT_002", "CAT_103"]},
        "mood": {"enum": ["café", "caféine", "naïve"]},  # (non-ASCII: the converted tokenizer)
    },
}
KINDS = {
    "analysis": "analysis/*.json",
    "encodings": "encodings/*/*.json",
    "rank tables": "tables-v*.bin",
    "converted tokenizer": "qwen2-v*.json",
    "hash memo": "sha256/*.txt",
}


def _check(schema: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PCDLINT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    env.pop("PCDLINT_DEBUG", None)
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "auditor", "check", "-f", "json", *extra, str(schema)],
        capture_output=True,
        timeout=180,
        env=env,
        cwd=schema.parent,
    )


def _outcome(done: subprocess.CompletedProcess) -> tuple[int, list]:
    assert b"Traceback" not in done.stderr and b"internal error" not in done.stderr + done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)["findings"]


@pytest.fixture(scope="module")
def primed(tmp_path_factory) -> tuple[Path, Path, tuple[int, list]]:
    """(the schema, a cache holding one entry of each kind, the clean --no-cache outcome)."""
    root = tmp_path_factory.mktemp("tamper")
    schema = root / "s.json"
    schema.write_text(json.dumps(SCHEMA, ensure_ascii=False), encoding="utf-8")
    baseline = _outcome(_check(schema, root / "fresh", "--no-cache"))
    assert baseline[0] == 1 and baseline[1]
    cache = root / "cache"
    assert _outcome(_check(schema, cache)) == baseline
    for kind, pattern in KINDS.items():
        assert len(list(cache.glob(pattern))) == 1, (kind, sorted(cache.rglob("*")))
    return schema, cache, baseline


def _rechecksummed(entry: Path, edit: Callable[[bytes], bytes]) -> None:
    """Replace a checked entry's payload by `edit(payload)`, its header's length and sha256
    made to match (what someone who can write the cache can do)."""
    header, payload = entry.read_bytes().split(b"\n", 1)
    values = json.loads(header)
    payload = edit(payload)
    values.update(bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())
    entry.unlink()
    entry.write_bytes(json.dumps(values).encode() + b"\n" + payload)


def _tables(edit: Callable[[dict, list[bytes]], None]) -> Callable[[Path], None]:
    """A re-checksummed edit of a rank-table entry's JSON line and tokens."""

    def tamper(entry: Path) -> None:
        def change(payload: bytes) -> bytes:
            line, blob = payload.split(b"\n", 1)
            data, tokens = json.loads(line), blob.split(b"\0")
            edit(data, tokens)
            return json.dumps(data).encode() + b"\n" + b"\0".join(tokens)

        _rechecksummed(entry, change)

    return tamper


def _swap(data: dict, tokens: list[bytes]) -> None:
    tokens[300], tokens[301] = tokens[301], tokens[300]


def _replace(make: Callable[[Path], None]) -> Callable[[Path], None]:
    def tamper(entry: Path) -> None:
        entry.unlink()  # (replaced: the copied cache's files are hard links)
        make(entry)

    return tamper


def _flip_payload_byte(entry: Path) -> None:
    raw = bytearray(entry.read_bytes())
    at = raw.index(b"\n") + 1 + (len(raw) - raw.index(b"\n")) // 2 if b"\n" in raw else len(raw) // 2
    raw[min(at, len(raw) - 1)] ^= 0x01
    entry.unlink()
    entry.write_bytes(bytes(raw))


def _outside_fifo(entry: Path) -> None:
    """A link to a FIFO outside the cache: followed, the run would block."""
    target = entry.parents[len(entry.relative_to(_cache_of(entry)).parts)] / f"outside-{entry.name}.fifo"
    os.mkfifo(target)
    entry.symlink_to(target)


def _cache_of(entry: Path) -> Path:
    return next(p for p in entry.parents if p.name == "cache")


def _sparse(entry: Path) -> None:
    entry.write_bytes(b"")
    os.truncate(entry, 300 * 1024 * 1024)


def _truncated(entry: Path) -> None:
    raw = entry.read_bytes()
    entry.unlink()
    entry.write_bytes(raw[: len(raw) // 2])


GENERIC: dict[str, Callable[[Path], None]] = {
    "a FIFO": _replace(os.mkfifo),
    "a link to /dev/zero": _replace(lambda e: e.symlink_to("/dev/zero")),
    "a link to a FIFO outside the cache": _replace(_outside_fifo),
    "300 MiB (sparse)": _replace(_sparse),
    "truncated": _truncated,
    "a payload byte changed": _flip_payload_byte,
}


def _swapped_raw(raw: bytes) -> bytes:
    header, payload = raw.split(b"\n", 1)
    line, blob = payload.split(b"\n", 1)
    tokens = blob.split(b"\0")
    _swap({}, tokens)
    return header + b"\n" + line + b"\n" + b"\0".join(tokens)


def _swapped_in_place(entry: Path) -> None:
    raw = entry.read_bytes()
    entry.unlink()
    entry.write_bytes(_swapped_raw(raw))


def _swap_first_byte_away(data: dict, tokens: list[bytes]) -> None:
    tokens[0], tokens[1000] = tokens[1000], tokens[0]


def _unknown_decision(payload: bytes) -> bytes:
    """A site made into a decision question of a kind and shape no reader makes."""
    from auditor.schema.model import DECISION_FIELDS

    data = json.loads(payload)
    state = dict.fromkeys(DECISION_FIELDS, "")
    state.update(question_kind="ranking", request_shape="nope", question_index=0, request_questions=1)
    state.update(option_details=[], question_text=None)
    data["sites"][0]["decision"] = state
    return json.dumps(data).encode()


def _unknown_engine_site(payload: bytes) -> bytes:
    """A site made into a label set scored by an engine no row names."""
    data = json.loads(payload)
    data["sites"][0]["kind"] = 'eval-label-set:{"engines":["nope-engine"],"prefix":" "}'
    return json.dumps(data).encode()


SPECIFIC: dict[tuple[str, str], Callable[[Path], None]] = {
    ("rank tables", "two tokens swapped, checksum kept"): lambda e: _swapped_in_place(e),
    ("rank tables", "one token"): _tables(
        lambda d, t: (d.update(count=1), t.__setitem__(slice(1, None), []))
    ),
    ("rank tables", "a merge added"): _tables(lambda d, t: (d.update(count=d["count"] + 1), t.append(b"zz"))),
    ("rank tables", "a huge added id"): _tables(lambda d, t: d["added"].update({"<|x|>": 10**12})),
    ("rank tables", "an added id not an int"): _tables(lambda d, t: d["added"].update({"<|x|>": "5"})),
    ("rank tables", "a count not an int"): _tables(lambda d, t: d.update(count="151643")),
    ("rank tables", "the single bytes out of place"): _tables(_swap_first_byte_away),
    ("analysis", "a label set scored by an unknown engine"): lambda e: _rechecksummed(
        e, _unknown_engine_site
    ),
    ("analysis", "a decision of an unknown kind"): lambda e: _rechecksummed(e, _unknown_decision),
    ("encodings", "an id past the vocabulary"): lambda e: _rechecksummed(
        e, lambda p: p[:-4] + b"\xff\xff\xff\x7f"
    ),
    ("hash memo", "a path in place of a digest"): _replace(lambda f: f.write_bytes(b"../../../../outside")),
}


CASES = [
    pytest.param(
        kind, name, tamper, id=f"{kind}: {name}", marks=[] if name == "a FIFO" else [pytest.mark.slow]
    )
    for kind in KINDS
    for name, tamper in GENERIC.items()
] + [pytest.param(kind, name, tamper, id=f"{kind}: {name}") for (kind, name), tamper in SPECIFIC.items()]


@pytest.mark.parametrize(("kind", "name", "tamper"), CASES)
def test_a_tampered_entry_changes_no_finding(primed, tmp_path, kind, name, tamper):
    schema, primed_cache, baseline = primed
    cache = tmp_path / "cache"
    shutil.copytree(primed_cache, cache, copy_function=os.link)
    if kind == "converted tokenizer":  # (with the encodings cached, a warm run never loads it)
        shutil.rmtree(cache / "encodings")
    (entry,) = cache.glob(KINDS[kind])
    tamper(entry)
    assert _outcome(_check(schema, cache)) == baseline
    assert entry.is_file() and not entry.is_symlink(), "rebuilt as a regular file"
    if kind == "rank tables":
        assert _outcome(_check(schema, cache)) == baseline  # (and the rebuilt entry is right)


def test_a_converted_tokenizer_with_a_catastrophic_regex_is_rebuilt(primed, tmp_path):
    """A re-checksummed tokenizer.json whose pre-tokenizer regex backtracks for ever (a Rust
    panic traceback before): the probe (a child process) refuses it, the entry is rebuilt."""
    schema, primed_cache, baseline = primed
    cache = tmp_path / "cache"
    shutil.copytree(primed_cache, cache, copy_function=os.link)
    shutil.rmtree(cache / "encodings")
    (entry,) = cache.glob(KINDS["converted tokenizer"])

    def catastrophic(payload: bytes) -> bytes:
        data = json.loads(payload)
        text = json.dumps(data)
        found = json.loads(payload)["pre_tokenizer"]
        assert "Regex" in json.dumps(found)
        return text.replace(json.dumps(_first_regex(found))[1:-1], "(a|aa)+$", 1).encode()

    _rechecksummed(entry, catastrophic)
    assert _outcome(_check(schema, cache)) == baseline


def _first_regex(node: object) -> str:
    if isinstance(node, dict):
        if "Regex" in node:
            return node["Regex"]
        for value in node.values():
            found = _first_regex(value)
            if found:
                return found
    if isinstance(node, list):
        for value in node:
            found = _first_regex(value)
            if found:
                return found
    return ""


def test_a_cache_folder_linked_out_of_the_cache_is_not_read(primed, tmp_path):
    """`analysis/` replaced by a link to a folder elsewhere that holds a forged entry under the
    right name (its sites dropped, its checksum made to match): not read, the findings stand."""
    schema, primed_cache, baseline = primed
    cache = tmp_path / "cache"
    shutil.copytree(primed_cache, cache, copy_function=os.link)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(cache / "analysis", elsewhere)
    (forged,) = elsewhere.glob("*.json")
    _rechecksummed(forged, lambda p: json.dumps({**json.loads(p), "sites": []}).encode())
    shutil.rmtree(cache / "analysis")
    (cache / "analysis").symlink_to(elsewhere, target_is_directory=True)
    assert _outcome(_check(schema, cache)) == baseline
