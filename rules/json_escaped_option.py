r"""An option contains characters that JSON escapes, so the model types something else.

## What it does
Reports options containing `"`, `\`, or control characters. Inside a JSON string the model
types the escaped form (`\"`, `\\`, `\n`, `\u0007`), so the scored tokens must come from the
escaped text; the finding shows the raw option, the escaped text and both tokenizations.

## Why is this bad?
An engine that scores the raw option scores tokens the model would never write inside a JSON
string (a bare `"` ends the string). Even an engine that escapes correctly scores a backslash
token first for options that start with an escape, which is shared by every such option.

## Example
```json
{"type": "object", "properties": {"quote": {"enum": ["say \"hi\"", "wave"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"quote": {"enum": ["say hi", "wave"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import is_, itemgetter

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens


@rule(code="PCD008", name="json-escaped-option", severity="warning")
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    tokenizer = tokens.tokenizer
    strings, _, texts, _, _ = tokens.cache.split(tokens.site)
    if all(map(is_, texts, map(itemgetter(1), strings))):
        return  # (most fields: no option escapes, each text is the option itself; one pass)
    for option in tokens.options:
        if not option.is_string or option.text == option.value:
            continue
        raw_pieces = [tokenizer.piece(t) for t in tokenizer.encode(str(option.value))]
        escaped_pieces = [tokenizer.piece(t) for t in tokenizer.encode(option.text)]
        message = (
            f"option {option.value!r} is typed as {option.text} inside JSON; scored tokens "
            f"come from the escaped form ({' + '.join(map(repr, escaped_pieces))}), not the raw "
            f"option ({' + '.join(map(repr, raw_pieces))})"
        )
        yield ctx.finding(
            message,
            option=option.index,
            data={
                "option": option.value,
                "escaped": option.text,
                "raw_pieces": raw_pieces,
                "escaped_pieces": escaped_pieces,
                "scored_pieces": tokens.pieces(option),
            },
        )
