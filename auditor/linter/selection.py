"""Rule selection, the one implementation: `--select`/`--ignore`, config, per-file-ignores and
in-schema suppressions all name rules through these functions.

A selector is a code (`PCD001`), a code prefix ending in `*` (`PCD00*`; `PCD` alone and longer
prefixes need no star), a rule name (`first-token-collision`) or `ALL`. `PCD` with one or two
digits and no star (`PCD01`) is a usage error with a did-you-mean: it reads like a mistyped code,
and silently selecting PCD010-PCD019 let such a typo pass the gate. Between a select and an ignore that both match, the longer match wins (flake8's
rule); a name counts as one longer than the full code. A suppression entry names one rule
exactly, by code or name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from auditor.linter.registry import Rule, load_rules

_SHORT_PREFIX = re.compile(r"^PCD\d{1,2}$")  # needs a `*` to be a prefix


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
    prefix = token.upper().removesuffix("*")
    if not prefix or (not token.endswith("*") and _SHORT_PREFIX.match(prefix)):
        return 0
    if rule.code.startswith(prefix):
        return len(prefix)
    return 0


def find_rule(token: str, rules: Iterable[Rule] | None = None) -> Rule | None:
    """The rule a code or name stands for, or None."""
    return next((r for r in (load_rules().values() if rules is None else rules) if names(token, r)), None)


def known(selector: str) -> bool:
    """Whether the selector matches at least one rule."""
    return any(match_length(selector, r) for r in load_rules().values())


def unknown(selectors: Iterable[str]) -> list[str]:
    return [s for s in selectors if not known(s)]


def unknown_message(selector: str) -> str:
    """Why a selector names no rule, with a did-you-mean where one fits."""
    token = selector.strip()
    rules = list(load_rules().values())
    guesses: list[str] = []
    if _SHORT_PREFIX.match(token.upper()):
        prefixed = [r.code for r in rules if r.code.startswith(token.upper())]
        if prefixed:
            guesses.append(
                f"'{token.upper()}*' for {prefixed[0]}-{prefixed[-1]}"
                if len(prefixed) > 1
                else f"'{token.upper()}*' for {prefixed[0]}"
            )
        digits = token[3:]
        guesses += [
            r.code for r in rules if r.code.endswith(digits) and r.code[3:].lstrip("0") == digits.lstrip("0")
        ]
    import difflib  # (only for a selector that is wrong: not at every start-up)

    guesses += difflib.get_close_matches(token.lower(), [r.name for r in rules], n=1)
    hint = f"; did you mean {' or '.join(dict.fromkeys(guesses))}?" if guesses else ""
    return f"'{selector}' matches no rule{hint} (see `pcdlint rules`)"


def close_rules(token: str) -> list[str]:
    """The rules a code or name that names none was probably meant as (`explain PCD01`,
    `explain PCD0001`, `explain first-token-colision`): the code with the same number, else the
    nearest codes; and the nearest name."""
    import difflib  # (only for a name that is wrong: not at every start-up)

    token = token.strip()
    rules = list(load_rules().values())
    upper = token.upper()
    guesses: list[str] = []
    digits = upper[3:]
    if upper.startswith("PCD") and digits.isdigit():
        guesses += [r.code for r in rules if r.code[3:].lstrip("0") == digits.lstrip("0")]
    if not guesses:
        guesses += difflib.get_close_matches(upper, [r.code for r in rules], n=2, cutoff=0.8)
    guesses += difflib.get_close_matches(token.lower(), [r.name for r in rules], n=1)
    return list(dict.fromkeys(guesses))


def selects(select: Iterable[str], ignore: Iterable[str], rule: Rule) -> bool:
    best_select = max((match_length(s, rule) for s in select), default=0)
    best_ignore = max((match_length(s, rule) for s in ignore), default=0)
    return bool(best_select) and best_select > best_ignore


def selected_rules(select: Iterable[str], ignore: Iterable[str]) -> list[Rule]:
    select, ignore = list(select), list(ignore)
    return [r for r in load_rules().values() if selects(select, ignore, r)]
