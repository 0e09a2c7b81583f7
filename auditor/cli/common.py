"""Helpers every subcommand shares: option lists, report output, usage errors."""

from __future__ import annotations

import os
import sys

import click

from auditor.exitcodes import EXIT_USAGE
from auditor.reporting.outputs import write_report


def split_values(values: tuple[str, ...]) -> list[str]:
    """`--select PCD001,PCD002 --select too-many-options` → a flat list."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def write_output(text: str, output: str | None, inputs: list[str], color: bool = False,
                  flag: str = "--output") -> None:
    if output is None:
        click.echo(text, nl=False, color=True if color else None)
        return
    write_report(text, output, flag, inputs)


def color_stdout() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def fail(message: str) -> None:
    click.echo(f"pcdlint: error: {message}", err=True)
    sys.exit(EXIT_USAGE)
