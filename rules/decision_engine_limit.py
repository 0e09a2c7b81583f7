"""A decision request holds more (or fewer) options, levels or questions than its engine takes.

## What it does
Counts each question of a decision request (System One, OpenAI Decisions, SGLang
`/v1/decisions`) against the limits of every decision engine named with `--engine` (the engine
table): options per choice, levels per score, questions per request. With no decision engine
named, the System One specification's limits apply (1 to 255 options, 1 to 10 levels).

## Why is this bad?
The engine refuses the whole request: SGLang `/v1/decisions` answers 400 above 26 options,
Fireworks above 208, Jev and SGLang `/v1/systemone` above 10 levels, llm2jev above 64
questions. Nothing in the request is answered, and the limit is per engine: a request that
runs on llm2jev (255 levels) fails on Jev (10).

## Example
Under `--engine sglang-decisions`:
```json
{"input": "The integration keeps failing.", "questions": [{"id": "team", "type": "choice",
  "question": "Which team?", "options": [{"name": "billing"}]}]}
```

## Use instead
```json
{"input": "The integration keeps failing.", "questions": [{"id": "team", "type": "choice",
  "question": "Which team?", "options": [{"name": "billing"}, {"name": "technical"}]}]}
```

## Options
None. The limits are the engine table's (`auditor/pcd/engines/engines.toml`).
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import first_site, refusal, split_passes

NOUNS = {"choice": "options", "score": "levels"}


@rule(
    code="PCD100",
    name="decision-engine-limit",
    severity="error",
    per_engine=True,
    applies_to="labels",
    needs_tokenizer=False,
    example_engine="sglang-decisions",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    kind = site.question_kind
    assert kind is not None  # (applies to decision questions only)
    limit = row.limit_for(kind)
    n = len(site.options)
    if limit is not None and not limit.admits(n):
        noun = NOUNS[kind]
        undocumented = (
            "" if kind != "score" or row.levels_documented else " (its level limits are undocumented)"
        )
        data = {
            "engine": row.name,
            "count": n,
            "what": noun,
            "min": limit.low,
            "max": limit.high,
            "status": row.invalid_status(),
        }
        split = ""
        if kind == "choice" and limit.high is not None and n > limit.high:
            data["split"] = passes = split_passes(n, limit.high)
            split = (
                f"; split it into two passes: a choice among {len(passes)} groups of at most "
                f"{max(p['options'] for p in passes)} options, then a choice within the group"
            )
        yield ctx.finding(
            f"{n} {noun}: {row.name} takes {limit.phrase()} {noun} per {kind} question{undocumented}; "
            f"{refusal(row)}{split}",
            data=data,
        )
    questions = row.questions
    first = first_site(site, ctx.file.document.data)
    if first and questions is not None and not questions.admits(site.request_questions):
        yield ctx.finding(
            f"{site.request_questions} questions: {row.name} takes {questions.phrase()} questions per "
            f"request; {refusal(row)}",
            pointer=site.request_pointer,
            data={
                "engine": row.name,
                "count": site.request_questions,
                "what": "questions",
                "min": questions.low,
                "max": questions.high,
                "status": row.invalid_status(),
            },
        )
