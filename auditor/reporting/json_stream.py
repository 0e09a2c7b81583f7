"""A JSON report whose per-row lists stream from disk (``auditor.eval.spill.Spill``): its bytes
as the project's writer makes them (``auditor.reporting.json_text``), in pieces, never joined in
memory (``auditor.reporting.outputs.Chunks`` writes them)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator

from auditor.eval.spill import Spill
from auditor.reporting.json_text import dumps_strict_bytes

# a placeholder string no report holds (a random token per process), replaced by the list
_MARK = "\ue000pcdlint-spill-" + secrets.token_hex(16) + "-{}\ue000"


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
