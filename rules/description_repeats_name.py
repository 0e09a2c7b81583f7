"""An option's description that only repeats its name.

## What it does
Compares each described option of a choice question with its description, case, separators,
articles and end punctuation aside: `"red": "Red"`, `"circle": "A circle"`,
`{"name": "billing", "description": "Billing"}`.

## Why is this bad?
The description is where the request says when an option applies: System One and OpenAI
Decisions send it as the option's criterion, SGLang renders `A: red - Red`, llm2jev `red: Red`.
Repeating the name spends the tokens and tells the model nothing it did not have, and the
question reads as if its criteria had been written. Either say what the option covers, or
leave the description out (every engine then reads the option by its name alone).

## Example
```json
{"state": "A photo of a red circle.", "questions": {"color": {"type": "choice",
  "instructions": "What color is the large shape?",
  "criteria": {"red": "Red", "blue": "Blue", "other": "Another color or no shape"}}}}
```

## Use instead
```json
{"state": "A photo of a red circle.", "questions": {"color": {"type": "choice",
  "instructions": "What color is the large shape?",
  "criteria": {"red": "Mostly red, including dark red and pink", "blue": "Mostly blue",
  "other": "Another color or no shape"}}}}
```

## How to fix it
Write what the option covers (its edge cases), or drop the description.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD205"]`; `--ignore PCD205`
turns it off.

## Source
typesafe-sdk 0.7.5 `_schemas/models.py` (criteria: "choice names and descriptions of when each
applies"); SGLang `decision_models.mdx` (`A: billing - <description>`).

## Measured precision
On the real requests of `tests/data/decision-requests/`: 0 of 3 findings right. It finds what
it looks for (3 of 3 expected: `red: Red`, `circle: A circle`, `cat: A cat`), but none of those
authors would write more: the names say it all. Opt-in.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import repeats_name


@rule(
    code="PCD205",
    name="description-repeats-name",
    severity="info",
    applies_to="labels",
    needs_tokenizer=False,
    default=False,
    opt_in_reason="costs tokens and says nothing, but changes no answer; off until its precision is measured",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    if site.question_kind != "choice":
        return
    pairs = list(zip(site.options, site.option_details))
    if all(d == o for o, d in pairs):
        return  # (an option list of bare values carries each value as its own detail)
    repeated = [i for i, (o, d) in enumerate(pairs) if repeats_name(o, d)]
    if not repeated:
        return
    names = ", ".join(repr(site.options[i]) for i in repeated[:5]) + (", …" if len(repeated) > 5 else "")
    yield ctx.finding(
        f"the descriptions of {names} only repeat the option's name: they tell the model nothing "
        "about when the option applies; say what it covers, or leave the description out",
        option=repeated[0],
        related=repeated[1:],
        data={"options": repeated},
    )
