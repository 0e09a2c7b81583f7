"""An option equals the options' common prefix, so it is scored by a bare closing quote.

## What it does
After the common prefix is hoisted into the suffix `  "<field>": "<prefix>`, an option that is
exactly the prefix has nothing left to score: the engine scores it by the closing-quote token
`"` alone. The rule then measures how the tokenizer writes the quote after a value in JSON:
after `"<field>": "<prefix>` it tokenizes `",\n`, `",`, `"}` and `"\n` and looks at the token
that holds the quote. Where that token is merged with what follows (Qwen2.5 writes `",\n`,
`"}` and `"\n` as single tokens), the model writing this option puts its probability on the
merged token, never on the bare `"` the engine reads: the option is under-scored on every
request, and the finding is a warning naming the measured tokens. Where the quote is a token of
its own in every case, the score is the model's wish to stop after the prefix, correct but easy
to misread, and the finding is info. `pcdlint verify` measures the real gap with a model.
This concerns the engines that hoist a common prefix (`gather`, `rlcd-mlx`).

## Why is this bad?
With `["Coronariografia", "Coronariografia e Angioplastia"]` the suffix ends in
`Coronariografia`; the first option is scored by `"`, the second by ` e`. A model that means the
first writes `",\n` (one Qwen2.5 token), so the probability the engine reads for it is a small
leftover, and the second option wins even when the context says the first.

## Example
```json
{"type": "object", "properties": {"procedure": {"enum": ["Coronariografia", "Coronariografia e Angioplastia"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"procedure": {"enum": ["Coronariografia sola", "Coronariografia e Angioplastia"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens

# What follows a string value's closing quote in JSON: more keys (pretty, compact), the last key
# (compact, pretty).
FOLLOWERS = (",\n", ",", "}", "\n")


def quote_tokens(tokens: SiteTokens) -> list[str]:
    """The distinct tokens the tokenizer writes the closing quote as, after this field's suffix,
    where the token holds more than the quote; [] when the quote is always a token alone."""
    tokenizer = tokens.tokenizer
    at = len(tokens.suffix)  # where the closing quote is
    merged: list[str] = []
    for follower in FOLLOWERS:
        text = tokens.suffix + '"' + follower
        for start, end in tokenizer.offsets(text):
            if start <= at < end:
                piece = text[start:end]
                if piece != '"' and piece not in merged:
                    merged.append(piece)
                break
    return merged


@rule(code="PCD006", name="empty-remainder", severity="warning")
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    prefix = tokens.prefix
    empty = [o for o in tokens.options if o.is_string and not o.ids and prefix]
    if not empty or len([o for o in tokens.options if o.is_string]) < 2:
        return
    merged = quote_tokens(tokens)
    shown = ", ".join(repr(p) for p in merged)
    for option in empty:
        if merged:
            message = (
                f"{option.text!r} equals the common prefix {prefix!r}: it is scored by the bare "
                f"closing quote '\"', but {tokens.tokenizer.id} writes the quote after a value as "
                f"{shown}: the option is under-scored (pcdlint verify measures by how much)"
            )
        else:
            message = (
                f"{option.text!r} equals the common prefix {prefix!r}: it is scored by the "
                f"closing-quote token, i.e. the model's wish to stop after {prefix!r}"
            )
        severity = ctx.severity if merged or ctx.severity != ctx.rule.severity else "info"
        yield ctx.finding(
            message,
            option=option.index,
            severity=severity,
            data={"option": option.value, "prefix": prefix, "quote_tokens": merged},
        )
