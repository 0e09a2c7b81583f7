"""The scored token sequence is not how the tokenizer would write the option.

## What it does
First-token scoring encodes the suffix `  "<field>": "<prefix>` and each option's remainder
separately, and scores the remainder's first token after the suffix's tokens. The rule encodes
the whole field text `  "<field>": "<option>"` once, the way the model would have produced it,
and reports options where that canonical tokenization splits differently at the scored
position: no token starts where the remainder starts, the token there is not the scored one, or
the suffix's own tokens differ from the canonical ones. The data lists canonical pieces against
scored pieces.

## Why is this bad?
The model is asked for a token sequence it would rarely produce (the prompt-boundary problem
that token healing exists for). Under Qwen2.5, `["approve", "approved"]` hoists `approve` into
the suffix and scores `d`, but the model writes `approved` as one token: after `approve` it
has been trained to expect almost anything but `d`, so `approved` is scored far too low.

## Example
```json
{"type": "object", "properties": {"decision": {"enum": ["approve", "approved"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"decision": {"enum": ["approve", "reject"]}}}
```
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens

MAX_LISTED = 20


def boundary_problem(tokens: SiteTokens, index: int) -> dict | None:
    """Canonical vs scored pieces of one string option, or None when they agree."""
    if tokens.boundary_ok(index):
        return None
    option = tokens.options[index]
    canonical = tokens.canonical_at(index)
    at = canonical.token_at(canonical.start + len(tokens.prefix))
    piece = tokens.tokenizer.piece
    opening = canonical.start - 1  # the option's opening quote
    canonical_pieces = [piece(t) for t, (_, end) in zip(canonical.ids, canonical.offsets) if end > opening]
    tokenizer = tokens.tokenizer
    suffix_ids, suffix_offsets = tokenizer.ids(tokens.suffix), tokenizer.offsets(tokens.suffix)
    scored_pieces = [piece(t) for t, (_, end) in zip(suffix_ids, suffix_offsets) if end > opening]
    scored_pieces += tokens.pieces(option) + ([] if not option.ids else ['"'])
    return {
        "option": option.value,
        "canonical_pieces": canonical_pieces,
        "scored_pieces": scored_pieces,
        "scored_token": piece(option.scored_id),
        "boundary_in_canonical": at is not None,
    }


def _path(pieces: list[str]) -> str:
    """`' "' | '°' | 'C' | '"'`: each token quoted, so where one ends shows (`'°C'` is one)."""
    return " | ".join(repr(piece) for piece in pieces)


@rule(code="PCD005", name="non-canonical-boundary", severity="warning", reads=("canonical",), suggests=True)
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    problems = [(i, p) for i in tokens.noncanonical_options if (p := boundary_problem(tokens, i)) is not None]
    if not problems:
        return
    first_index, first = problems[0]
    count = f"{len(problems)} of {len(tokens.options)} options are" if len(problems) > 1 else "1 option is"
    message = (
        f"{count} scored on a non-canonical token path; {first['option']!r} is scored as "
        f"{_path(first['scored_pieces'])} but the tokenizer writes {_path(first['canonical_pieces'])}"
    )
    data = {
        "prefix": tokens.prefix,
        "suffix": tokens.suffix,
        "options": [p for _, p in problems[:MAX_LISTED]],
        "count": len(problems),
    }
    if ctx.suggestions:
        data["suggestions"] = ctx.suggest(tokens)
    yield ctx.finding(message, data=data, option=first_index, related=[i for i, _ in problems[1:MAX_LISTED]])
