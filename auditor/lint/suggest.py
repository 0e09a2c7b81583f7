"""Verified fix suggestions for first-token scoring problems.

A suggestion renames a field's options (or maps them to letter slots A, B, …). It is shown
only when the renamed field, re-linted with the same tokenizer and every site rule, has no
finding of severity warning or error. Input files are never modified.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from auditor.lint.context import RuleContext
from auditor.lint.registry import load_rules, severity_rank
from auditor.pcd.scoring import SiteTokens

FIXED_CODES = ("PCD001", "PCD002", "PCD005")
WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W_\d]+", re.UNICODE)


def _words(option: str) -> list[str]:
    return WORD.findall(option)


def _fold(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


def _candidates(options: list[str], slot_letters: tuple[str, ...]) -> list[tuple[str, str, list[str]]]:
    """(strategy, description, renamed options), most faithful first."""
    out = [("lowercase", "lower-case the options", [o.lower() for o in options])]
    words = [_words(o) for o in options]
    if all(words):
        lead = 0
        while all(len(w) > lead + 1 for w in words) and len({w[lead].lower() for w in words}) == 1:
            lead += 1
        trail = 0
        while (all(len(w) > lead + trail + 1 for w in words)
               and len({w[-1 - trail].lower() for w in words}) == 1):
            trail += 1
        core = [w[lead:len(w) - trail] for w in words]
        named = [[p for p in c if not p.isdigit()] or c for c in core]  # drop numeric codes
        out.append(("distinguishing-part", "keep only the part that tells options apart",
                    ["_".join(c).lower() for c in core]))
        out.append(("distinguishing-words", "drop shared words and numeric codes",
                    ["_".join(n).lower() for n in named]))
        out.append(("first-distinct-word", "one word per option, the distinguishing one first",
                    [n[0].lower() for n in named]))
        out.append(("distinct-word-first", "move the distinguishing part to the front",
                    ["_".join(c + w[:lead] + w[len(w) - trail:]).lower() for c, w in zip(core, words)]))
    if slot_letters:
        out.append(("letter-slots", "score single letters and map them back with a legend",
                    list(slot_letters[:len(options)])))
    return out


def _relint(tokens, options: list[str]) -> bool:
    """True when the field with these options has no warning or error under the tokenizer."""
    site = replace(tokens.site, options=options)
    candidate = SiteTokens(site, tokens.tokenizer)
    file: Any = SimpleNamespace(path=site.path, document=None)  # rules read only the path
    for rule in load_rules().values():
        if rule.scope != "site":
            continue
        # suggestions=False: re-linting a candidate must not look for suggestions of its own
        ctx = RuleContext(rule, dict(rule.options), file, site, tokens.tokenizer, rule.severity,
                          suggestions=False)
        if any(severity_rank(f.severity) >= 1 for f in rule.check(candidate, ctx)):
            return False
    return True


def verified_suggestions(tokens) -> list[dict]:
    """Suggestions for one field under one tokenizer, each re-linted clean before it is kept."""
    options = tokens.site.options
    if len(options) < 2 or not all(isinstance(o, str) for o in options):
        return []
    slots = tokens.slot_table
    found, seen = [], set()
    for strategy, description, renamed in _candidates(options, slots.letters if slots.viable else ()):
        key = tuple(renamed)
        if key == tuple(options) or key in seen or not all(renamed):
            continue
        seen.add(key)
        if len({_fold(r) for r in renamed}) != len(renamed) or not _relint(tokens, renamed):
            continue
        suggestion = {
            "strategy": strategy,
            "description": description,
            "options": renamed,
            "mapping": [{"from": o, "to": r} for o, r in zip(options, renamed)],
            "tokenizer": tokens.tokenizer.id,
            "verified": True,
        }
        found.append(suggestion)
    return found
