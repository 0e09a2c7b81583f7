"""An option name of a decision question holds a control or line-break character.

## What it does
Looks for control characters (Unicode Cc), line and paragraph separators (Zl, Zp) and line
breaks in a choice question's option names. An error under engines that refuse them
(`name_rules` in the engine table: SGLang), a warning elsewhere.

## Why is this bad?
SGLang refuses the request with 400. Elsewhere the option's line in the rendered prompt
breaks: `A: billing` becomes two lines, and the label no longer sits beside its whole name.

## Example
Under `--engine sglang-decisions`:
```json
{"input": "Refund please.", "questions": [{"id": "team", "type": "choice", "question": "Which team?",
  "options": [{"name": "billing\\nrefunds"}, {"name": "technical"}]}]}
```

## Use instead
```json
{"input": "Refund please.", "questions": [{"id": "team", "type": "choice", "question": "Which team?",
  "options": [{"name": "billing and refunds"}, {"name": "technical"}]}]}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import bad_characters, distinct_names, refusal, renaming


@rule(
    code="PCD102",
    name="control-character-name",
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
    if site.question_kind != "choice":
        return
    severity = None if row.name_rules else "warning"
    why = refusal(row, invalid=False) if row.name_rules else "it breaks the option's line in the prompt"
    for index, option in enumerate(site.options):
        found = bad_characters(option) if isinstance(option, str) else []
        if found:
            shown = ", ".join(f"U+{ord(c):04X}" for c in found)
            data = {"engine": row.name, "option": option, "characters": [f"U+{ord(c):04X}" for c in found]}
            if ctx.suggestions:
                description = "control and line-break characters replaced by spaces"
                data["suggestions"] = [renaming(site.options, distinct_names(site.options), description)]
            yield ctx.finding(f"{option!r} holds {shown}; {why}", option=index, severity=severity, data=data)
