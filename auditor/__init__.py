"""pcdlint: audit enum schemas against LLM tokenizers for parallel constrained decoding.

`auditor.lint(source, ...)` is the Python API (auditor.lint.api); it is imported on first use,
so `import auditor` stays light.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "lint":  # the package auditor.lint is callable: auditor.lint(Ticket)
        import auditor.lint as package

        return package
    if name == "LintResult":
        from auditor.lint.api import LintResult

        return LintResult
    raise AttributeError(f"module 'auditor' has no attribute {name!r}")
