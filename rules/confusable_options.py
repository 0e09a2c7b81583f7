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

from auditor.linter import FileModel, Finding, RuleContext, at_site, rule

MAX_LISTED = 20
TRANSFORMS = (
    ("case folding", str.casefold),
    ("NFC", lambda s: unicodedata.normalize("NFC", s)),
    ("NFKC", lambda s: unicodedata.normalize("NFKC", s)),
    ("whitespace", lambda s: " ".join(s.split())),
)


def _key(value) -> tuple[bool, str]:
    if isinstance(value, str):  # equal strings ⇔ equal JSON texts: no json.dumps needed
        return True, value
    kind = type(value)  # the literals a schema holds most, as json.dumps writes them
    if kind is bool:
        return False, "true" if value else "false"
    if kind is int:
        return False, int.__repr__(value)
    if value is None:
        return False, "null"
    return False, json.dumps(value, ensure_ascii=False, sort_keys=True)  # 1 and true stay apart


def _equal_after(values: list[str]) -> list[str]:
    """The transformations under which some of these confusable options become equal."""
    return [name for name, f in TRANSFORMS if len({f(v) for v in values}) < len(values)] or [
        "combined normalisation"
    ]


def _normalise(value: str) -> str:
    # (NFKC leaves ASCII as it is)
    return " ".join((value if value.isascii() else unicodedata.normalize("NFKC", value)).casefold().split())


def _plain_normals(values: list[str]) -> list[str] | None:
    """`_normalise` of each string, in one pass where all of them together are ASCII without
    whitespace (most fields): then each is its own lower case (ASCII's case folding), with no
    space to squeeze and none to pad it; None where some string is not so plain."""
    joined = "\x00".join(values)
    if not joined.isascii() or joined.count("\x00") != len(values) - 1 or joined.split(None, 1) != [joined]:
        return None
    return joined.lower().split("\x00") if values else []


@rule(code="PCD007", name="confusable-options", severity="warning", scope="file")
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.sites:
        local = at_site(ctx, site)
        options = site.options
        first: dict[tuple[bool, str], int] | None = None  # None: every option is a distinct string
        duplicates: dict[int, list[int]] = {}
        strings = set(map(type, options)) <= {str}  # (JSON strings are str itself)
        if not (strings and len(set(options)) == len(options)):
            first = {}
            for i, value in enumerate(options):
                j = first.setdefault(_key(value), i)
                if j != i:
                    duplicates.setdefault(j, []).append(i)
        if duplicates:
            j, others = next(iter(duplicates.items()))
            shown = ", ".join(f"{options[k]!r}×{len(v) + 1}" for k, v in list(duplicates.items())[:5])
            more = f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
            yield local.finding(
                f"duplicate options get identical scores: {shown}{more}",
                option=others[0],
                related=[j, *others[1:]],
                severity="error",
                data={
                    "duplicates": [
                        {"option": options[k], "count": len(v) + 1}
                        for k, v in list(duplicates.items())[:MAX_LISTED]
                    ],
                    "count": len(duplicates),
                },
            )
        # the string options compared (their first occurrence): their indexes and values
        kept: range | list[int] = range(len(options))
        values = options
        if first is not None:
            kept = [i for i, v in enumerate(options) if isinstance(v, str) and first[_key(v)] == i]
            values = [options[i] for i in kept]
        plain = _plain_normals(values) if first is None else None  # (every option a distinct string)
        normals = plain if plain is not None else [_normalise(v) for v in values]
        groups: dict[str, list[int]] = {}
        if len(set(normals)) < len(normals):  # (else no two are confusable)
            for i, normal in zip(kept, normals):
                groups.setdefault(normal, []).append(i)
        confusable = [indexes for indexes in groups.values() if len(indexes) >= 2]
        if confusable:
            listed = [[options[i] for i in indexes] for indexes in confusable[:MAX_LISTED]]
            hows = [_equal_after(values) for values in listed]  # (for the groups listed only)
            indexes, values, how = confusable[0], listed[0], hows[0]
            more = f" ({len(confusable)} such groups in this field)" if len(confusable) > 1 else ""
            yield local.finding(
                f"{', '.join(repr(v) for v in values)} are equal after {', '.join(how)}{more}",
                option=indexes[1],
                related=[indexes[0], *indexes[2:]],
                data={
                    "groups": [{"options": v, "equal_after": h} for v, h in zip(listed, hows)],
                    "count": len(confusable),
                },
            )
        padded = (
            []  # (every option a plain string: no whitespace at all)
            if plain is not None
            else [i for i, v in enumerate(options) if isinstance(v, str) and v and v != v.strip()]
        )
        if padded:
            more = f" (and {len(padded) - 1} more options)" if len(padded) > 1 else ""
            yield local.finding(
                f"{options[padded[0]]!r} has leading or trailing whitespace{more}",
                option=padded[0],
                related=padded[1:MAX_LISTED],
                data={"options": [options[i] for i in padded[:MAX_LISTED]], "count": len(padded)},
            )
