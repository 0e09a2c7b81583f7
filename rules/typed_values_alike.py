"""Typed choice values that read alike once written out: `"true"` and `true`.

## What it does
Compares a choice question's typed values (OpenAI Decisions types them: a string and a boolean
with the same text are distinct choices) as a prompt or an answer key writes them, and reports
values that become the same text.

## Why is this bad?
The API keeps them apart, but the model sees two options written the same way and the reader
of the answers sees two keys that look equal; which one the probability goes to is chance.

## Example
```json
{"model": "gpt-6-luna", "input": "Charged twice.", "questions": [{"type": "choice", "name": "refund",
  "instructions": "Is a refund owed?", "choices": [{"value": "true"}, {"value": true}, {"value": false}]}]}
```

## Use instead
```json
{"model": "gpt-6-luna", "input": "Charged twice.", "questions": [{"type": "choice", "name": "refund",
  "instructions": "Is a refund owed?", "choices": [{"value": true}, {"value": false}]}]}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, Site, rule
from auditor.pcd import stringified


@rule(
    code="PCD105", name="typed-values-alike", severity="warning", applies_to="labels", needs_tokenizer=False
)
def check(site: Site, ctx: RuleContext) -> Iterator[Finding]:
    if site.question_kind != "choice":
        return
    first: dict[str, int] = {}
    for index, value in enumerate(site.options):
        text = stringified(value)
        j = first.setdefault(text, index)
        if j != index and type(site.options[j]) is not type(value):
            yield ctx.finding(
                f"{site.options[j]!r} and {value!r} are different values written alike ({text!r})",
                option=index,
                related=[j],
                data={"values": [site.options[j], value], "text": text},
            )
