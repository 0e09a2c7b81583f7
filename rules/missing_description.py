"""A choice question that describes some options and leaves others without a description.

## What it does
Reports a choice question where at least one option has a description (a criterion) and
another has none (`null`, missing, or blank): `{"billing": "Charges and refunds", "sales":
null}`. A way out named by its purpose (`other`, `none`, `unknown`: the defaults of PCD201's
`fallback-options`) needs no description.

## Why is this bad?
Every engine judges an undescribed option by its name alone (the System One schema: "a choice
without a description is interpreted by its name alone"; SGLang renders `C: sales` beside `A:
billing - Charges and refunds`). Next to described siblings it is the one the model knows
least about: inputs that belong to it drift to the described options, or, when it is the
catch-all, inputs that belong elsewhere drift to it. An undescribed option is usually one the
author meant to come back to.

## Example
```json
{"state": "Do you offer a discount for schools?", "questions": {"team": {"type": "choice",
  "instructions": "Which team should handle this ticket?",
  "criteria": {"billing": "Charges, invoices and refunds", "technical": "Bugs and outages",
  "sales": null}}}}
```

## Use instead
```json
{"state": "Do you offer a discount for schools?", "questions": {"team": {"type": "choice",
  "instructions": "Which team should handle this ticket?",
  "criteria": {"billing": "Charges, invoices and refunds", "technical": "Bugs and outages",
  "sales": "Pricing, discounts and new purchases"}}}}
```

## How to fix it
Describe every option, or none.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD206"]`; `--ignore PCD206`
turns it off.

## Source
typesafe-sdk 0.7.5 `_schemas/models.py` (ChoiceQuestion.criteria); SGLang
`decision_models.mdx` (an option renders as `A: billing` or `A: billing - <description>`).

## Measured precision
On the real requests of `tests/data/decision-requests/`: 1 of 1 findings right (found 1 of 1
expected).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import FALLBACK_OPTIONS, fallback_index


def _described(value: object) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return value is not None and value != {} and value != []


@rule(
    code="PCD206", name="missing-description", severity="warning", applies_to="labels", needs_tokenizer=False
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    if site.question_kind != "choice" or len(site.option_details) != len(site.options):
        return
    described = [_described(d) for d in site.option_details]
    if not any(described) or all(described):
        return
    # (a way out named `other` or `none` says by its name when it applies)
    bare = [
        i
        for i, d in enumerate(described)
        if not d and fallback_index([site.options[i]], [None], FALLBACK_OPTIONS) is None
    ]
    if not bare:
        return
    names = ", ".join(repr(site.options[i]) for i in bare[:5]) + (", …" if len(bare) > 5 else "")
    yield ctx.finding(
        f"{names} {'has' if len(bare) == 1 else 'have'} no description while the other options have one: "
        "the model judges it by its name alone, beside siblings it was told about; describe every option, or none",
        option=bare[0],
        related=bare[1:],
        data={"undescribed": bare, "options": len(site.options)},
    )
