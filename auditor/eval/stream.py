"""Labeled data of any size, read as a stream: JSONL lines and CSV records, one at a time.

What `pcdlint eval` reads for ``--data``, on the schema path and the decision path alike:

- a regular file only: a FIFO, a device (``/dev/zero``), a socket or a directory is refused with
  one line before anything is read (a FIFO would block, ``/dev/zero`` never ends);
- no limit on the file's size: it is read in lines, never whole, and memory does not grow with
  the number of rows;
- a limit on one row's bytes (``--max-row-bytes``, default ``DEFAULT_MAX_ROW_BYTES``): a row over
  it is never held in memory (its bytes are read and dropped) and becomes one *failed row* of the
  report, not an error of the run;
- JSONL lines end at ``\\n`` only, as JSON defines them (U+2028, U+2029, NEL and form feed are
  text inside a JSON string; ``str.splitlines`` would split there); a ``\\r`` before the ``\\n`` is
  dropped; a UTF-8 byte-order mark at the start is skipped;
- a CSV record ends at a newline outside quotes (RFC 4180: a quote inside a quoted cell is
  doubled, so the count of ``"`` tells), so a cell may hold newlines and be as long as the row
  limit;
- the file's SHA-256 (``DataStream.file_digest``) says which data a report measured, so shards of
  one run can be told from shards of another; its size and time (``stamp``) tell a file that
  changed during a run.

What a row must hold, and what is an input error (exit 2, one line), is each path's own reader
(``auditor.eval.data`` for schemas, ``auditor.eval.decisions`` for decision requests); both parse
a JSONL line through ``parse_json_line``: nesting and integer digits bounded, a lone surrogate
refused, every message a line with long values cut.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from auditor.errors import InputFileError, UsageError
from auditor.limits import MAX_DEPTH, MAX_ROW_BYTES, file_kind, nesting_depth
from auditor.paths import resolve_path
from auditor.shown import shorten

DEFAULT_MAX_ROW_BYTES = MAX_ROW_BYTES  # one row (a JSONL line, a CSV record) at most
READ_CHUNK = 1 << 20  # the bytes of a row over the limit are read and dropped this many at a time
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Oversized:
    """A row over the byte limit: its size, never its bytes."""

    size: int
    limit: int
    quotes: int = 0  # its count of '"' (where a CSV record ends)

    @property
    def error(self) -> str:
        return f"row is {self.size:,} bytes, over the limit of {self.limit:,} (--max-row-bytes); not read"


class DataStream:
    """One labeled-data file, checked at once and read (any number of times) as a stream."""

    def __init__(
        self, path: str | os.PathLike, max_row_bytes: int = DEFAULT_MAX_ROW_BYTES, flag: str = "--data"
    ):
        self.given = os.fspath(path)
        self.display = shorten(str(self.given))
        self.path = resolve_path(path, flag)
        self.max_row_bytes = max_row_bytes
        self.digest: str | None = None  # SHA-256 of the file, once file_digest read it
        self.csv = self.path.suffix.lower() == ".csv"
        self._check()

    def _check(self) -> None:
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise UsageError(f"{self.display}: cannot read file ({exc.strerror or exc})") from None
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"{self.display}: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{self.display}: not a regular file ({file_kind(info.st_mode)})")

    def _open(self) -> BinaryIO:
        self._check()
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        except OSError as exc:
            raise UsageError(f"{self.display}: cannot read file ({exc.strerror or exc})") from None
        handle = os.fdopen(fd, "rb", buffering=READ_CHUNK)
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped after the check
            handle.close()
            raise UsageError(f"{self.display}: not a regular file")
        return handle

    def lines(self) -> Iterator[tuple[int, bytes | Oversized]]:
        """(line number, the line's bytes without its end) per line; ``Oversized`` for a line over
        the limit."""
        limit = self.max_row_bytes
        with self._open() as handle:
            number = 0
            try:
                while True:
                    line = handle.readline(limit + 2)  # the row, a \r and the \n
                    if not line:
                        break
                    number += 1
                    if number == 1 and line.startswith(_BOM):
                        line = line[len(_BOM) :]
                    if line.endswith(b"\n") or len(line) <= limit:
                        body = line.removesuffix(b"\n").removesuffix(b"\r")
                        if len(body) <= limit:
                            yield number, body
                            continue
                    size = len(line)
                    quotes = line.count(b'"')
                    while not line.endswith(b"\n"):
                        line = handle.readline(READ_CHUNK)
                        if not line:
                            break
                        size += len(line)
                        quotes += line.count(b'"')
                    yield number, Oversized(size - 1 if line.endswith(b"\n") else size, limit, quotes)
            except OSError as exc:
                raise UsageError(f"{self.display}: cannot read file ({exc.strerror or exc})") from None

    def file_digest(self) -> str:
        """The SHA-256 of the whole file (read in chunks), kept in ``digest``."""
        hasher = hashlib.sha256()
        with self._open() as handle:
            try:
                while chunk := handle.read(READ_CHUNK):
                    hasher.update(chunk)
            except OSError as exc:
                raise UsageError(f"{self.display}: cannot read file ({exc.strerror or exc})") from None
        self.digest = hasher.hexdigest()
        return self.digest

    def stamp(self) -> tuple[int, int] | None:
        """The file's size and modification time: compared after a run to tell it changed."""
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_size, info.st_mtime_ns

    def csv_records(self) -> Iterator[tuple[int, str | Oversized]]:
        """(first line number, the record's text) per CSV record; a record over the limit (one of
        its lines, or all together) as ``Oversized``. A record ends at a newline outside quotes."""
        parts: list[bytes] = []
        start, size, quotes, over = 0, 0, 0, False
        for number, line in self.lines():
            if not parts and not over:
                start = number
            if isinstance(line, Oversized):
                over = True
                size += line.size + 1
                quotes += line.quotes
            else:
                size += len(line) + 1
                quotes += line.count(b'"')
                if not over:
                    parts.append(line)
                if size - 1 > self.max_row_bytes:
                    over, parts = True, []
            if quotes % 2:
                continue  # inside a quoted cell: the record goes on
            if over:
                yield start, Oversized(size - 1, self.max_row_bytes)
            else:
                yield start, self._text(b"\n".join(parts), start)
            parts, size, quotes, over = [], 0, 0, False
        if parts or over:  # an unclosed quote at the end of the file
            raise UsageError(f"{self.display}:{start}: invalid CSV: a quoted cell is not closed")

    def _text(self, raw: bytes, number: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{self.display}:{number}: not UTF-8 text (byte {exc.start})") from None

    def json_lines(self) -> Iterator[tuple[int, dict | Oversized]]:
        """(line number, the parsed object) per non-blank JSONL line (``parse_json_line``)."""
        for number, line in self.lines():
            if isinstance(line, Oversized):
                yield number, line
                continue
            if not line.strip():
                continue
            yield number, parse_json_line(self._text(line, number), f"{self.display}:{number}")


def parse_json_line(text: str, where: str) -> Any:
    """One JSONL row's value, or a one-line UsageError: invalid JSON, nesting over ``MAX_DEPTH``
    (or the interpreter's stack), an integer past Python's digit limit, a lone surrogate."""
    try:
        record = json.loads(text)
        depth = nesting_depth(record)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise UsageError(f"{where}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise UsageError(f"{where}: invalid JSON value: {shorten(str(exc), 80)}") from None
    if depth > MAX_DEPTH:
        raise UsageError(f"{where}: nested {depth} levels deep, over the limit of {MAX_DEPTH}")
    if "\\u" in text:  # only an escape can write a lone surrogate, which no tokenizer encodes
        from auditor.schema.documents import check_unicode

        try:
            check_unicode(record, where)
        except InputFileError as exc:
            raise UsageError(str(exc)) from None
    return record


def data_identity(stream: DataStream) -> dict:
    """What a report says of the data it measured: its path as given, its size and its digest."""
    try:
        size = Path(stream.path).stat().st_size
    except OSError:
        size = None
    return {"path": stream.given, "bytes": size, "sha256": stream.digest}
