"""Letter slots: whether a field's options could be remapped to single letters A, B, … that a
tokenizer writes as one round-trip token each, alone and after the field's suffix.

What depends on the tokenizer alone (each letter encoded alone; which letters join the quote)
is kept in the tokenizer's own `derived` table, once per tokenizer and alphabet.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from auditor.pcd.texts import STRING_CLOSE, field_head
from auditor.tokenizers.loader import LoadedTokenizer

SLOT_LETTERS = string.ascii_uppercase


@dataclass(frozen=True)
class SlotTable:
    """Single-letter remap: option i → letter; `failures` says why letters cannot serve."""

    letters: tuple[str, ...]
    failures: dict[str, str]
    viable: bool
    needed: int

    def to_dict(self, options: list) -> dict:
        return {
            "viable": self.viable,
            "needed": self.needed,
            "slots": [{"letter": letter, "option": option} for letter, option in zip(self.letters, options)]
            if self.viable
            else [],
            "failures": self.failures,
        }


def _letter_failures_alone(tokenizer: LoadedTokenizer, alphabet: str = SLOT_LETTERS) -> dict[str, str]:
    """Why each letter of `alphabet` fails alone (not one token, not round-tripping, sharing a
    token); once per tokenizer and alphabet (shared: callers must not change it)."""
    key = ("letters alone", alphabet)
    failures: dict[str, str] | None = tokenizer.derived.get(key)
    if failures is None:
        failures = {}
        seen: dict[int, str] = {}
        for letter, ids in zip(alphabet, tokenizer.ids_many(list(alphabet))):
            if len(ids) != 1:
                failures[letter] = f"encodes to {len(ids)} tokens"
            elif tokenizer.decode(ids) != letter:
                failures[letter] = f"decodes to {tokenizer.decode(ids)!r}"
            elif ids[0] in seen:
                failures[letter] = f"shares token {ids[0]} with {seen[ids[0]]}"
            else:
                seen[ids[0]] = letter
        tokenizer.derived[key] = failures
    return failures


def letter_probe_texts(
    field_name: str, alphabet: str = SLOT_LETTERS, tokenizer: LoadedTokenizer | None = None
) -> list[str]:
    """What letter_slots encodes for one field: the suffix, each letter alone and after it
    (with the tokenizer: not the letters after it that it joins, see _in_context)."""
    suffix = field_head(field_name) + '"'
    after = _in_context(tokenizer, suffix, list(alphabet)) if tokenizer is not None else list(alphabet)
    return [suffix, STRING_CLOSE, *alphabet, *(suffix + c + '"' for c in after)]


def _in_context(tokenizer: LoadedTokenizer, suffix: str, letters: list[str]) -> list[str]:
    """The letters whose `suffix + letter + '"'` must be encoded to be known: the plain others
    (plain_cuts) are the suffix's ids, the letter's and the quote's by construction. Whether a
    letter is plain depends on the suffix only through LoadedTokenizer.opens: the letters' own
    part is worked out once per tokenizer and alphabet."""
    if not tokenizer.opens(suffix):
        return list(letters)
    key = ("plain letters", "".join(letters))
    plain = tokenizer.derived.get(key)
    if plain is None:
        plain = tokenizer.derived[key] = [
            a and b for a, b in zip(tokenizer.joins_quote(letters), tokenizer.opening_joins(letters))
        ]
    return [c for c, cut in zip(letters, plain) if not cut]


def letter_slots(
    tokenizer: LoadedTokenizer, field_name: str, needed: int, alphabet: str = SLOT_LETTERS
) -> SlotTable:
    """Slots A, B, … of `alphabet` in order: each must be one round-trip token, alone and
    after the quote. Where the field's suffix `opens` and every letter is plain after it (no
    letter to encode in context), the table is the same for every field name: made once per
    tokenizer, alphabet and count (shared: callers must not change it)."""
    suffix = field_head(field_name) + '"'
    key = ("slots", alphabet, needed)
    opens = tokenizer.opens(suffix)
    if opens and key in tokenizer.derived:
        table: SlotTable = tokenizer.derived[key]
        return table
    failures = dict(_letter_failures_alone(tokenizer, alphabet))
    candidates = _in_context(tokenizer, suffix, [c for c in alphabet if c not in failures])
    if candidates:
        base = tokenizer.ids(suffix)
        close = tokenizer.ids(STRING_CLOSE)
        in_context = tokenizer.ids_many([suffix + c + '"' for c in candidates])
        for letter, ids in zip(candidates, in_context):
            alone = tokenizer.ids(letter)
            if ids != base + alone + close:
                pieces = [tokenizer.piece(t) for t in ids[len(base) - 1 :]]
                failures[letter] = f"merges with the quote after the suffix: {pieces}"
    letters = tuple(c for c in alphabet if c not in failures)
    in_order = all(c not in failures for c in alphabet[:needed]) and needed <= len(alphabet)
    table = SlotTable(letters if in_order else (), failures, in_order, needed)
    if opens and not candidates:
        tokenizer.derived[key] = table
    return table
