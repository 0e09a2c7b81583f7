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
    suggestions: bool = False  # shows verified fix suggestions (LintOptions.suggestions)
    details: bool = False  # shows finding data (LintOptions.details)


# The registry's names: every format `check -f` writes → the module that registers its
# formatter, in the order help lists them (known without importing a formatter: the CLI builds
# its choices from them at start-up).
FORMAT_MODULES: dict[str, str] = {
    "text": "text",
    "json": "json_format",
    "csv": "csv_format",
    "sarif": "sarif",
    "github": "github",
    "html": "html",
    "junit": "junit",
}
# The formats of the commands that write their own reports (not a LintRun's formatters).
COMMAND_FORMATS: dict[str, tuple[str, ...]] = {
    "verify": ("text", "json"),
    "suggest": ("text", "json"),
    "conform": ("text", "json"),
    "engines": ("text", "json"),
    "tokenizers": ("text", "json"),
    "eval": ("text", "json", "html"),
    "eval-merge": ("text", "json"),
}
_FORMATTERS: dict[str, Formatter] = {}


def command_formats(command: str) -> list[str]:
    """The formats `command`'s -f/--format takes, in help order (`check`: every formatter)."""
    return list(FORMAT_MODULES) if command == "check" else list(COMMAND_FORMATS[command])


def formatter(
    name: str,
    description: str,
    render_bytes: Callable[..., bytes] | None = None,
    *,
    suggestions: bool = False,
    details: bool = False,
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    if name not in FORMAT_MODULES:
        raise ValueError(f"formatter {name!r} is not in FORMAT_MODULES")

    def register(render: Callable[..., str]) -> Callable[..., str]:
        _FORMATTERS[name] = Formatter(name, render, description, render_bytes, suggestions, details)
        return render

    return register


def formatters() -> dict[str, Formatter]:
    # import every module, even when one was imported directly first and registered alone
    for module in FORMAT_MODULES.values():
        importlib.import_module(f"auditor.reporting.{module}")
    return {name: _FORMATTERS[name] for name in FORMAT_MODULES}


def render(name: str, run: LintRun, **options: Any) -> str:
    return formatters()[name].render(run, **options)


def render_output(name: str, run: LintRun, **options: Any) -> str | bytes:
    """What the CLI writes for format `name`: the formatter's bytes where it makes them (the
    output writer writes them as they are), else its text (escaped for the sink)."""
    found = formatters()[name]
    if found.render_bytes is not None:
        return found.render_bytes(run, **options)
    return found.render(run, **options)
