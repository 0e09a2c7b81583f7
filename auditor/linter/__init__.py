"""The linter: rule registry, selection, rule context, engine, suppressions, baseline, suggestions,
and the public Python API (`auditor.lint(...)`, see auditor.linter.api).

Rules (`auditor.rules`) import what they need from here and from `auditor.pcd`.

`auditor.lint(...)`, the public function, is defined in the package root (the API layer, above
reporting); this package is named `linter` so that nothing shadows it.
"""

from typing import Any

from auditor.linter.context import Finding, Location, RuleContext
from auditor.linter.registry import Rule, load_rules, rule, severity_rank
from auditor.linter.ruletools import at_site
from auditor.linter.selection import find_rule
from auditor.linter.suppressions import SuppressionUsage
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


def __getattr__(name: str) -> Any:
    if name == "LintResult":
        from auditor.linter.api import LintResult

        return LintResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
