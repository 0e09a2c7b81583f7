"""Writing reports and baselines: atomic, and never over a file the user asked us to lint."""

from __future__ import annotations

import os
from pathlib import Path

from auditor.errors import UsageError


def write_report(text: str, target: str, flag: str, inputs: list[str]) -> None:
    """Write `text` to `target` atomically; `flag` names the option in error messages."""
    path = Path(target)
    resolved = path.resolve()
    if any(Path(p).resolve() == resolved for p in inputs):
        raise UsageError(f"{flag} {target}: refusing to overwrite an input file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"{flag} {target}: cannot write ({exc.strerror or exc})") from None
