"""A report's per-row list kept on disk while a run goes, and written into the JSON report as a
stream: the memory of a run does not grow with its rows (``eval --backend systemone`` on a
million rows keeps its predictions here, not in a list).

``Spill`` is a sequence of JSON values backed by an anonymous temporary file (one compact JSON
value per line, deleted when closed or collected). ``auditor.reporting.json_stream`` writes a
JSON report with every ``Spill`` value streamed from its file, one compact row a line.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from typing import Any

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
        text = _COMPACT.encode(_strict(value))
    return text.encode("utf-8", "backslashreplace")


def _strict(value: Any) -> Any:
    """Non-finite floats as the report writer's strings (auditor.reporting.escape.strict_json)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value
