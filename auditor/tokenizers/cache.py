"""The converted-tokenizer cache: tokenizer.json files keyed by the sha256 of their source.

Converting a vocabulary (tiktoken ranks, SentencePiece, GGUF, Tekken) costs seconds; loading the
cached tokenizer.json with `Tokenizer.from_file` costs a fraction of that. A stale or corrupt entry
is rebuilt, and a read-only cache only costs speed.
"""

from __future__ import annotations

import hashlib
import marshal
import re
from collections.abc import Callable
from pathlib import Path

from tokenizers import Tokenizer

from auditor.cachedir import atomic_write, cache_dir
from auditor.errors import TokenizerError

# Bumped whenever a converter changes what it produces, so stale cache entries are ignored.
CONVERTER_VERSION = 2
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
    try:
        remembered = memo.read_bytes()[:100].strip().decode("ascii")
        if _SHA256_HEX.fullmatch(remembered):  # a damaged or planted memo is recomputed
            return remembered
    except (OSError, UnicodeDecodeError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    value = digest.hexdigest()
    atomic_write(memo, value)
    return value


def cache_entry(source: Path, kind: str, variant: str = "") -> Path:
    """Where the conversion of SOURCE by converter KIND (with an option VARIANT) is cached."""
    digest = file_sha256(source)
    if variant:
        digest = hashlib.sha256(f"{digest}|{variant}".encode()).hexdigest()
    return cache_dir() / f"{kind}-v{CONVERTER_VERSION}-{digest[:32]}.json"


def cached_conversion(
    source: Path, kind: str, convert: Callable[[], Tokenizer], variant: str = ""
) -> Tokenizer:
    target = cache_entry(source, kind, variant)
    if target.is_file():
        try:
            return read_tokenizer_file(target)
        except Exception:  # a corrupt entry is rebuilt below
            pass
    try:
        tokenizer = convert()
    except TokenizerError:
        raise
    except Exception as exc:  # a fake or truncated .tiktoken/.gguf: one line, exit 2
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TokenizerError(f"{source}: not a readable {kind} tokenizer file ({first[:200]})") from None
    atomic_write(target, tokenizer.to_str())
    return tokenizer


RankPair = tuple[list[bytes], dict[str, int]]  # (the tokens by rank, b"" for none; added tokens)
TABLES_VERSION = 3  # 2: the mergeable ranks as a dict


def tables_entry(sources: list[Path], name: str) -> Path:
    """Where cached_tables keeps the tables read from these sources under `name`."""
    digests = "|".join(file_sha256(source) for source in sources)
    digest = hashlib.sha256(f"{digests}|{name}".encode()).hexdigest()
    return cache_dir() / f"tables-v{TABLES_VERSION}-m{marshal.version}-{digest[:32]}.marshal"


def cached_tables(sources: list[Path], name: str, read: Callable[[], RankPair]) -> RankPair:
    """`read()`, the tables of a tiktoken-native built-in (its tokens in rank order and its
    special tokens, the fast encoder's: auditor.tokenizers.fast), kept in the cache in
    `marshal`'s form beside the converted tokenizer: decoding the Qwen rank file's base64 lines
    costs several times more than loading them back, and a list of the tokens loads in a
    quarter of the time of the dict of their ranks (which only encoding needs: a warm run never
    makes it). Keyed by the sources' sha256, `name` and the marshal format; an entry that does
    not load as (non-empty tokens, added tokens) is read again and rewritten."""
    target = tables_entry(sources, name)
    try:
        tables = marshal.loads(target.read_bytes())
        if type(tables) is tuple and len(tables) == 2 and type(tables[1]) is dict:
            tokens, added = tables
            if type(tokens) is list and tokens:
                return tokens, added
    except (OSError, ValueError, EOFError, TypeError):
        pass
    tables = read()
    atomic_write(target, marshal.dumps(tables))
    return tables
