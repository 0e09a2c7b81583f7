"""A question that asks the model to count, do arithmetic or compare dates.

## What it does
Looks in each decision question's text for what decision models do not do reliably: counting
(`how many`, `number of`, `count`), arithmetic (`sum`, `total`, `average`, `2 + 3`, `more
than 5`) and date comparison (`before 2026-09-01`, `within 30 days`, `after Monday`), in
English and a few other languages (`wie viele`, `cuántos`, `combien`, `多少`, `いくつ`).

## Why is this bad?
A decision model reads one next-token distribution after one forward pass: it does not work a
sum out, count items one by one or do calendar arithmetic, so a question that needs them gets
a plausible-looking guess with a confident probability. TypeSafe's own guidance for Jev is
that counting, dates and arithmetic stay in code (its Jev 1.13 known limits,
docs.typesafe.ai/model-jaggedness/jev-1.13); the open engines serve chat models read the same
way. Compute the number or the date in code and ask the model only the judgement.

## Example
```json
{"state": "Order 1: shipped. Order 2: lost. Order 3: lost.", "questions": {"lost": {"type":
  "score", "instructions": "How many orders were lost?", "criteria": ["None", "One", "Two or more"]}}}
```

## Use instead
```json
{"state": "Order 1: shipped. Order 2: lost. Order 3: lost.", "questions": {"lost": {"type":
  "noul", "instructions": "Does the message report a lost order?"}}}
```

## How to fix it
Count, add and compare dates in code (from the data the state is built from), and pass the
result in the state or use it to choose which question to ask.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD208"]`; `--ignore PCD208`
turns it off.

## Source
TypeSafe Jev 1.13 known limits (docs.typesafe.ai/model-jaggedness/jev-1.13.md, as listed by
the community indexes) and the cobusgreyling/Jev notes ("Count, dates, and arithmetic stay in
code"); SGLang `decision_models.mdx` (one prefill, the next-token scores at the answer).

## Measured precision
On the real requests of `tests/data/decision-requests/` and the reach issue's code files: 0 of
0 findings right. `how much` was dropped from the patterns after it matched three questions
asking for a degree (`How much energy should the music have?`); the 2 expected (`2 + 3`) are
in dialects pcdlint does not read. Opt-in.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import asks_to_count


@rule(
    code="PCD208",
    name="asks-to-count",
    severity="warning",
    applies_to="labels",
    needs_tokenizer=False,
    default=False,
    opt_in_reason="a text pattern: it cannot tell a question that counts from one that mentions a number",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    found = asks_to_count(site.question_text)
    if found is None:
        return
    yield ctx.finding(
        f"the question asks the model to count, do arithmetic or compare dates ({found.strip()!r}): one "
        "forward pass guesses the result, confidently; compute it in code and ask only the judgement",
        data={"phrase": found.strip()},
    )
