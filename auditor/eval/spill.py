"""A report's per-row list kept on disk while a run goes, and written into the JSON report as a
stream: the memory of a run does not grow with its rows (``eval --backend systemone`` on a
million rows keeps its predictions here, not in a list).

``Spill`` is a sequence of JSON values backed by an anonymous temporary file (one compact JSON
value per line, deleted when closed or collected). ``report_chunks`` gives the bytes of a JSON
report (the project's writer, ``auditor.reporting.json_text``) with every ``Spill`` value written
from its file, piece by piece, indented as the rest of the report.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from collections.abc import Iterator
from typing import Any

from auditor.reporting.escape import strict_json
from auditor.reporting.json_text import dumps_strict_bytes

# a placeholder string no report holds (a random token per process), replaced by the list
_MARK = "\ue000pcdlint-spill-" + secrets.token_hex(16) + "-{}\ue000"
BUFFER = 1 << 20
_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ": "))


class Spill:
    """An append-only list of JSON values on disk; ``len``, iteration and indexing read it back."""

    def __init__(self) -> None:
        # a large buffer: each flush is a system call that lets the coordinating thread wait
        # behind every worker thread for the interpreter lock
        self._file = tempfile.TemporaryFile(prefix="pcdlint-spill-", buffering=BUFFER)  # noqa: SIM115 (closed by close)
        self._count = 0

    def append(self, value: Any) -> None:
        self._file.write(_encode(value) + b"\n")
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        self._file.flush()
        self._file.seek(0)
        for _ in range(self._count):
            yield json.loads(self._file.readline())
        self._file.seek(0, 2)

    def __getitem__(self, index: int | slice) -> Any:
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, (list, Spill)) else NotImplemented

    def close(self) -> None:
        self._file.close()

    def lines(self) -> Iterator[bytes]:
        """Each value's compact JSON (bytes, no newline), in order."""
        self._file.flush()
        self._file.seek(0)
        for _ in range(self._count):
            yield self._file.readline().rstrip(b"\n")
        self._file.seek(0, 2)


def _encode(value: Any) -> bytes:
    try:
        text = _COMPACT.encode(value)
    except ValueError:  # a non-finite float: as the report writer writes it ("NaN")
        text = _COMPACT.encode(strict_json(value))
    return text.encode("utf-8", "backslashreplace")


def report_chunks(report: dict) -> Iterator[bytes]:
    """The JSON report's bytes (as ``dumps_strict_bytes`` writes it), its top-level ``Spill``
    values streamed from their files."""
    spills = {key: value for key, value in report.items() if isinstance(value, Spill)}
    if not spills:
        yield dumps_strict_bytes(report)
        return
    marks = {key: _MARK.format(index) for index, key in enumerate(spills)}
    head = dumps_strict_bytes({key: marks.get(key, value) for key, value in report.items()})
    for key, spill in spills.items():
        placeholder = json.dumps(marks[key], ensure_ascii=False).encode("utf-8")
        before, _, head = head.partition(placeholder)
        yield before
        if not len(spill):
            yield b"[]"
            continue
        yield b"["
        for index, line in enumerate(spill.lines()):
            yield (b",\n    " if index else b"\n    ") + line  # one row a line
        yield b"\n  ]"
    yield head
