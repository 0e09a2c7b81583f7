"""The encoding cache: per file and tokenizer, the ids of the texts a lint of that file read.

A lint of a file encodes its options in several forms (remainders, field texts, suffixes, the
engines' plan texts). Their ids depend only on the texts and the tokenizer, so a warm run reads
them back instead of encoding them, and never builds tiktoken's tables for it (a tenth of a
second, more than the encoding: docs/benchmarks.md, "Issue 34"). The linter
(auditor.linter.engine) loads each file's entry into the tokenizer's memo before it tokenizes,
records the texts each file reads (LoadedTokenizer.recording) and writes an entry again only
where the file read a text its entry lacked or the run's rule and engine settings are new to it
(RunEncodings).

Only the ASCII texts of a tokenizer with an `encoding_key` (the tiktoken-native built-ins, whose
key is their rank tables' digest and pcdlint's encoder code) are kept: their offsets follow from
the ids. An entry is keyed by the file's analysis key (its bytes, pcdlint's parsing code) and the
tokenizer's key; it is data only (one JSON header line, then the payload: `pack`), untrusted as
the analysis cache's entries are: a missing, truncated, foreign or tampered entry (wrong format,
version, key or checksum, a text not ASCII, counts that do not add up, an id out of the
vocabulary) is ignored and rewritten. A stale entry costs speed only: a text it lacks is encoded as in a cold run.
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from itertools import chain, groupby
from pathlib import Path
from typing import cast

from auditor.cachedir import cache_dir, read_checked, write_checked
from auditor.tokenizers.loader import LoadedTokenizer

FORMAT = "pcdlint-encodings"
VERSION = 3  # 2: the ids as JSON lists, a list per text; 1: all ids in one list, with counts


def entry_path(file_key: str, tokenizer_key: str, folder: str | None = None) -> Path:
    """Where the entry of a file (its analysis key) under a tokenizer (its encoding_key) is kept
    (`folder`: entry_folder(tokenizer_key), where the caller has it)."""
    return Path(f"{folder or entry_folder(tokenizer_key)}/{file_key[:40]}.json")


def entry_folder(tokenizer_key: str) -> str:
    """The folder of a tokenizer's entries (one per format version: pcdlint versions that share
    a cache do not rewrite each other's entries in turn)."""
    return str(cache_dir() / "encodings" / f"v{VERSION}-{tokenizer_key[:16]}")


def encoded_files(keys: Sequence[str], tokenizer: LoadedTokenizer) -> list[bool]:
    """Per file key: whether the encoding cache holds an entry for it under this tokenizer (not
    read: a pool sizes its work by it)."""
    tokenizer_key = tokenizer.encoding_key if any(keys) else None
    if tokenizer_key is None:
        return [False] * len(keys)
    folder = entry_folder(tokenizer_key)
    return [bool(key) and os.path.isfile(f"{folder}/{key[:40]}.json") for key in keys]


def _key(file_key: str, tokenizer_key: str) -> str:
    return f"{VERSION}|{tokenizer_key}|{file_key}"


def load(
    file_key: str, tokenizer_key: str, vocab: int, folder: str | None = None
) -> tuple[dict[str, tuple[int, ...]], list[str]] | None:
    """(the entry's texts and their ids, the reading keys it holds every text of), or None (no
    entry, or not a valid one: see above). `vocab`: every id is below it."""
    checked = read_checked(
        entry_path(file_key, tokenizer_key, folder), {"format": FORMAT, "key": _key(file_key, tokenizer_key)}
    )
    if checked is None or type(checked[0].get("readings")) is not list:
        return None
    encoded = unpack(checked[1], vocab)
    return None if encoded is None else (encoded, [str(r) for r in checked[0]["readings"]])


# An entry's payload: one JSON line {"texts": [...], "groups": [[n, count], ...]}, the texts in
# order of their number of ids (`count` texts of `n` ids each, group after group), then every
# id, in the texts' order, as 4-byte little-endian unsigned ints. Reading it back makes one
# tuple per text straight from the ids (a group's by zip), with none of the per-id type checks
# that the ids as JSON lists needed: a third of the time of version 2 (docs/benchmarks.md).
_U32 = "I" if array("I").itemsize == 4 else "L"  # (a 4-byte unsigned int)


def pack(encoded: Mapping[str, Sequence[int]]) -> bytes:
    """The payload of the texts `encoded` (ASCII) and their ids (see above)."""
    texts = sorted(encoded, key=lambda text: len(encoded[text]))
    groups = [[n, len(list(same))] for n, same in groupby(len(encoded[t]) for t in texts)]
    ids = array(_U32, chain.from_iterable(encoded[t] for t in texts))
    if sys.byteorder == "big":
        ids.byteswap()
    return _dumps({"texts": texts, "groups": groups}) + b"\n" + ids.tobytes()


def unpack(payload: bytes, vocab: int) -> dict[str, tuple[int, ...]] | None:
    """The {text: ids} of a payload `pack` made, or None where it is not one: a line that is not
    JSON of that shape, a text not ASCII, groups that do not add up to the texts and the ids,
    an id not below `vocab`."""
    line, _, packed = payload.partition(b"\n")
    try:
        data = _loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    texts, groups = data.get("texts"), data.get("groups")
    if not (type(texts) is list and type(groups) is list) or set(map(type, texts)) - {str}:
        return None
    if not "".join(texts).isascii() or not all(type(g) is list and len(g) == 2 for g in groups):
        return None
    sizes = list(chain.from_iterable(groups))
    if set(map(type, sizes)) - {int} or min(sizes, default=0) < 0:
        return None
    if sum(sizes[1::2]) != len(texts) or 4 * sum(n * count for n, count in groups) != len(packed):
        return None
    ids = array(_U32)
    ids.frombytes(packed)
    if sys.byteorder == "big":
        ids.byteswap()
    every = tuple(ids)
    if every and max(every) >= vocab:
        return None
    encoded: dict[str, tuple[int, ...]] = {}
    text_at = id_at = 0
    for n, count in groups:
        part = texts[text_at : text_at + count]
        if n:
            group = iter(every[id_at : id_at + n * count])
            encoded.update(zip(part, zip(*[group] * n)))  # (each tuple: n ids in turn)
        else:
            encoded.update(dict.fromkeys(part, ()))
        text_at, id_at = text_at + count, id_at + n * count
    return encoded


def _loads(payload: bytes) -> object:
    try:
        import orjson
    except ImportError:  # (a core dependency; without it, json reads the same)
        return json.loads(payload)
    return orjson.loads(payload)


def _dumps(data: dict) -> bytes:
    try:
        import orjson
    except ImportError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()
    return orjson.dumps(data)  # (ASCII texts: the same bytes as json's, no line break)


def store(
    file_key: str, tokenizer_key: str, encoded: Mapping[str, Sequence[int]], readings: Sequence[str] = ()
) -> None:
    """Write the entry: `encoded`, the ASCII texts the file read and their ids, with the reading
    keys of the runs whose every text it holds. A cache that cannot be written only costs speed."""
    if not "".join(encoded).isascii():  # (every text, told in one pass)
        encoded = {text: ids for text, ids in encoded.items() if text.isascii()}
    header = {"format": FORMAT, "key": _key(file_key, tokenizer_key), "readings": list(readings)}
    write_checked(entry_path(file_key, tokenizer_key), header, pack(encoded))


def missing(read: Iterable[str], kept: Mapping[str, object] | None) -> bool:
    """Whether a file read an ASCII text that its entry `kept` lacks: then the entry is written
    again."""
    new = set(read)
    if kept is not None:
        new.difference_update(kept)
    return any(map(str.isascii, new))


class RunEncodings:
    """The encoding cache over one lint run's files: each file's entry loaded into the memo of
    every tokenizer with an encoding_key, what the file reads recorded (`file`), and the entries
    that lacked a text written again (`store`). A file without a key (stdin, a Python object,
    `--no-cache`) is neither read nor written.

    `reading`: a digest of what decides which texts a lint reads besides the file and the
    tokenizer (the rules, their options, the engines: LintOptions.reading_key). An entry lists
    the reading keys whose runs it holds every text of (up to READINGS, the latest first): under
    one of them it is `complete`, and the linter does not gather the file's texts again; under
    another, what the run reads is added to it (a pre-commit run and a CI run with other rules
    then share one entry instead of rewriting it in turn)."""

    READINGS = 4

    def __init__(self, keys: Sequence[str], tokenizers: Sequence[LoadedTokenizer], reading: str = "") -> None:
        self._keys, self._reading = keys, reading
        self._tokenizers = [(t, t.encoding_key) for t in tokenizers if any(keys) and t.encoding_key]
        self._kept: dict[tuple[int, int], tuple[dict[str, tuple[int, ...]], list[str]] | None] = {}
        self._reads: dict[tuple[int, int], list[str]] = {}
        for k, (tokenizer, tokenizer_key) in enumerate(self._tokenizers):
            assert tokenizer_key is not None
            folder = entry_folder(tokenizer_key)
            for index, file_key in enumerate(keys):
                if not file_key:
                    continue
                found = self._kept[k, index] = load(file_key, tokenizer_key, tokenizer.vocab_size, folder)
                if found:
                    tokenizer.preload(found[0])

    def complete(self, index: int, tokenizer: LoadedTokenizer) -> bool:
        """Whether file `index`'s entry, loaded, holds every text its lint asks of `tokenizer`."""
        for k, (held, _) in enumerate(self._tokenizers):
            if held is tokenizer:
                found = self._kept.get((k, index))
                return bool(self._reading) and found is not None and self._reading in found[1]
        return False

    @contextmanager
    def file(self, index: int) -> Iterator[None]:
        """Record what the tokenizers are asked meanwhile as file `index`'s reads."""
        if not self._keys[index] or not self._tokenizers:
            yield
            return
        with ExitStack() as stack:
            for k, (tokenizer, _) in enumerate(self._tokenizers):
                stack.enter_context(tokenizer.recording(self._reads.setdefault((k, index), [])))
            yield

    def store(self) -> None:
        """Write the entry of each file that read a text its entry lacked, or whose entry does
        not list this run's reading key: its texts and those read now, with the reading keys it
        is complete for (this run's first; past READINGS of them, only what this run read)."""
        for (k, index), read in self._reads.items():
            tokenizer, tokenizer_key = self._tokenizers[k]
            texts, readings = self._kept.get((k, index)) or ({}, [])
            listed = self._reading in readings
            if read and (missing(read, texts) or not listed):
                assert tokenizer_key is not None
                readings = [self._reading, *(r for r in readings if r != self._reading)]
                if len(readings) > self.READINGS:  # (too many: only this run's texts, from now)
                    texts, readings = {}, [self._reading]
                memo = tokenizer.memo_view()
                distinct = dict.fromkeys(read)
                found = dict(zip(distinct, map(memo.get, distinct)))
                if None in found.values():  # (a text the memo no longer holds: left out)
                    found = {t: ids for t, ids in found.items() if ids is not None}
                encoded = {**texts, **cast("dict[str, tuple[int, ...]]", found)}
                store(self._keys[index], tokenizer_key, encoded, readings)
