"""An option does not survive encode → decode, or needs unknown or byte-fallback tokens.

## What it does
Encodes each string option alone and decodes it again. The rule reports options whose decoded
text differs from the NFC-normalised option, whose ids include the unknown token, or that need
byte pieces: tokens that stand for part of a UTF-8 character (`<0xE2>` in SentencePiece
vocabularies, partial bytes in byte-level BPE).

## Why is this bad?
What the engine scores is then not the option: a lossy round trip means two options can share
tokens they do not share as text, an unknown token scores every rare character the same, and
byte pieces spend several scored steps on one character, whose first byte many options share.

## Example
```json
{"type": "object", "properties": {"glyph": {"enum": ["𓀀", "𓀁"]}}}
```

## Use instead
```json
{"type": "object", "properties": {"glyph": {"enum": ["seated_man", "man_kneeling"]}}}
```
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

from auditor.linter import Finding, RuleContext, rule
from auditor.pcd import SiteTokens

BYTE_PIECE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")


def _pieces(tokenizer, ids_lists: Sequence[Sequence[int]]) -> dict[int, tuple[bool, bool]]:
    """Per tokenizer, token id → (vocab entry is a <0xNN> byte piece, decodes alone to
    U+FFFD); extended by the tokens of these lists in one decode_batch."""
    table = tokenizer.derived.setdefault("PCD010 pieces", {})
    missing = list({t for ids in ids_lists for t in ids if t not in table})
    if missing:
        decoded = tokenizer.decode_batch([[t] for t in missing])
        for t, text in zip(missing, decoded):
            table[t] = (bool(BYTE_PIECE.match(tokenizer.vocab_entry(t) or "")), "\ufffd" in text)
    return table


@rule(code="PCD010", name="lossy-tokenization", severity="warning", reads=("normal",))
def check(tokens: SiteTokens, ctx: RuleContext) -> Iterator[Finding]:
    tokenizer = tokens.tokenizer
    # (the options the tokenizer surely round-trips have nothing to find: most fields' all,
    # told in one pass)
    if all(tokenizer.round_trips_many([value for _, value in tokens.cache.split(tokens.site).strings])):
        return
    candidates = [o for o in tokens.options if isinstance(o.value, str) and o.value]
    trips = tokenizer.round_trips_many([str(o.value) for o in candidates])
    strings = [o for o, trip in zip(candidates, trips) if not trip]
    normal = [unicodedata.normalize("NFC", str(o.value)) for o in strings]
    encoded = tokenizer.ids_many(normal)
    table = _pieces(tokenizer, encoded)
    unk = tokenizer.unk_id
    decoded_all = tokenizer.decode_batch(encoded)
    for option, text, ids, decoded in zip(strings, normal, encoded, decoded_all):
        problems = []
        if decoded != text:
            problems.append(f"decodes to {decoded!r}")
        if unk is not None and unk in ids:
            problems.append("contains the unknown token")
        lone_fffd_counts = "\ufffd" not in text
        byte_pieces = [t for t in ids if table[t][0] or (table[t][1] and lone_fffd_counts)]
        if byte_pieces:
            problems.append(f"needs {len(byte_pieces)} byte pieces of {len(ids)} tokens")
        if not problems:
            continue
        yield ctx.finding(
            f"option {option.value!r} {'; '.join(problems)}",
            option=option.index,
            data={
                "option": option.value,
                "decoded": decoded,
                "token_ids": list(ids),
                "byte_pieces": len(byte_pieces),
                "problems": problems,
            },
        )
