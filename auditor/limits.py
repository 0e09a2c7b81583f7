"""The limits every reader of user files shares (docs/security.md, "Input limits"): the size of
a file read whole, the nesting of the values parsed from it, and the one way a file is read
(a regular file only, never more than the limit).

Below every layer, so that the schema readers (auditor.schema.documents), the chat-template and
tokenizer-config readers (auditor.tokenizers.templates) and the eval data reader apply the same.
"""

from __future__ import annotations

import json
import os
import stat
from itertools import chain
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 20_000_000
MAX_DEPTH = 1_000  # nesting of objects/arrays; real schemas stay far below
# `eval --data` is read as a stream, of any size: one row (a JSONL line, a CSV record) at most
# this many bytes (--max-row-bytes); a larger row is a failed row (auditor.eval.stream)
MAX_ROW_BYTES = 16 * 1024 * 1024
MAX_SHARDS = 4096  # `eval --shard I/N`: N at most


def nesting_depth(data: Any) -> int:
    """Deepest nesting of objects and arrays, counted without recursion: one level at a time,
    each level the objects and arrays inside the one above."""
    depth, level = 0, [data] if isinstance(data, (dict, list)) else []
    while level:
        depth += 1
        children = chain.from_iterable(node.values() if isinstance(node, dict) else node for node in level)
        level = [child for child in children if isinstance(child, (dict, list))]
    return depth


class Unreadable(Exception):
    """Why `read_regular` read nothing: `reason`, one phrase (`is a directory`, `not a regular
    file (a FIFO)`, `file is N bytes, over the limit of M`, `cannot read file (…)`)."""

    def __init__(self, reason: str, over_limit: bool = False):
        super().__init__(reason)
        self.reason, self.over_limit = reason, over_limit


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or Unreadable.

    FIFOs, devices and sockets are never opened (a FIFO blocks, /dev/zero never ends); the file
    is opened without following a FIFO swapped in after the check (O_NONBLOCK) and read only up
    to the limit, so a file that grows cannot exhaust memory either."""
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise Unreadable("is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"not a regular file ({file_kind(info.st_mode)})")
        if info.st_size > limit:
            raise Unreadable(f"file is {info.st_size:,} bytes, over the limit of {limit:,}", True)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise Unreadable("not a regular file")
            raw = handle.read(limit + 1)
    except IsADirectoryError:
        raise Unreadable("is a directory") from None
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot read file ({getattr(exc, 'strerror', None) or exc})") from None
    if len(raw) > limit:
        raise Unreadable(f"file is over the limit of {limit:,} bytes", True)
    return raw


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


def load_json(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads, with every way a hostile text fails it one ValueError of one line: invalid
    JSON, an integer past Python's digit limit, nesting past `max_depth` (or past the
    interpreter's stack, which the C parser checks)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than the limit of {max_depth:,} levels") from None
    except ValueError as exc:  # (json.JSONDecodeError; an integer of too many digits)
        raise ValueError(str(exc).splitlines()[0][:200] if str(exc) else "invalid JSON") from None
    depth = nesting_depth(data)
    if depth > max_depth:
        raise ValueError(f"nested {depth:,} levels deep, over the limit of {max_depth:,}")
    return data
