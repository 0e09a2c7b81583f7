"""A decision request holds a field its engine's route refuses, or lacks one it requires.

## What it does
Checks each question of a decision request, and the body once, against the fields its shape
documents and the engine's field rules (the engine table): SGLang `/v1/decisions` refuses any
unknown field anywhere; SGLang `/v1/systemone` refuses unknown keys inside a question or a
noul's criteria and a non-null `temperature`, `prompt_format_version` or
`return_prompt_token_ids`, and a noul with neither instructions nor criteria; llama.cpp needs a
`state` and every question's `instructions`; vLLM `/v1/systemone` refuses unknown keys in a
question, criteria of the wrong shape, an empty question id, a missing `state`, thinking turned
on and a question type other than `choice`, `score` and `noul`. Only bodies of a shape the
engine's route takes are checked.

## Why is this bad?
The engine refuses the whole request (400, or 422 for an invalid body), whatever the questions
ask: a field one route accepts (`safety_identifier` on OpenAI) is an error on another.

## Example
Under `--engine sglang-decisions`:
```json
{"input": "Refund please.", "safety_identifier": "user-1", "questions": [{"id": "urgent",
  "type": "yes_no", "question": "Is it urgent?"}]}
```

## Use instead
```json
{"input": "Refund please.", "questions": [{"id": "urgent", "type": "yes_no",
  "question": "Is it urgent?"}]}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import field_problems, refusal

WHY = {
    "unknown": "is not a field of this route",
    "refused": "is refused with any value but null",
    "required": "is required",
    "blank": "is blank",
    "repeated": "repeats an earlier question's id",
    "empty": "is empty",
    "shape": "has the wrong shape",
    "thinking": "is true: the route reads the label as the reply's first token, so thinking must be off",
    "type": "is a question type the route does not take",
}


@rule(
    code="PCD103",
    name="refused-request-field",
    severity="error",
    per_engine=True,
    applies_to="labels",
    needs_tokenizer=False,
    example_engine="sglang-decisions",
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    for problem in field_problems(row, site, ctx.file.document.data):
        missing = problem.why == "required"
        what = f"{problem.field!r} {WHY[problem.why]}" + (" and missing" if missing else "")
        what += f" (the route takes {problem.expected})" if problem.expected else ""
        if problem.why == "type":
            what = f"question type {problem.field!r} is not one the route takes ({problem.expected})"
        yield ctx.finding(
            f"{what} under {row.name}; {refusal(row)}",
            pointer=problem.pointer,
            data={
                "engine": row.name,
                "field": problem.field,
                "why": problem.why,
                "status": row.invalid_status(),
            },
        )
