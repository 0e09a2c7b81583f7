"""The file is not a valid schema of its format: it fails its JSON Schema draft's meta-schema.

## What it does
Validates a JSON Schema against the meta-schema of the draft its `$schema` names (2020-12 when
it names none), and checks the structure of PCD presets. Every violation is reported at the
node that breaks it. The file is still linted as far as its structure allows.

## Why is this bad?
Structured-output engines compile the schema before decoding; a schema that fails its own
meta-schema is rejected by some engines and silently reinterpreted by others, so the fields
that get decoded are not the ones you reviewed.

## Example
```json
{"type": "object", "properties": {"risk": {"type": "strng", "enum": ["LOW", "HIGH"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"risk": {"type": "string", "enum": ["LOW", "HIGH"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.lint import FileModel, Finding, RuleContext, rule


@rule(code="PCD000", name="invalid-schema", severity="error", scope="file")
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for problem in file.schema_problems:
        yield ctx.finding(f"invalid schema: {problem.message}", pointer=problem.pointer,
                          data={"format": file.format})
