"""pcdlint: audit enum schemas against LLM tokenizers for parallel constrained decoding.

The Python API is `auditor.lint(source, *, tokenizers=("qwen2.5",), select=None, ignore=None,
engine=None) -> LintResult` (README, "Python API"). This package root is its layer (above lint
and reporting); what it needs is loaded with `importlib` on the first call — every lower module
imports this root for `__version__`, so a static import from here would be a cycle, and
`import auditor` stays light.
"""

import importlib

__version__ = "0.1.0"


def _lint(source, *, tokenizers=("qwen2.5",), select=None, ignore=None, engine=None):
    """`auditor.lint(...)`: lint one source (auditor.lint.api), with the reporting layer's
    renderers attached for `to_json()` (the JSON v1 document) and `summary()` (the text report)."""
    api = importlib.import_module("auditor.lint.api")
    reporting = importlib.import_module("auditor.reporting")
    json_format = importlib.import_module("auditor.reporting.json_format")
    run = api.lint_source(source, tokenizers=tokenizers, select=select, ignore=ignore, engine=engine)
    return api.LintResult(run, reporting.render, json_format.run_to_dict)


def __getattr__(name: str):
    if name == "lint":  # the package auditor.lint is callable: auditor.lint(Ticket) runs _lint
        return importlib.import_module("auditor.lint")
    if name == "LintResult":
        return importlib.import_module("auditor.lint.api").LintResult
    raise AttributeError(f"module 'auditor' has no attribute {name!r}")
