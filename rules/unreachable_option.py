"""An option the engine can never return, for a reason other than a first-token tie.

## What it does
Simulates the engine profile (`--engine`, default `gather`) with an oracle model: one that
is certain of option k and writes option k's tokens. Options the engine still does not return
are unreachable. First-token ties are PCD001's; this rule reports the other reasons: the
`rlcd-mlx` fallback's prefix match (`DELIVER` listed before `DELIVER_WITH_WARNING`: the
generated text starts with `DELIVER`, which wins) and its 4-token budget (the truncated text
matches an earlier option), full-sequence scoring of an option whose tokens begin with all of
another's (the shorter sum of log-probs always wins), and option caps (openjev refuses fields
with fewer than 2 or more than 16 options; RLCD more than 255). On an evaluation config's label
set it runs under that harness's scorer, named in the finding: openai/evals' `get_choice`
(`"Not sure"` after `"No"` is matched as `"No"`; punctuation refuses the spec), lm-eval's
`acc` / `acc_norm` (a choice whose tokens begin with all of another's, after the
`target_delimiter`), alpaca_eval's `logprob_parser` (a label of several tokens is never found).

## Why is this bad?
The engine returns valid JSON that is never this option, whatever the input says. Nothing in
the output tells the team; the option just never shows up in production.

## Example
Under `--engine rlcd-mlx` with Qwen2.5 (`DELIVER` and `DELIVER_WITH_WARNING` share the token
`DEL`, so the fallback runs, and its text `DELIVER_WITH_WARNING` matches `DELIVER` first):
```json
{"type": "object", "properties": {"action": {"enum": [
  "DELIVER", "DELIVER_WITH_WARNING", "QUARANTINE", "BLOCK_SENDER"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"action": {"enum": [
  "DELIVER", "WARN_AND_DELIVER", "QUARANTINE", "BLOCK_SENDER"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import REFUSALS, TIE, SiteTokens

MAX_LISTED = 3
MAX_RELATED = 50
_reason = attrgetter("reason")  # Loss.reason, read in one pass over a field's losses


@rule(
    code="PCD013",
    name="unreachable-option",
    severity="error",
    per_engine=True,
    example_engine="rlcd-mlx",
    harness=True,
)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    engine = ctx.engine
    losses = engine.losses(tokens)  # (a refused field: one per option, all for one reason)
    reasons = set(map(_reason, losses))
    if TIE in reasons:  # (ties are PCD001's)
        reasons.discard(TIE)
        losses = [loss for loss in losses if loss.reason != TIE]
    if not losses:
        return
    n = len(tokens.site.options)
    data = {"engine": engine.name, "options": n, "reasons": sorted(reasons)}
    if ctx.details:  # per-option list: only outputs that show finding data want it
        data["unreachable"] = [loss.to_dict() for loss in losses]
    if reasons <= REFUSALS and len(losses) == n:
        message = f"under {engine.name}: {losses[0].detail}: none of its {n} options can be returned"
        yield ctx.finding(message, data=data)
        return
    shown = "; ".join(loss.phrase() for loss in losses[:MAX_LISTED])
    more = f"; and {len(losses) - MAX_LISTED} more" if len(losses) > MAX_LISTED else ""
    message = f"under {engine.name}: {shown}{more}"
    scored_prefix = engine.field_plan(tokens).scored_prefix  # a harness's label set
    if scored_prefix:
        message += f" (each label scored as {scored_prefix!r} + the label)"
        data["prefix"] = scored_prefix
    yield ctx.finding(
        message,
        data=data,
        option=losses[0].index,
        related=[loss.index for loss in losses[1 : MAX_RELATED + 1]],
    )
