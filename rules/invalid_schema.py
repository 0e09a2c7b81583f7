"""The file is not a valid schema of its format: it fails its JSON Schema draft's meta-schema.

## What it does
Validates a JSON Schema against the meta-schema of the draft its `$schema` names (2020-12 when
it names none), and checks the structure of PCD presets. Every violation is reported at the
node that breaks it, once per (place, message). The file is still linted as far as its
structure allows.

A schema is checked only against the dialect it is written in: OpenAPI 3.0 and Swagger 2
Schema Objects against draft 4, which they extend; Gemini declarations (upper-case types, in
`functionDeclarations` or as a bare list) and function docs typed with Python's names (BFCL's
`dict`, `float`, `tuple`, `any`) have no meta-schema and are not checked, never against
JSON Schema's.

## Why is this bad?
Structured-output engines compile the schema before decoding; a schema that fails its own
meta-schema is rejected by some engines and silently reinterpreted by others, so the fields
that get decoded are not the ones you reviewed.

It stays in the default set as an error: once each document is checked only against its own
dialect, what is left on third-party files is a schema its engine refuses or reads otherwise
(a 2020-12 schema with tuple `items: [...]`, a misspelt `type`), which is a refused request,
not noise; on 24 wild files (BFCL docs, Python enums) it reported nothing.

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

from auditor.linter import FileModel, Finding, RuleContext, rule


@rule(code="PCD000", name="invalid-schema", severity="error", scope="file")
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for problem in file.schema_problems:
        yield ctx.finding(
            f"invalid schema: {problem.message}", pointer=problem.pointer, data={"format": file.format}
        )
