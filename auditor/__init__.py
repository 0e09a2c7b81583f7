"""pcdlint: audit enum schemas and decision requests against LLM tokenizers.

The Python API is the plain function `auditor.lint(source, *, tokenizers=("qwen2.5",),
select=None, ignore=None, engine=None) -> LintResult` (docs: Python API). The linter itself is
the package `auditor.linter`; this root is the API layer above it and reporting, loading them
with `importlib` on the first call so that `import auditor` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

from auditor.version import __version__

__all__ = ["LintResult", "__version__", "lint"]


def lint(source, *, tokenizers=("qwen2.5",), select=None, ignore=None, engine=None) -> Any:
    """Lint one source (a path, a schema or request as a dict or text, a Pydantic model …) and
    return a `LintResult`, with the reporting layer's renderers attached for `to_json()` (the JSON
    v1 document) and `summary()` (the text report)."""
    api = importlib.import_module("auditor.linter.api")
    reporting = importlib.import_module("auditor.reporting")
    json_format = importlib.import_module("auditor.reporting.json_format")
    run = api.lint_source(source, tokenizers=tokenizers, select=select, ignore=ignore, engine=engine)
    return api.LintResult(run, reporting.render, json_format.run_to_dict)


def __getattr__(name: str):
    if name == "LintResult":
        return importlib.import_module("auditor.linter.api").LintResult
    raise AttributeError(f"module 'auditor' has no attribute {name!r}")
