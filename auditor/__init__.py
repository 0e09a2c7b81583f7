"""pcdlint: audit enum schemas and decision requests against LLM tokenizers.

The Python API is the plain function `auditor.lint(source, *, tokenizers=("qwen2.5",),
select=None, ignore=None, engine=None) -> LintResult` (docs: Python API). The linter itself is
the package `auditor.linter`; this root is the API layer above it and reporting, importing them
inside the call so that `import auditor` stays light. The version lives in `auditor.version`,
which every layer may import.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from auditor.version import __version__

if TYPE_CHECKING:
    from auditor.linter.api import LintResult

__all__ = ["LintResult", "__version__", "lint"]


def lint(
    source: Any,
    *,
    tokenizers: Iterable[str] = ("qwen2.5",),
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    engine: str | Iterable[str] | None = None,
) -> LintResult:
    """Lint one source (a path, a schema or request as a dict or text, a Pydantic model …) and
    return a `LintResult`, with the reporting layer's renderers attached for `to_json()` (the JSON
    v1 document) and `summary()` (the text report)."""
    from auditor.linter import api
    from auditor.reporting import render
    from auditor.reporting.json_format import run_to_dict

    run = api.lint_source(source, tokenizers=tokenizers, select=select, ignore=ignore, engine=engine)
    return api.LintResult(run, render, run_to_dict)


def __getattr__(name: str) -> Any:
    if name == "LintResult":
        from auditor.linter.api import LintResult

        return LintResult
    raise AttributeError(f"module 'auditor' has no attribute {name!r}")
