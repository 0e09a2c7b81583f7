"""The linter: rule registry, selection, rule context, engine, suppressions, baseline, suggestions.

Rules (`auditor.rules`) import what they need from here and from `auditor.pcd`.
"""

from auditor.lint.context import Finding, Location, RuleContext
from auditor.lint.registry import Rule, load_rules, rule, severity_rank
from auditor.lint.ruletools import at_site
from auditor.lint.selection import find_rule
from auditor.lint.suppressions import SuppressionUsage
from auditor.schema.sites import FileModel, Site

__all__ = [
    "FileModel",
    "Finding",
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
