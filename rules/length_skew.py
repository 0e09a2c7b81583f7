"""The longest option has several times the tokens of the shortest.

## What it does
Counts each option's tokens (its JSON text encoded alone) and reports a field whose longest
option has at least `ratio` (default 3) times the tokens of its shortest.

## Why is this bad?
Engines that fall back to full-sequence scoring sum log-probabilities over an option's tokens;
every extra token adds a negative term, so short options win by length, not by meaning. Use
length-normalised scores (mean log-probability per token) or options of similar length.

## Example
```json
{"type": "object", "properties": {"action": {"enum": ["no", "escalate_to_the_security_operations_center_immediately"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"action": {"enum": ["ignore", "escalate"]}}}
```

## Options
- `ratio` (number, default 3): the longest/shortest token ratio that triggers the rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens


@rule(
    code="PCD011",
    name="length-skew",
    severity="info",
    options={"ratio": 3},
    default=False,
    opt_in_reason="concerns full-sequence scoring, not the first-token scoring PCD engines do",
    reads=("lengths",),
)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    lengths = tokens.option_lengths
    if len(lengths) < 2 or min(lengths) < 1:
        return
    ratio = float(ctx.options["ratio"])
    short = min(range(len(lengths)), key=lengths.__getitem__)
    long = max(range(len(lengths)), key=lengths.__getitem__)
    if lengths[long] < ratio * lengths[short]:
        return
    options = tokens.site.options
    message = (
        f"longest option {options[long]!r} is {lengths[long]} tokens, shortest "
        f"{options[short]!r} is {lengths[short]}: a summed log-probability ranks by length; "
        f"use length-normalised scores"
    )
    yield ctx.finding(
        message,
        option=long,
        related=[short],
        data={
            "longest": {"option": options[long], "tokens": lengths[long]},
            "shortest": {"option": options[short], "tokens": lengths[short]},
            "ratio": round(lengths[long] / lengths[short], 2),
        },
    )
