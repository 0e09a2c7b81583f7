"""A field lists values but also accepts any string, so it is no closed decision.

## What it does
Reports a union (`anyOf` / `oneOf`) that offers listed values (`enum`, `const`) beside a branch
that takes any string: `{"type": "string"}`, a `pattern`, a `format`, or Pydantic's
`Literal["a", "b"] | str`. Such a field is not linted as a decision: no collision or multi-token
finding is reported for its listed values, and `pcdlint suggest` never renames them.

## Why is this bad?
It is not wrong: the set is open by design, and a first-token scorer does not decide it; the
model writes the string token by token. It is worth knowing when you meant a closed choice:
the listed values are only hints, and the model may answer with anything.

## Example
```json
{"type": "object", "properties": {"module": {"anyOf": [
  {"enum": ["commonjs", "es2015", "es2020"]}, {"type": "string", "pattern": "^.*$"}]}}}
```

## Use instead
```json
{"type": "object", "properties": {"module": {"enum": ["commonjs", "es2015", "es2020"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import FileModel, Finding, RuleContext, rule


@rule(
    code="PCD020",
    name="open-field",
    severity="info",
    scope="file",
    default=False,
    opt_in_reason="informational: an open field is left to free generation, nothing is decided wrongly",
)
def check(file: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for open_field in file.open_fields:
        shown = ", ".join(repr(o) for o in open_field.options[:6])
        more = f", … ({len(open_field.options)} values)" if len(open_field.options) > 6 else ""
        yield ctx.finding(
            f"{open_field.field or '(root)'}: open field: it lists {shown}{more} but also accepts "
            f"any string ({open_field.open_branch}); linted as free text, not as a decision",
            pointer=open_field.pointer,
            data={
                "field": open_field.field,
                "options": open_field.options,
                "open_branch": open_field.open_branch,
            },
        )
