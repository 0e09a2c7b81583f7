"""Two or more options share the token that first-token scoring reads.

## What it does
Computes each option's scored token the way the engine profile (`--engine`, default
`gather`) does: RLCD hoists the options' common prefix into the suffix `  "<field>": "<prefix>`
and scores only the first token of `remainder + '"'`; openjev scores letters. Options whose
scored tokens are equal fall into one bucket; the rule reports every bucket with more than one
option, and, per engine, the options that engine can never return even from a model certain
of them (simulated with an oracle): under `gather` the lowest index wins every tie, under
`rlcd-mlx` a 4-token greedy fallback recovers some tied options and loses others to its prefix
match. Engines that do not decide by a first token (`constrained`, `full-sequence`) are not
checked. On an evaluation config's label set it runs under that harness's scorer: for
alpaca_eval's `logprob_parser` (engine `alpaca-eval-logprob`) a label whose first token is
another label's one token gives that label its probability.

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
`letters` (default `""`: the engine's alphabet, A–Z, or A–P under openjev): the letters a
single-letter remap may use. When a remap over them is viable the finding says so and carries
the slot table (`data.slot_table`). When the engine loses no option of the field (the
`rlcd-mlx` fallback recovered them all) the finding is a warning: slow, not wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter
from typing import Any

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import TIE, EngineProfile, FieldPlan, Loss, SiteTokens

MAX_RELATED = 50
SHOWN_BUCKETS = 3  # the message names the largest buckets; data.buckets has them all
NAMED_OPTIONS = 3  # options named per bucket in the message
MAX_LISTED = 3  # losses named per engine


def _bucket_text(token: str, members: list, winner: bool) -> str:
    """`'billing', 'billing_refunds' share 'billing': 'billing' always wins` (the last part
    only where a tie goes to the first option: a plain gather)."""
    named = ", ".join(repr(o) for o in members[:NAMED_OPTIONS])
    if len(members) > NAMED_OPTIONS:
        named += f", … ({len(members)} options)"
    return f"{named} share {token!r}" + (f": {members[0]!r} always wins" if winner else "")


def consequence(engine: EngineProfile, plan: FieldPlan, losses: list[Loss], recovered: int) -> str:
    """`under <engine>: …` — what this engine does with the field, from its losses."""
    if plan.refused is not None:
        return f"under {engine.name}: {plan.refused}, so none of its options can be returned"
    if not losses:
        return (
            f"under {engine.name}: every option is still returned (its fallback recovers "
            f"the {recovered} tied options, at {engine.limits.get('fallback')} per field)"
        )
    shown = "; ".join(loss.phrase() for loss in losses[:MAX_LISTED])
    more = f"; and {len(losses) - MAX_LISTED} more" if len(losses) > MAX_LISTED else ""
    return f"under {engine.name}: {shown}{more}"


@rule(
    code="PCD001",
    name="first-token-collision",
    severity="error",
    per_engine=True,
    options={"letters": ""},
    letter_slots=True,
    suggests=True,
    confirms="collision",
    harness=True,
)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    engine = ctx.engine
    if not engine.first_token:
        return
    plan = engine.field_plan(tokens)
    if not plan.has_collision:
        return
    collisions = [(t, idx) for t, idx in plan.buckets.items() if len(idx) > 1]

    def piece(token_id: int) -> str:
        """The token's text; an id below 0 stands for no token (FieldPlan.first_tokens)."""
        return tokens.tokenizer.piece(token_id) if token_id >= 0 else "(no token)"

    options = tokens.site.options
    buckets = (
        [
            {
                "token_id": token_id,
                "token": piece(token_id),
                "size": len(indexes),
                "options": [options[i] for i in indexes],
                "tie_winner": options[indexes[0]],
            }
            for token_id, indexes in plan.buckets.items()
        ]
        if ctx.details
        else None
    )
    n, distinct = len(options), len(plan.buckets)
    colliding = sum(len(idx) for _, idx in collisions)
    # a harness's label set: the text its scorer puts before each label (no slots, no renaming)
    harness = plan.scored_prefix is not None
    prefix = plan.scored_prefix if harness else "" if plan.letters else tokens.prefix
    after = f" after prefix {prefix!r}" if prefix else ""
    scored = "letters" if plan.letters else "options"
    losses = engine.losses(tokens)
    if harness:  # its other losses (a label of several tokens) are PCD013's
        losses = [loss for loss in losses if loss.reason == TIE]
    tied_lost = list(map(attrgetter("reason"), losses)).count(TIE)
    gather = engine.name == "gather"
    largest = sorted(collisions, key=lambda c: -len(c[1]))[:SHOWN_BUCKETS]
    shown = "; ".join(_bucket_text(piece(t), [options[i] for i in idx], gather) for t, idx in largest)
    more = "; …" if len(collisions) > SHOWN_BUCKETS else ""
    message = f"{n} {scored} collapse into {distinct} first-token buckets{after}: {shown}{more}"
    # under gather "X always wins" already says what is lost; other engines (and refusals, and
    # losses other than ties) get their own sentence
    if not gather or plan.refused is not None or any(loss.reason != TIE for loss in losses):
        message += "; " + consequence(engine, plan, losses, colliding - len(collisions) - tied_lost)
    data: dict[str, Any] = {
        "engine": engine.name,
        "prefix": prefix,
        "suffix": plan.suffix,
        "options": n,
        "distinct_tokens": distinct,
        "colliding_options": colliding,
    }
    if ctx.details:  # per-option lists: only outputs that show finding data want them
        data["buckets"] = buckets
        data["unreachable"] = [loss.to_dict() for loss in losses]
    if not plan.letters and not harness:
        slots = tokens.slots(ctx.letters)
        if slots.viable:
            message += f"; a single-letter remap ({slots.letters[0]}–{slots.letters[n - 1]}) is viable"
            data["slot_table"] = slots.to_dict(options)
    if ctx.suggestions and not harness:
        data["suggestions"] = ctx.suggest(tokens)
    severity = None
    if not losses and ctx.severity == ctx.rule.severity:
        severity = "warning"  # recovered by the engine's fallback: it costs passes, not answers
    first_bucket = collisions[0][1]
    yield ctx.finding(
        message,
        data=data,
        option=first_bucket[0],
        related=first_bucket[1 : MAX_RELATED + 1],
        severity=severity,
    )
