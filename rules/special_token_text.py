"""An option contains the text of one of the tokenizer's special or added tokens.

## What it does
Looks for the content of every special or added token of the tokenizer (`<|im_end|>`,
`<|endoftext|>`, `<file_sep>`, …) inside each option, and reports the token and its id.

## Why is this bad?
Encoders map such text to the special id instead of ordinary characters, so the option is
scored through a control token (an end-of-turn, an end-of-text). Servers may stop generation
there or strip the token from the output; the option cannot be produced as written.

## Example
```json
{"type": "object", "properties": {"marker": {"enum": ["<|im_end|>", "done"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"marker": {"enum": ["im_end", "done"]}}}
```
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens

SEPARATOR = "\x00"  # joins a field's options for one search (see _specials)


def _specials(tokenizer) -> tuple[dict[str, int], re.Pattern | None, bool]:
    """Per tokenizer: its special texts (not blank) → id, one alternation of them to pass over
    options without any (None: no such text), and whether a field's options can be searched
    at once, joined by SEPARATOR (no special text holds it, so no match spans two options)."""
    key = "PCD009 specials"
    if key not in tokenizer.derived:
        specials = {text: idx for text, idx in tokenizer.special_tokens.items() if text.strip()}
        tokenizer.derived[key] = (
            specials,
            re.compile("|".join(map(re.escape, specials))) if specials else None,
            not any(SEPARATOR in text for text in specials),
        )
    return tokenizer.derived[key]


@rule(code="PCD009", name="special-token-text", severity="error")
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    specials, anywhere, joinable = _specials(tokens.tokenizer)
    if anywhere is None:
        return
    if joinable and not anywhere.search(SEPARATOR.join(tokens.cache.split(tokens.site).texts)):
        return  # (most fields: no option holds a special text)
    for option in tokens.options:
        if not option.is_string or not anywhere.search(option.text):
            continue
        found = {text: idx for text, idx in specials.items() if text in option.text}
        if not found:
            continue
        shown = ", ".join(f"{t} (id {i})" for t, i in found.items())
        yield ctx.finding(
            f"option {option.value!r} contains special-token text {shown}, which the "
            f"encoder maps to the special id",
            option=option.index,
            data={"option": option.value, "special_tokens": [{"text": t, "id": i} for t, i in found.items()]},
        )
