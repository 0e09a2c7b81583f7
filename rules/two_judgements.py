"""A yes/no question that joins two judgements with "and".

## What it does
Looks in each two-outcome question (a System One `noul`, an OpenAI `predicate`, an SGLang
`yes_no`) for two predicates joined by "and" (`Is the customer angry and asking for a
refund?`, `both … and …`). "And" between two nouns (`billing and refunds`) is left alone.

## Why is this bad?
The answer is one probability for both judgements at once: a message that is angry but asks
for nothing, and one that asks politely for a refund, both land somewhere in the middle, and
the code cannot tell which half failed. Decision requests are cheap per question (one state,
many questions, scored together), so two questions cost almost nothing more and give two
answers the code can combine as it means to.

## Example
```json
{"state": "This is the third time I ask: refund me now.", "questions": {"angry_refund":
  {"type": "noul", "instructions": "Is the customer angry and does the customer ask for a refund?"}}}
```

## Use instead
```json
{"state": "This is the third time I ask: refund me now.", "questions": {
  "angry": {"type": "noul", "instructions": "The customer is angry."},
  "refund": {"type": "noul", "instructions": "The customer asks for a refund."}}}
```

## How to fix it
Ask each judgement as its own question and combine the answers in code.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD210"]`; `--ignore PCD210`
turns it off.

## Source
TypeSafe's guidance on atomic questions (the Jev documentation: each question "asks one
specific, bounded thing"; combine factors in code); SGLang `decision_models.mdx` (questions
are scored together in one batch).

## Measured precision
No finding on the real requests of `tests/data/decision-requests/`, and none expected; opt-in.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import joined_judgements


@rule(
    code="PCD210",
    name="two-judgements",
    severity="warning",
    applies_to="labels",
    needs_tokenizer=False,
    default=False,
    opt_in_reason="a text pattern: it cannot always tell two judgements from one with two parts",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    if site.question_kind != "binary":
        return
    found = joined_judgements(site.question_text)
    if found is None:
        return
    yield ctx.finding(
        f"one yes/no question holds two judgements ({found[:80]!r}): its one probability cannot say "
        "which failed; ask each as its own question and combine the answers in code",
        data={"phrase": found},
    )
