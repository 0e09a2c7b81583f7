"""The converted-tokenizer cache: tokenizer.json files keyed by the sha256 of their source, and
the rank tables of the tiktoken-native built-ins.

Converting a vocabulary (tiktoken ranks, SentencePiece, GGUF, Tekken) costs seconds; loading the
cached tokenizer.json costs a fraction of that. Both kinds of entry are checked entries
(auditor.cachedir: a JSON header line, then the payload, with its length and sha256), and the
header names what the entry was built from: the full sha256 of each source file, the converter
and its version. An entry is used only when all of that matches the file it is asked for now,
its payload's checksum holds and it has the shape it should (a rank table: a list of byte
strings holding every single byte, added tokens numbered after them within the vocabulary; a
tokenizer.json: one the `tokenizers` library parses, whose pre-tokenizer regexes pass the same
probe a user's tokenizer.json does). Anything else (missing, damaged, tampered, a FIFO or a link
in its place, too large) is rebuilt from the source and written again; a read-only cache only
costs speed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from tokenizers import Tokenizer

from auditor.cachedir import atomic_write, cache_dir, read_cache_file, read_checked, write_checked
from auditor.errors import TokenizerError

# Bumped whenever a converter changes what it produces, so stale cache entries are ignored
# (3: checked entries, with the source's digest in the header)
CONVERTER_VERSION = 3
CONVERTED_FORMAT = "pcdlint-tokenizer"
# tokenizer.json files parsed in this process, by file identity (see `read_tokenizer_file`)
_PARSED: dict[tuple, Tokenizer] = {}
_PARSED_LIMIT = 8


def read_tokenizer_file(path: Path) -> Tokenizer:
    """`Tokenizer.from_file`, once per unchanged file in a process: a large vocabulary is slow
    to parse (docs/benchmarks.md), and a test suite that calls `pcdlint` in-process or
    `auditor.lint` per test would pay it on every call. Keyed by the file's identity (device, inode, size, mtime: a hard
    link is the same file), so a file rewritten or replaced is parsed again. Nothing mutates a
    loaded Tokenizer (encoding settings are never changed), so one object serves every
    LoadedTokenizer made from it; each of those keeps its own memo."""
    stat = path.stat()
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    tokenizer = _PARSED.get(key)
    if tokenizer is None:
        tokenizer = Tokenizer.from_file(str(path))
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = tokenizer
    return tokenizer


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised by (path, size, mtime) so a warm run does not re-hash a model."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    memo = cache_dir() / "sha256" / (hashlib.sha1(key.encode()).hexdigest() + ".txt")
    remembered = read_cache_file(memo, 100) or b""
    if _SHA256_HEX.fullmatch(remembered.strip().decode("ascii", "replace")):
        return remembered.strip().decode("ascii")  # (a damaged or planted memo is recomputed)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    value = digest.hexdigest()
    atomic_write(memo, value)
    return value


def cache_entry(source: Path, kind: str, variant: str = "") -> Path:
    """Where the conversion of SOURCE by converter KIND (with an option VARIANT) is cached."""
    return _conversion(source, kind, variant)[0]


def _conversion(source: Path, kind: str, variant: str) -> tuple[Path, dict]:
    """(the entry of a conversion, the header values it must hold)."""
    digest = file_sha256(source)
    named = hashlib.sha256(f"{digest}|{variant}".encode()).hexdigest() if variant else digest
    header = {"format": CONVERTED_FORMAT, "version": CONVERTER_VERSION, "kind": kind, "source": digest}
    if variant:
        header["variant"] = variant
    return cache_dir() / f"{kind}-v{CONVERTER_VERSION}-{named[:32]}.json", header


# converted tokenizers read back in this process, by their payload's sha256
_CONVERTED: dict[str, Tokenizer] = {}


def read_conversion(source: Path, kind: str, variant: str = "") -> Tokenizer | None:
    """The cached conversion of SOURCE, or None where there is none fit to use (see above)."""
    target, expected = _conversion(source, kind, variant)
    checked = read_checked(target, expected)
    if checked is None:
        return None
    header, payload = checked
    tokenizer = _CONVERTED.get(header["sha256"])
    if tokenizer is not None:
        return tokenizer
    from auditor.tokenizers import convert

    try:  # (a regex that backtracks for ever is refused before the Rust tokenizer runs it)
        convert.probe_patterns(convert.regexes_in(payload), str(target))
        tokenizer = Tokenizer.from_str(payload.decode("utf-8"))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # (a Rust panic is no Exception): rebuilt by the caller
        return None
    if len(_CONVERTED) >= _PARSED_LIMIT:
        _CONVERTED.pop(next(iter(_CONVERTED)))
    _CONVERTED[header["sha256"]] = tokenizer
    return tokenizer


def export_conversion(entry: Path, target: Path) -> Path:
    """Write the tokenizer.json a conversion entry holds to `target` (a plain file, for what
    reads one with `Tokenizer.from_file`: the benchmarks' floors); `target`."""
    checked = read_checked(entry, {"format": CONVERTED_FORMAT})
    if checked is None:
        raise TokenizerError(f"{entry}: not a converted-tokenizer entry")
    atomic_write(target, checked[1])
    return target


def cached_conversion(
    source: Path, kind: str, convert: Callable[[], Tokenizer], variant: str = ""
) -> Tokenizer:
    cached = read_conversion(source, kind, variant)
    if cached is not None:
        return cached
    try:
        tokenizer = convert()
    except TokenizerError:
        raise
    except Exception as exc:  # a fake or truncated .tiktoken/.gguf: one line, exit 2
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TokenizerError(f"{source}: not a readable {kind} tokenizer file ({first[:200]})") from None
    target, header = _conversion(source, kind, variant)
    write_checked(target, header, tokenizer.to_str().encode("utf-8"))
    return tokenizer


RankPair = tuple[list[bytes], dict[str, int]]  # (the tokens by rank, b"" for none; added tokens)
# 2: the mergeable ranks as a dict; 3: the tokens by rank, in marshal's form; 4: a checked
# entry, the tokens as one NUL-separated string (`pack_tables`)
TABLES_VERSION = 4
TABLES_FORMAT = "pcdlint-rank-tables"
_SINGLE_BYTES = frozenset(bytes([byte]) for byte in range(256))


def tables_entry(sources: list[Path], name: str) -> Path:
    """Where cached_tables keeps the tables read from these sources under `name`."""
    return _tables(sources, name)[0]


def _tables(sources: list[Path], name: str) -> tuple[Path, dict]:
    """(the entry of the tables read from these sources under `name`, the header values it must
    hold: the sources' full digests and the name)."""
    digests = [file_sha256(source) for source in sources]
    digest = hashlib.sha256(f"{'|'.join(digests)}|{name}".encode()).hexdigest()
    header = {"format": TABLES_FORMAT, "version": TABLES_VERSION, "name": name, "sources": digests}
    return cache_dir() / f"tables-v{TABLES_VERSION}-{digest[:32]}.bin", header


# A rank-table entry's payload: one JSON line {"count": number of tokens, "added": {text: id},
# "nul": [[rank, token as latin-1 text], ...]}, then the tokens joined by NUL bytes, those that
# hold a NUL byte left empty there and listed in "nul" (a vocabulary has one or two). Splitting
# the string back is as fast as marshal's load, makes only byte strings, and reads nothing that
# could be code.


def pack_tables(tables: RankPair) -> bytes:
    """The payload of a rank-table entry (see above)."""
    tokens, added = tables
    nul = [[rank, token.decode("latin-1")] for rank, token in enumerate(tokens) if b"\0" in token]
    line = json.dumps({"count": len(tokens), "added": added, "nul": nul}, ensure_ascii=True)
    return line.encode() + b"\n" + b"\0".join(b"" if b"\0" in token else token for token in tokens)


def unpack_tables(payload: bytes, vocab_size: int | None = None) -> RankPair | None:
    """The tables of a payload `pack_tables` made, or None where it is not one, or not tables a
    byte-level BPE can run on: every one of the 256 single bytes among the first 256 tokens
    (each tiktoken-native vocabulary starts so; the Python encoder needs every byte to be a
    token), the added tokens numbered after the last rank, each id once, below `vocab_size`
    where known."""
    line, _, joined = payload.partition(b"\n")
    try:
        data = json.loads(line)
        count, added, nul = data["count"], data["added"], data["nul"]
        tokens = joined.split(b"\0")
        if type(count) is not int or len(tokens) != count or count < 256 or type(added) is not dict:
            return None
        for rank, token in nul:
            if tokens[rank] or "\0" not in token:
                return None
            tokens[rank] = token.encode("latin-1")
    except (ValueError, KeyError, TypeError, IndexError, RecursionError, UnicodeEncodeError):
        return None
    if set(tokens[:256]) != _SINGLE_BYTES:
        return None
    ids = list(added.values())
    top = vocab_size if vocab_size is not None else count + len(ids)
    if not (
        all(text for text in added)
        and all(type(i) is int and count <= i < top for i in ids)
        and len(set(ids)) == len(ids)
        and count <= top
    ):
        return None
    return tokens, added


def cached_tables(
    sources: list[Path], name: str, read: Callable[[], RankPair], vocab_size: int | None = None
) -> RankPair:
    """`read()`, the tables of a tiktoken-native built-in (its tokens in rank order and its
    special tokens, the fast encoder's: auditor.tokenizers.fast), kept in the cache beside the
    converted tokenizer: decoding the Qwen rank file's base64 lines costs several times more
    than loading them back, and a list of the tokens loads in a quarter of the time of the dict
    of their ranks (which only encoding needs: a warm run never makes it). A checked entry
    keyed by the sources' sha256 and `name`; one whose header, checksum or shape
    (unpack_tables) does not hold is read again and rewritten."""
    target, header = _tables(sources, name)
    checked = read_checked(target, header)
    if checked is not None:
        tables = unpack_tables(checked[1], vocab_size)
        if tables is not None:
            return tables
    tables = read()
    write_checked(target, header, pack_tables(tables))
    return tables
