"""Options that are the same, or look the same, after normalisation.

## What it does
Reports, per field: exact duplicates (error); options that become equal after case folding,
Unicode NFC or NFKC normalisation, or trimming and collapsing whitespace (warning, with the
transformations that make them equal); options with leading or trailing whitespace (warning).

## Why is this bad?
Duplicates get identical scores, so one of them can never win. Near-duplicates split the
model's probability between two spellings of one answer, and downstream code that compares
case-insensitively or after normalisation sees two options become one. Surrounding whitespace
is invisible in reviews and tokenizes differently from the trimmed word.

## Example
```json
{"type": "object", "properties": {"unit": {"enum": ["z", "Z", "x"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"unit": {"enum": ["z_lower", "z_upper", "x"]}}}
```
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator

from auditor.engine import Finding, RuleContext
from auditor.registry import rule
from auditor.ruletools import at_site
from auditor.sites import FileModel

TRANSFORMS = (
    ("case folding", str.casefold),
    ("NFC", lambda s: unicodedata.normalize("NFC", s)),
    ("NFKC", lambda s: unicodedata.normalize("NFKC", s)),
    ("whitespace", lambda s: " ".join(s.split())),
)


def _key(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)  # 1 and true stay apart


def _normalise(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


@rule(code="PCD007", name="confusable-options", severity="warning", scope="file")
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for site in file.sites:
        local = at_site(ctx, site)
        options = site.options
        first: dict[str, int] = {}
        duplicates: dict[int, list[int]] = {}
        for i, value in enumerate(options):
            j = first.setdefault(_key(value), i)
            if j != i:
                duplicates.setdefault(j, []).append(i)
        for j, others in duplicates.items():
            yield local.finding(f"{options[j]!r} appears {len(others) + 1} times: duplicates get "
                                f"identical scores", option=others[0], related=[j, *others[1:]],
                                severity="error", data={"option": options[j], "count": len(others) + 1})
        groups: dict[str, list[int]] = {}
        for i, value in enumerate(options):
            if isinstance(value, str) and first[_key(value)] == i:
                groups.setdefault(_normalise(value), []).append(i)
        for indexes in groups.values():
            if len(indexes) < 2:
                continue
            values = [options[i] for i in indexes]
            how = [name for name, f in TRANSFORMS
                   if len({f(v) for v in values}) < len(values)] or ["combined normalisation"]
            yield local.finding(
                f"{', '.join(repr(v) for v in values)} are equal after {', '.join(how)}",
                option=indexes[1], related=[indexes[0], *indexes[2:]],
                data={"options": values, "equal_after": how})
        for i, value in enumerate(options):
            if isinstance(value, str) and value and value != value.strip():
                yield local.finding(f"{value!r} has leading or trailing whitespace", option=i,
                                    data={"option": value, "stripped": value.strip()})
