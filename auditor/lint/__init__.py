"""The linter: rule registry, selection, rule context, engine, suppressions, baseline, suggestions,
and the public Python API (`auditor.lint(...)`, see auditor.lint.api).

Rules (`auditor.rules`) import what they need from here and from `auditor.pcd`.

`auditor.lint(...)`, the public function, is defined in the package root (the API layer, above
reporting). Importing any submodule of this package binds the package, not a function, to the
name `auditor.lint`; so the package is made callable (its module class gets a `__call__`) and
forwards the call to the root, which is always loaded before this package is.
"""

import sys
import types

from auditor.lint.context import Finding, Location, RuleContext
from auditor.lint.registry import Rule, load_rules, rule, severity_rank
from auditor.lint.ruletools import at_site
from auditor.lint.selection import find_rule
from auditor.lint.suppressions import SuppressionUsage
from auditor.schema.sites import FileModel, Site

__all__ = [
    "FileModel",
    "Finding",
    "LintResult",
    "Location",
    "Rule",
    "RuleContext",
    "Site",
    "SuppressionUsage",
    "at_site",
    "find_rule",
    "load_rules",
    "rule",
    "severity_rank",
]


class _CallableModule(types.ModuleType):
    def __call__(self, source, **kwargs):
        return sys.modules["auditor"]._lint(source, **kwargs)


sys.modules[__name__].__class__ = _CallableModule


def __getattr__(name: str):
    if name == "LintResult":
        from auditor.lint.api import LintResult

        return LintResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
