"""A field offers numbers, booleans or null instead of (or besides) strings.

## What it does
Reports fields with non-string options (info): they are scored as JSON literals after
`  "<field>":`, not inside a quoted string. When one field mixes string and non-string options
the finding is a warning: no single suffix can score both, because strings need the opening
quote in the suffix and literals must not have it.

## Why is this bad?
Literal scoring reads the token that holds the literal's first character, which may include
the space before it and is often one digit of a number (`200` and `201` share `2`). A mixed
field cannot be decoded by one batched pass at all; engines either quote the literals (and
return strings where the schema promises numbers) or drop them.

## Example
```json
{"type": "object", "properties": {"retries": {"enum": [0, 1, "unlimited"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"retries": {"enum": ["none", "once", "unlimited"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import FileModel, Finding, RuleContext, at_site, rule


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


@rule(
    code="PCD012",
    name="non-string-options",
    severity="info",
    scope="file",
    default=False,
    opt_in_reason="advisory: literal options are scored as reliably as strings; "
    "their collisions are PCD001's",
)
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for site in ctx.sites:
        literal = [i for i, o in enumerate(site.options) if not isinstance(o, str)]
        if not literal:
            continue
        kinds = sorted({_kind(site.options[i]) for i in literal})
        strings = len(site.options) - len(literal)
        local = at_site(ctx, site)
        data = {"non_string": len(literal), "string": strings, "kinds": kinds}
        if strings:
            yield local.finding(
                f"mixes {strings} string and {len(literal)} {'/'.join(kinds)} options: no single "
                f"suffix can score both (strings need the opening quote, literals must not have it)",
                option=literal[0],
                severity="warning",
                data=data,
            )
        else:
            yield local.finding(
                f"{len(literal)} {'/'.join(kinds)} options are scored as JSON "
                f"literals after the field's colon, not inside a string",
                option=literal[0],
                data=data,
            )
