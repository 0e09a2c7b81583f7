"""Options whose scored remainder spans more than one token.

## What it does
After the common prefix is hoisted into the suffix, each option's remainder is encoded alone.
The rule reports options whose remainder is two or more tokens, with their token pieces.

## Why is this bad?
First-token scoring reads only the first piece: `MEDIUM` is `M` + `EDIUM` under Qwen2.5, so
the engine scores the model's wish to write `M`, which `MAYBE` or `MANUAL` would share. The
rest of the option never influences the decision, and a model that prefers `MEDIUM` only
after seeing `EDIUM` is never asked.

## Example
```json
{"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"risk": {"enum": ["low", "medium", "high"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.lint import Finding, RuleContext, rule
from auditor.pcd import SiteTokens


@rule(code="PCD002", name="multi-token-option", severity="warning")
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    multi = tokens.multi_token
    if not multi:
        return
    first = multi[0]
    pieces = tokens.pieces(first)
    shown = first.text if not tokens.prefix else f"{first.text} (after prefix {tokens.prefix!r})"
    example = (
        f"{shown} is {len(pieces)} tokens, {' + '.join(pieces)}: "
        f"first-token scoring reads only {pieces[0]!r}"
    )
    count = f"{len(multi)} of {len(tokens.options)} options span" if len(multi) > 1 else "1 option spans"
    message = f"{count} more than one token; {example}"
    data = {
        "prefix": tokens.prefix,
        "multi_token_options": [
            {"option": o.value, "token_ids": list(o.ids), "pieces": tokens.pieces(o)} for o in multi
        ],
    }
    if ctx.suggestions:
        data["suggestions"] = ctx.suggest(tokens)
    yield ctx.finding(message, data=data, option=first.index)
