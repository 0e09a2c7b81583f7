"""A key written twice in one object of the source, or a score level given twice.

## What it does
Reads the keys the file's reader found written more than once in one object (the document's
duplicate-key record, kept for JSON and YAML and for any reader that feeds it) and reports
each, naming every line it is written on: a question id given twice, an option of a choice
given twice, a field of a body or of a schema given twice (an error). In a decision request
it also reports a score level written twice in its list (a warning).

## Why is this bad?
A JSON parser keeps the last value of a repeated key and says nothing: Python's `json`,
JavaScript's `JSON.parse` and serde_json all do, PyYAML does the same for YAML (ruamel.yaml
refuses the file), and so do a Python dict and a JavaScript object literal that build a request
in code (the code readers feed the same record). The first question or option is silently dropped before the request is
sent: the team reads two questions in its file, the engine answers one, and which one depends
on the order the keys were written in. Every engine is affected the same way, because the
request is parsed before any engine sees it. A repeated level is not dropped: the engine
shows both, and the answer's probability splits between two levels that mean the same.

## Example
```json
{"state": "The integration keeps failing.", "questions": {
  "team": {"type": "choice", "instructions": "Which team?", "criteria": {"billing": null, "technical": null}},
  "team": {"type": "noul", "instructions": "Is it urgent?"}}}
```

## Use instead
```json
{"state": "The integration keeps failing.", "questions": {
  "team": {"type": "choice", "instructions": "Which team?", "criteria": {"billing": null, "technical": null}},
  "urgent": {"type": "noul", "instructions": "Is it urgent?"}}}
```

## How to fix it
Rename one of the two (a question id or option name must be unique in its object), or delete
the copy you do not mean to send. Give each score level its own description.

## How to silence it
A duplicate key is not silenced by `x-pcdlint-ignore` placed in the object (the reader keeps
one of its two values); use `per-file-ignores` or `--ignore PCD203`.

## Source
Python `json` (the last value of a repeated key wins, RFC 8259 §4 leaves it undefined),
ECMAScript `JSON.parse` (InternalizeJSONProperty: last wins), PyYAML `construct_mapping`
(last wins), ruamel.yaml `check_mapping_key` (DuplicateKeyError by default).

## Measured precision
On the real requests of `tests/data/decision-requests/`: 1 of 1 findings right (found 1 of 1
expected); on openai/evals' `registry/modelgraded/keywords.yaml` it finds `input` written
twice, which PyYAML reads as the second.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import FileModel, Finding, Location, RuleContext, rule


def _what(pointer: str, model: FileModel) -> str:
    """How a duplicate's pointer reads: a question, an option of one, or a key."""
    for site in model.sites:
        if site.question_kind is None:
            continue
        if pointer == site.pointer:
            return f"question {site.question_name!r}"
        if pointer in site.option_pointers:
            return f"option {pointer.rsplit('/', 1)[1]!r} of question {site.question_name!r}"
    return f"key {pointer.rsplit('/', 1)[1]!r}"


def _lines(spans) -> str:
    lines = [str(s.line) for s in spans]
    return ", ".join(lines[:-1]) + f" and {lines[-1]}" if len(lines) > 1 else lines[0]


@rule(code="PCD203", name="duplicate-key", severity="error", scope="file", needs_tokenizer=False)
def check(model: FileModel, ctx: RuleContext) -> Iterator[Finding]:
    for duplicate in model.document.duplicates:
        what = _what(duplicate.pointer, model)
        dropped = len(duplicate.spans) - 1
        finding = ctx.finding(
            f"{what} is written {len(duplicate.spans)} times (lines {_lines(duplicate.spans)}): only the last "
            f"is kept, the {'first is' if dropped == 1 else f'first {dropped} are'} silently dropped",
            pointer=duplicate.pointer,
            data={
                "key": duplicate.key,
                "lines": [s.line for s in duplicate.spans],
                "kept_line": duplicate.spans[-1].line,
            },
        )
        # (at the first time the key is written, the one dropped; the kept one is related)
        finding.span = duplicate.spans[0]
        finding.related = [
            Location(
                duplicate.pointer, span, "written again here" + (" (the value kept)" if n == last else "")
            )
            for n, span in enumerate(duplicate.spans[1:], 1)
            for last in [len(duplicate.spans) - 1]
        ]
        yield finding
    for site in model.sites:
        if site.question_kind != "score":
            continue
        seen: dict[str, int] = {}
        for index, level in enumerate(site.options):
            key = " ".join(str(level).casefold().split())
            if key in seen:
                yield ctx.finding(
                    f"level {index} of score question {site.question_name!r} repeats level {seen[key]} "
                    f"({str(level)[:60]!r}): the engine shows both, and the answer splits between them",
                    pointer=site.option_pointers[index],
                    severity="warning",
                    data={"level": index, "repeats": seen[key]},
                )
            else:
                seen[key] = index
