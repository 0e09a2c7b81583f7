"""A field that first-token scoring gets wrong cannot be fixed by a single-letter remap.

## What it does
The clean fix for collisions and multi-token options is to score slots `A`, `B`, … (a legend
maps each letter to an option). A slot works only if its letter encodes to exactly one token
that decodes back to the same letter, distinct from the others, both alone and right after the
suffix's opening quote. The rule fires on fields that have a first-token collision or a
multi-token option when the options cannot all get such a slot, in order: more options than
letters, or a letter among the first ones fails for this tokenizer. The letters are the
engine profile's alphabet (A–Z; A–P under `--engine openjev`) unless the `letters` option
names others. Engines that do not decide by a first token (`constrained`, `full-sequence`)
need no remap and are not checked.

## Why is this bad?
Without a viable remap the field needs a different fix (renaming options, a two-pass split, or
full-sequence scoring), and teams that apply the remap anyway get a letter that merges with the
quote, or two letters that share a token: the same silent failure in a new place.

## Example
```json
{"type": "object", "properties": {"code": {"enum": [
  "X00","X01","X02","X03","X04","X05","X06","X07","X08","X09","X10","X11","X12","X13",
  "X14","X15","X16","X17","X18","X19","X20","X21","X22","X23","X24","X25","X26","X27"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}}
```

## Options
`letters` (default `""`: the engine's alphabet): the letters slots may use, in order, e.g.
`letters = "ABCDEFGHIJKLMNOP"`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens


@rule(
    code="PCD004",
    name="letter-remap-not-viable",
    severity="warning",
    per_engine=True,
    options={"letters": ""},
    letter_slots=True,
)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    if not ctx.engine.first_token:
        return
    if not tokens.collisions and not tokens.multi_token:
        return
    letters = ctx.letters
    slots = tokens.slots(letters)
    if slots.viable:
        return
    n = len(tokens.options)
    if n > len(letters):
        reason = f"{n} options but only {len(letters)} letters {letters[0]}–{letters[-1]}"
    else:
        failing = {c: slots.failures[c] for c in letters[:n] if c in slots.failures}
        reason = "; ".join(f"{c} {why}" for c, why in list(failing.items())[:4])
    message = f"a single-letter remap cannot fix this field: {reason}"
    yield ctx.finding(
        message,
        data={
            "needed": n,
            "viable_letters": len(slots.letters),
            "letters": letters,
            "engine": ctx.engine.name,
            "failures": slots.failures,
            "reason": reason,
        },
    )
