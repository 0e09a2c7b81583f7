"""Two or more options share the token that first-token scoring reads.

## What it does
Computes each option's scored token the way shipped PCD engines do: the options' common prefix
is hoisted into the suffix `  "<field>": "<prefix>`, and only the first token of what remains
is scored. Options whose scored tokens are equal fall into one bucket; the rule reports every
bucket with more than one option, and the option a plain gather + argmax returns for it (the
lowest index: the tie winner).

## Why is this bad?
A softmax over a bucket's shared token gives its options bit-identical scores. The argmax then
picks the first option of the bucket every time, whatever the context says. The output is
valid JSON and wrong: with Qwen2.5, `CAT_000_…` … `CAT_254_…` collapse into 3 buckets (`0`,
`1`, `2`), so 252 of 255 answers can never be produced.

## Example
```json
{"type": "object", "properties": {"category": {"enum": [
  "CAT_000_Live_Animals", "CAT_001_Meat", "CAT_002_Fish", "CAT_103_Tools"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"category": {"enum": [
  "Live_Animals", "Meat", "Fish", "Tools"]}}}
```

## Options
None. When a single-letter remap is viable for the field, the finding says so and carries the
slot table (`data.slot_table`).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.lint import Finding, RuleContext, rule
from auditor.pcd import SiteTokens

MAX_RELATED = 50


@rule(code="PCD001", name="first-token-collision", severity="error")
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    collisions = tokens.collisions
    if not collisions:
        return
    piece = tokens.tokenizer.piece
    options = tokens.site.options
    buckets = [
        {
            "token_id": token_id,
            "token": piece(token_id),
            "size": len(indexes),
            "options": [options[i] for i in indexes],
            "tie_winner": options[indexes[0]],
        }
        for token_id, indexes in tokens.buckets.items()
    ]
    n, distinct = len(options), len(tokens.buckets)
    colliding = sum(len(idx) for _, idx in collisions)
    shown = ", ".join(f"{piece(t)!r}×{len(idx)}" for t, idx in collisions[:5])
    more = f" and {len(collisions) - 5} more" if len(collisions) > 5 else ""
    after = f" after prefix {tokens.prefix!r}" if tokens.prefix else ""
    message = (
        f"{n} options collapse into {distinct} first-token buckets{after}; "
        f"{colliding} options share a scored token ({shown}{more}): a plain gather scores them "
        f"identically and argmax always returns the first of each bucket"
    )
    slots = tokens.slot_table
    data = {
        "prefix": tokens.prefix,
        "suffix": tokens.suffix,
        "options": n,
        "distinct_tokens": distinct,
        "colliding_options": colliding,
        "buckets": buckets,
    }
    if slots.viable:
        message += f"; a single-letter remap (A–{slots.letters[n - 1]}) is viable"
        data["slot_table"] = slots.to_dict(options)
    if ctx.suggestions:
        data["suggestions"] = ctx.suggest(tokens)
    first_bucket = collisions[0][1]
    yield ctx.finding(message, data=data, option=first_bucket[0],
                      related=first_bucket[1:MAX_RELATED + 1])
