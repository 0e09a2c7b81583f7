"""Output formats by name. A formatter turns a finished LintRun into text; the CLI writes it
through the one output writer (outputs.py), escaped for its sink (escape.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from auditor.linter.engine import LintRun


@dataclass(frozen=True)
class Formatter:
    name: str
    render: Callable[..., str]
    description: str
    # the bytes a sink gets for `render`'s text, made without that text (JSON and SARIF: an
    # 18 MB report is written from orjson's bytes, not decoded to a str and encoded again)
    render_bytes: Callable[..., bytes] | None = None


_FORMATTERS: dict[str, Formatter] = {}
_MODULES = ("text", "json_format", "csv_format", "sarif", "github", "html", "junit")


def formatter(
    name: str, description: str, render_bytes: Callable[..., bytes] | None = None
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    def register(render: Callable[..., str]) -> Callable[..., str]:
        _FORMATTERS[name] = Formatter(name, render, description, render_bytes)
        return render

    return register


def formatters() -> dict[str, Formatter]:
    # import every module, even when one was imported directly first and registered alone
    for module in _MODULES:
        importlib.import_module(f"auditor.reporting.{module}")
    return _FORMATTERS


def render(name: str, run: LintRun, **options: Any) -> str:
    return formatters()[name].render(run, **options)


def render_output(name: str, run: LintRun, **options: Any) -> str | bytes:
    """What the CLI writes for format `name`: the formatter's bytes where it makes them (the
    output writer writes them as they are), else its text (escaped for the sink)."""
    found = formatters()[name]
    if found.render_bytes is not None:
        return found.render_bytes(run, **options)
    return found.render(run, **options)
