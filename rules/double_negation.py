"""A question worded with two negations.

## What it does
Looks in each decision question's text for a sentence holding two negations or more (`not …
not`, `no … without`, `never … not`, `not un…`), in English.

## Why is this bad?
A yes/no answer to a doubly negated statement is hard to read for the model and for the team:
`Is it not true that the customer did not pay?` flips twice, and a noul's probability of
"true" is read the wrong way round in code as often as by the model. Decision models are
trained on plain statements (`The customer paid.`), and every engine shows the text as it is.

## Example
```json
{"state": "Payment received on 3 May.", "questions": {"unpaid": {"type": "noul",
  "instructions": "It is not the case that the customer has not paid."}}}
```

## Use instead
```json
{"state": "Payment received on 3 May.", "questions": {"paid": {"type": "noul",
  "instructions": "The customer has paid."}}}
```

## How to fix it
State the positive case and negate the answer in code.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD209"]`; `--ignore PCD209`
turns it off.

## Source
The System One question types (typesafe-sdk 0.7.5: a noul is "a statement to evaluate as true
or false"); JevLint-LE's wording rules.

## Measured precision
No finding on the real requests of `tests/data/decision-requests/`, and none expected; opt-in.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import double_negation


@rule(
    code="PCD209",
    name="double-negation",
    severity="warning",
    applies_to="labels",
    needs_tokenizer=False,
    default=False,
    opt_in_reason="a text pattern: two negations can be plain English (`no reply without a ticket`)",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    found = double_negation(site.question_text)
    if found is None:
        return
    yield ctx.finding(
        f"two negations in {found[:80]!r}: the model and the code reading its probability can each "
        "flip it; state the positive case and negate the answer in code",
        data={"sentence": found},
    )
