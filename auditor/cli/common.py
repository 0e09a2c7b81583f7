"""Helpers every subcommand shares: option lists, report output, usage errors."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from auditor.exitcodes import EXIT_USAGE
from auditor.reporting.outputs import write_error, write_report, write_stdout


def split_values(values: tuple[str, ...]) -> list[str]:
    """`--select PCD001,PCD002 --select too-many-options` → a flat list."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def write_output(
    text: str | bytes,
    output: str | None,
    inputs: list[str],
    color: bool = False,
    flag: str = "--output",
    kind: str = "text",
) -> None:
    """The final sink of every report: escaped for `kind` (auditor.reporting.escape), written
    by the one output writer (auditor.reporting.outputs)."""
    if output is None:
        write_stdout(text, kind, color)
        return
    write_report(text, output, flag, inputs, kind, color)


def color_stdout() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return sys.stdout is not None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def fail(message: str) -> NoReturn:
    write_error(f"pcdlint: error: {message}")
    sys.exit(EXIT_USAGE)
