"""A rule raised an exception on this field; the rest of the run went on.

## What it does
When a rule's check raises, the engine records one finding at the field (or the file) with
the exception's type and message, and runs every other rule as usual. Set `PCDLINT_DEBUG=1`
to let the exception propagate with its traceback instead.

## Why is this bad?
The field was not fully checked: a gate that passed it would pass a file it did not read.
This is a bug in pcdlint (or in a rule); please report it with the schema that triggers it.

## Example
Not reproducible by a schema on purpose: every known trigger is fixed.

## Use instead
Upgrade pcdlint, or report the finding's message and the field.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import rule


@rule(code="PCD999", name="internal-error", severity="error", scope="engine", internal=True)
def check(subject: object, ctx: object) -> Iterator[object]:
    """Never run: the engine makes this rule's findings itself, from the exception it caught."""
    return iter(())
