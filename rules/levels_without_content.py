"""A score question whose levels are bare numbers or degree words, with nothing to match the
state against.

## What it does
Reads each level of a score question (System One criteria, OpenAI levels' labels and
descriptions, SGLang levels) and keeps the words that say more than a degree: not a number,
not a degree word (`low`, `medium`, `high`, `mild`, `severe`, `very`, … and their equivalents
in the languages of the collected requests), not a word of the question itself (`Low urgency`
under "How urgent …?" says only `low`). Reports the question when no level has any such word
left.

## Why is this bad?
A decision engine scores each level's label after showing the level's text: SGLang shows `0:
low`, llm2jev `A. 0: low`, llama.cpp passes the level as the option's description, and the
hosted engines send the criteria as given. Levels that only say how much give the model no
criterion to compare the state with: where `medium` ends and `high` starts is whatever the
model guesses today, so the answer moves with wording and model version instead of with the
input. Describing what each level looks like (`Needs a reply today`) anchors it.

## Example
```json
{"state": "Checkout fails for every customer.", "questions": {"severity": {"type": "score",
  "instructions": "How severe is the issue?", "criteria": ["low", "medium", "high"]}}}
```

## Use instead
```json
{"state": "Checkout fails for every customer.", "questions": {"severity": {"type": "score",
  "instructions": "How severe is the issue?", "criteria": ["Cosmetic, nobody is blocked",
  "One customer or one feature is blocked", "Every customer is blocked"]}}}
```

## How to fix it
Describe what the state looks like at each level, in the words of the inputs you score.

## How to silence it
A request cannot hold `x-pcdlint-ignore` (the engine would be sent it): a per-file-ignores
entry names the question, `"requests/*.json#question:team" = ["PCD204"]`; `--ignore PCD204`
turns it off.

## Source
SGLang `docs/docs/supported-models/decision_models.mdx` (a level renders as `0:
<description>`); llm2jev 0.6.1 `prompt.py` (`render`); typesafe-sdk 0.7.5 `_schemas/models.py`
(score criteria are "the levels of a rubric").

## Measured precision
On the real requests of `tests/data/decision-requests/` and the reach issue's code files:
9 of 9 findings right (4 on the request files, 5 on code). Recall on the request files: 4 of
the 7 expected (the 3 missed: a file not read as a request, a dialect not read, and a scale
with a `Mixed` middle, which names something).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import content_words


@rule(
    code="PCD204",
    name="levels-without-content",
    severity="warning",
    applies_to="labels",
    needs_tokenizer=False,
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    if site.question_kind != "score" or len(site.options) < 2:
        return
    levels = [
        d if isinstance(d, str) and d.strip() else o
        for o, d in zip(site.options, site.option_details or [None] * len(site.options))
    ]
    if any(content_words(level, site.question_text) for level in levels):
        return
    shown = ", ".join(repr(str(level)) for level in levels[:5]) + (", …" if len(levels) > 5 else "")
    yield ctx.finding(
        f"the levels {shown} only say how much: the model has no criterion to match the state against, "
        "so where one level ends and the next starts is its guess; describe what each level looks like",
        data={"levels": len(levels)},
    )
