"""Choice sets written in prose: a string field's description (or a Python field's docstring)
that lists the values it takes instead of declaring an `enum`.

Read only where the wording is unambiguous, one pattern each: `[Enum]: ["driver", "passenger"]`
(a JSON list after `Enum:`), "possible values are A, B and C" (also allowed / valid / accepted
values), "one of: a, b, c", and `a | b | c` (two or more one-word alternatives joined by `|`). A
value is at most a few words; a set has 2 to 64 values. The crawler makes such a field a site of
kind `prose` (auditor.schema.crawl_schema), linted by the token rules like an enum; its findings
are shown only with the config key `prose-choices = true` (their precision on real files is
not measured yet: docs/usage.md).
"""

from __future__ import annotations

import json
import re

MAX_VALUES = 64
MAX_WORDS = 4
MAX_VALUE_CHARS = 48

_ENUM_LIST = re.compile(r"\[?\benum\]?\s*:\s*(\[[^\[\]]*\])", re.IGNORECASE)
_LISTED = re.compile(
    r"\b(?:(?:possible|allowed|valid|accepted|supported)\s+values\s+(?:are|include|:)|one\s+of)\s*:?\s*"
    r"(?P<values>[^.;\n]+)",
    re.IGNORECASE,
)
# `a | b | c`: one-word alternatives making up the whole description, or all it says after a
# colon ("use a | b notation" is no set)
_PIPES = re.compile(r"(?:^|:\s*)([`'\"]?\w[\w.-]*[`'\"]?(?:\s*\|\s*[`'\"]?\w[\w.-]*[`'\"]?)+)\s*[.)]?\s*$")
_SPLIT = re.compile(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+")


def prose_choices(text: object) -> list[str] | None:
    """The values a description lists, or None where it lists none unambiguously."""
    if not isinstance(text, str) or len(text) > 4000:
        return None
    found = _ENUM_LIST.search(text)
    if found:
        try:
            values = json.loads(found.group(1).replace("'", '"'))
        except ValueError:
            values = None
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            return _checked(values)
    found = _LISTED.search(text)
    if found:
        return _checked(_SPLIT.split(found.group("values").strip()))
    found = _PIPES.search(text)
    if found:
        return _checked(found.group(1).split("|"))
    return None


def _checked(values: list[str]) -> list[str] | None:
    cleaned = [v.strip().rstrip(".").strip().strip("`'\"").strip() for v in values]
    cleaned = [v for v in cleaned if v]
    if not 2 <= len(cleaned) <= MAX_VALUES or len(set(cleaned)) != len(cleaned):
        return None
    if any(len(v) > MAX_VALUE_CHARS or len(v.split()) > MAX_WORDS for v in cleaned):
        return None
    return cleaned
