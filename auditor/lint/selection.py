"""Rule selection, the one implementation: `--select`/`--ignore`, config, per-file-ignores and
in-schema suppressions all name rules through these functions.

A selector is a code (`PCD001`), a code prefix (`PCD00`), a rule name (`first-token-collision`)
or `ALL`. Between a select and an ignore that both match, the longer match wins (flake8's
rule); a name counts as one longer than the full code. A suppression entry names one rule
exactly, by code or name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from auditor.lint.registry import Rule, load_rules


class Named(Protocol):
    """A rule, or a finding (which carries its rule's code and name)."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...


def names(token: str, rule: Named) -> bool:
    """Whether `token` is exactly this rule's code or name."""
    token = token.strip()
    return token.upper() == rule.code or token.lower() == rule.name


def match_length(selector: str, rule: Named) -> int:
    """Length of the match (longest wins), 0 when the selector does not name this rule."""
    token = selector.strip()
    if not token:
        return 0
    if token.lower() == rule.name:
        return len(rule.code) + 1
    if token.upper() == "ALL":
        return len(rule.code)
    if rule.code.startswith(token.upper()):
        return len(token)
    return 0


def find_rule(token: str, rules: Iterable[Rule] | None = None) -> Rule | None:
    """The rule a code or name stands for, or None."""
    return next((r for r in (load_rules().values() if rules is None else rules) if names(token, r)), None)


def known(selector: str) -> bool:
    """Whether the selector matches at least one rule."""
    return any(match_length(selector, r) for r in load_rules().values())


def unknown(selectors: Iterable[str]) -> list[str]:
    return [s for s in selectors if not known(s)]


def selects(select: Iterable[str], ignore: Iterable[str], rule: Rule) -> bool:
    best_select = max((match_length(s, rule) for s in select), default=0)
    best_ignore = max((match_length(s, rule) for s in ignore), default=0)
    return bool(best_select) and best_select > best_ignore


def selected_rules(select: Iterable[str], ignore: Iterable[str]) -> list[Rule]:
    select, ignore = list(select), list(ignore)
    return [r for r in load_rules().values() if selects(select, ignore, r)]
