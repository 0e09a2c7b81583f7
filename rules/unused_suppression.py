"""An `x-pcdlint-ignore` entry that silenced nothing, or names no rule.

## What it does
After every rule has run, checks each entry of each `x-pcdlint-ignore` in the file. An entry is
unused when the rule it names reported nothing in that node's subtree for any tokenizer of the
run (the named rule is run for this even when `--select` leaves it out), or when it names no
known rule code or name. The finding points at the entry.

## Why is this bad?
A suppression outlives its reason: after the options are renamed or the tokenizer changes, it
silences nothing today but will hide the next real problem in that subtree. A misspelt code
silences nothing at all while looking like it does.

## Example
```json
{"type": "object", "properties": {"risk": {"x-pcdlint-ignore": ["PCD002"], "enum": ["low", "high"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"risk": {"x-pcdlint-ignore": ["PCD002"], "enum": ["LOW", "MEDIUM", "HIGH"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, SuppressionUsage, rule


@rule(code="PCD900", name="unused-suppression", severity="warning", scope="suppressions")
def check(usage: SuppressionUsage, ctx: RuleContext) -> Iterator[Finding]:
    for entry in usage.entries:
        where = entry.holder or "the document root"
        if entry.rule is None:
            message = f"x-pcdlint-ignore entry {entry.entry!r} at {where} names no rule (see `pcdlint rules`)"
        elif entry.rule.code == ctx.rule.code or entry.used:
            continue
        else:
            message = (
                f"x-pcdlint-ignore entry {entry.entry!r} at {where} is unused: "
                f"{entry.rule.code} {entry.rule.name} reports nothing there"
            )
        yield ctx.finding(
            message,
            pointer=entry.pointer,
            data={
                "entry": entry.entry,
                "holder": entry.holder,
                "rule": entry.rule.code if entry.rule else None,
            },
        )
