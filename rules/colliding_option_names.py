"""Option names of a decision question that are blank or equal after trimming and case folding.

## What it does
Compares a choice question's option names (System One criteria keys, OpenAI choice values,
SGLang option names) as SGLang does: trimmed and case-folded. Reports names that repeat
another (`"Billing"` and `"billing "`) and names that are blank. An error under engines that
refuse such names (`name_rules` in the engine table: SGLang), a warning elsewhere.

Under an engine that refuses exact repeats only (`exact_duplicates`: vLLM), it reports what
that engine refuses and nothing else: options of the kinds it names (a choice's names, a
score's levels) equal as the route compares them (a System One option as its text, an OpenAI
choice value with its type). `"Billing"` and `"billing "` reach the model there under two
labels, as written.

## Why is this bad?
SGLang refuses the request with 400, and vLLM a question whose names or levels repeat exactly.
Elsewhere the model sees two options it cannot tell apart, and the probability splits between
them by chance.

## Example
Under `--engine sglang-decisions`:
```json
{"input": "Refund please.", "questions": [{"id": "team", "type": "choice", "question": "Which team?",
  "options": [{"name": "Billing"}, {"name": "billing "}, {"name": "technical"}]}]}
```

## Use instead
```json
{"input": "Refund please.", "questions": [{"id": "team", "type": "choice", "question": "Which team?",
  "options": [{"name": "billing"}, {"name": "technical"}]}]}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import distinct_names, name_key, refusal, renaming


@rule(
    code="PCD101",
    name="colliding-option-names",
    severity="error",
    per_engine=True,
    applies_to="labels",
    needs_tokenizer=False,
    example_engine="sglang-decisions",
    suggests=True,
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if row.exact_duplicates:
        yield from _exact_repeats(site, ctx)
        return
    if site.question_kind != "choice":
        return
    severity = None if row.name_rules else "warning"
    why = refusal(row, invalid=False) if row.name_rules else "the model cannot tell them apart"
    status = {"status": row.status} if row.name_rules else {}  # what the engine answers, where it refuses
    first: dict[str, int] = {}
    for index, option in enumerate(site.options):
        if not isinstance(option, str):
            continue
        key = name_key(option)
        if not key:
            yield ctx.finding(
                f"option {index} has a blank name {option!r}; {why}",
                option=index,
                severity=severity,
                data={"engine": row.name, "option": option, **status, **_suggestions(site, ctx)},
            )
            continue
        if key in first:
            j = first[key]
            yield ctx.finding(
                f"{option!r} repeats {site.options[j]!r} after trimming and case folding; {why}",
                option=index,
                related=[j],
                severity=severity,
                data={
                    "engine": row.name,
                    "option": option,
                    "repeats": site.options[j],
                    **status,
                    **_suggestions(site, ctx),
                },
            )
        else:
            first[key] = index


def _route_key(site: Site, index: int) -> object:
    """An option as the route compares it: an OpenAI choice value with its type; a System One
    name or level as Python's text of its JSON value (vLLM's `str(level)`)."""
    value = site.options[index]
    if site.request_shape == "openai-decisions":
        return (type(value).__name__, value)
    if site.question_kind == "score" and index < len(site.option_details):
        value = site.option_details[index]  # the level as written (options hold JSON text)
    return str(value)


def _exact_repeats(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    row = ctx.engine_row
    assert row is not None
    if site.question_kind not in row.exact_duplicates:
        return
    first: dict[object, int] = {}
    for index, option in enumerate(site.options):
        key = _route_key(site, index)
        if key not in first:
            first[key] = index
            continue
        j = first[key]
        yield ctx.finding(
            f"{option!r} repeats {site.options[j]!r} exactly; {refusal(row, invalid=False)}",
            option=index,
            related=[j],
            data={
                "engine": row.name,
                "option": option,
                "repeats": site.options[j],
                "status": row.status,
                **_suggestions(site, ctx),
            },
        )


def _suggestions(site, ctx: RuleContext) -> dict:
    """`suggestions` for the finding's data (where the run shows them): the names made distinct."""
    if not ctx.suggestions:
        return {}
    renamed = distinct_names(site.options)
    return {
        "suggestions": [
            renaming(site.options, renamed, "names made distinct after trimming and case folding")
        ]
    }
