"""The encoding cache: per file and tokenizer, the ids of the texts a lint of that file read.

A lint of a file encodes its options in several forms (remainders, field texts, suffixes, the
engines' plan texts). Their ids depend only on the texts and the tokenizer, so a warm run reads
them back instead of encoding them, and never builds tiktoken's tables for it (a tenth of a
second, more than the encoding: docs/benchmarks.md, "Issue 34"), nor loads the `tokenizers`
build for a text that is not ASCII (0.6-0.8 s). The linter (auditor.linter.engine) loads each
file's entry into the tokenizer's memo before it tokenizes, records the texts each file reads
(LoadedTokenizer.recording) and writes an entry again only where the file read a text its entry
lacked or the run's rule and engine settings are new to it (RunEncodings).

Only tokenizers with an `encoding_key` (the tiktoken-native built-ins, whose key is their rank
tables' digest, pcdlint's encoder and converter code and the `tokenizers` version) have entries.
An ASCII text's offsets follow from its ids; a text that is not ASCII keeps the offsets the
`tokenizers` build gave it, where the lint asked for them. An entry is keyed by the file's
analysis key (its bytes, pcdlint's parsing code) and the tokenizer's key; it is data only (one
JSON header line, then the payload: `pack`), untrusted as the analysis cache's entries are: a
missing, truncated, foreign or tampered entry (wrong format, version, key or checksum, counts
that do not add up, an id out of the vocabulary, offsets that do not fit their text) is ignored
and rewritten. A stale entry costs speed only: a text it lacks is encoded as in a cold run.
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
VERSION = 4  # 3: ASCII texts only; 2: the ids as JSON lists; 1: all ids in one list, with counts

Offsets = list[tuple[int, int]]  # a text's tokens' (begin, end) character offsets


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
) -> tuple[dict[str, tuple[int, ...]], dict[str, Offsets], list[str]] | None:
    """(the entry's texts and their ids, the offsets it keeps, the reading keys it holds every
    text of), or None (no entry, or not a valid one: see above). `vocab`: every id is below it."""
    checked = read_checked(
        entry_path(file_key, tokenizer_key, folder), {"format": FORMAT, "key": _key(file_key, tokenizer_key)}
    )
    if checked is None or type(checked[0].get("readings")) is not list:
        return None
    unpacked = unpack(checked[1], vocab)
    return None if unpacked is None else (*unpacked, [str(r) for r in checked[0]["readings"]])


# An entry's payload: one JSON line {"texts": [...], "groups": [[n, count], ...], "offsets":
# [[index, [begin, end, begin, end, ...]], ...]}, the texts in order of their number of ids
# (`count` texts of `n` ids each, group after group), then every id, in the texts' order, as
# 4-byte little-endian unsigned ints. Reading it back makes one tuple per text straight from the
# ids (a group's by zip), with none of the per-id type checks that the ids as JSON lists needed:
# a quarter of the time of version 2 (docs/benchmarks.md). "offsets": the character offsets of
# each token of the texts (by index) that are not ASCII, where they were asked for.
_U32 = "I" if array("I").itemsize == 4 else "L"  # (a 4-byte unsigned int)


def pack(
    encoded: Mapping[str, Sequence[int]], offsets: Mapping[str, Sequence[Sequence[int]]] | None = None
) -> bytes:
    """The payload of the texts `encoded` and their ids, with the `offsets` of those that are
    not ASCII (see above)."""
    texts = sorted(encoded, key=lambda text: len(encoded[text]))
    groups = [[n, len(list(same))] for n, same in groupby(len(encoded[t]) for t in texts)]
    ids = array(_U32, chain.from_iterable(encoded[t] for t in texts))
    if sys.byteorder == "big":
        ids.byteswap()
    kept = offsets or {}
    spans = [
        [index, list(chain.from_iterable(kept[text]))]
        for index, text in enumerate(texts)
        if text in kept and not text.isascii()
    ]
    return _dumps({"texts": texts, "groups": groups, "offsets": spans}) + b"\n" + ids.tobytes()


def unpack(payload: bytes, vocab: int) -> tuple[dict[str, tuple[int, ...]], dict[str, Offsets]] | None:
    """({text: ids}, {text: offsets}) of a payload `pack` made, or None where it is not one: a
    line that is not JSON of that shape, groups that do not add up to the texts and the ids, an
    id not below `vocab`, offsets that are not a pair per id within their text."""
    line, _, packed = payload.partition(b"\n")
    try:
        data = _loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    texts, groups, spans = data.get("texts"), data.get("groups"), data.get("offsets")
    if not (type(texts) is list and type(groups) is list and type(spans) is list):
        return None
    if set(map(type, texts)) - {str} or not all(type(g) is list and len(g) == 2 for g in groups):
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
    offsets: dict[str, Offsets] = {}
    for item in spans:
        if not (type(item) is list and len(item) == 2 and type(item[0]) is int and 0 <= item[0] < len(texts)):
            return None
        text, flat = texts[item[0]], item[1]
        if not fits(text, len(encoded[text]), flat):
            return None
        offsets[text] = list(zip(flat[::2], flat[1::2]))
    return encoded, offsets


def fits(text: str, tokens: int, flat: object) -> bool:
    """Whether `flat` holds a (begin, end) pair of ints per token, within `text`: offsets an
    entry may keep."""
    return (
        type(flat) is list
        and len(flat) == 2 * tokens
        and not set(map(type, flat)) - {int}
        and all(0 <= begin <= end <= len(text) for begin, end in zip(flat[::2], flat[1::2]))
    )


def storable(text: str) -> bool:
    """Whether a text can be kept (UTF-8 has it: a lone surrogate, from an undecodable file
    name or an escape, cannot)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    return orjson.dumps(data)  # (on one line: a line break inside a text is escaped)


def store(
    file_key: str,
    tokenizer_key: str,
    encoded: Mapping[str, Sequence[int]],
    readings: Sequence[str] = (),
    offsets: Mapping[str, Sequence[Sequence[int]]] | None = None,
) -> None:
    """Write the entry: `encoded`, the texts the file read and their ids, and the `offsets` of
    those that are not ASCII (where known), with the reading keys of the runs whose every text
    it holds. A cache that cannot be written only costs speed."""
    if not "".join(encoded).isascii():  # (every text, told in one pass)
        encoded = {text: ids for text, ids in encoded.items() if storable(text)}
    header = {"format": FORMAT, "key": _key(file_key, tokenizer_key), "readings": list(readings)}
    write_checked(entry_path(file_key, tokenizer_key), header, pack(encoded, offsets))


def missing(read: Iterable[str], kept: Mapping[str, object] | None) -> bool:
    """Whether a file read a text that its entry `kept` lacks (and could keep): then the entry
    is written again."""
    new = set(read)
    if kept is not None:
        new.difference_update(kept)
    return any(map(storable, new))


def new_offsets(
    read: Sequence[str],
    known: Mapping[str, Offsets],
    memo: Mapping[str, tuple[int, ...]],
    kept: Mapping[str, object],
) -> dict[str, Offsets]:
    """The offsets of the texts read that are not ASCII, `known` now (the tokenizer's), not
    `kept` by the entry, and fit to keep: an entry that lacks them is written again."""
    if "".join(read).isascii():
        return {}
    found = {}
    for text in dict.fromkeys(read):
        if text.isascii() or text in kept or not storable(text):
            continue
        spans, ids = known.get(text), memo.get(text)
        if spans is not None and ids is not None and fits(text, len(ids), [*chain.from_iterable(spans)]):
            found[text] = spans
    return found


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
        self._kept: dict[
            tuple[int, int], tuple[dict[str, tuple[int, ...]], dict[str, Offsets], list[str]] | None
        ] = {}
        self._reads: dict[tuple[int, int], list[str]] = {}
        for k, (tokenizer, tokenizer_key) in enumerate(self._tokenizers):
            assert tokenizer_key is not None
            folder = entry_folder(tokenizer_key)
            for index, file_key in enumerate(keys):
                if not file_key:
                    continue
                found = self._kept[k, index] = load(file_key, tokenizer_key, tokenizer.vocab_size, folder)
                if found:
                    tokenizer.preload(found[0], found[1])

    def complete(self, index: int, tokenizer: LoadedTokenizer) -> bool:
        """Whether file `index`'s entry, loaded, holds every text its lint asks of `tokenizer`."""
        for k, (held, _) in enumerate(self._tokenizers):
            if held is tokenizer:
                found = self._kept.get((k, index))
                return bool(self._reading) and found is not None and self._reading in found[2]
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
            texts, spans, readings = self._kept.get((k, index)) or ({}, {}, [])
            if not read:
                continue
            memo, known = tokenizer.memo_view(), tokenizer.offsets_view()
            more = new_offsets(read, known, memo, spans)
            if missing(read, texts) or more or self._reading not in readings:
                assert tokenizer_key is not None
                readings = [self._reading, *(r for r in readings if r != self._reading)]
                if len(readings) > self.READINGS:  # (too many: only this run's texts, from now)
                    texts, spans, readings = {}, {}, [self._reading]
                    more = new_offsets(read, known, memo, spans)
                distinct = dict.fromkeys(read)
                found = dict(zip(distinct, map(memo.get, distinct)))
                if None in found.values():  # (a text the memo no longer holds: left out)
                    found = {t: ids for t, ids in found.items() if ids is not None}
                encoded = {**texts, **cast("dict[str, tuple[int, ...]]", found)}
                store(self._keys[index], tokenizer_key, encoded, readings, {**spans, **more})
