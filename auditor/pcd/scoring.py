"""The scoring model of shipped PCD/RLCD engines, computed from a tokenizer.

The seed convention: the prefill ends after `{\n` (PREFILL_END) and each field is continued
by its own suffix. For string options the suffix is `  "<field>": "<prefix>` where prefix is the options' common
prefix (os.path.commonprefix); an option's scored token is the first token of its remainder
encoded alone, or the closing-quote token when the remainder is empty. Non-string options are
scored as their JSON literal after `  "<field>":`, cut where the canonical tokenization of the
whole text cuts (booleans as ` true`, numbers after the space token). The engine builds one
`SiteTokens` per (site, tokenizer) and every rule reads it.
"""

from __future__ import annotations

import json
import os
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Generic, Protocol, TypeVar

from auditor.tokenizers.loader import LoadedTokenizer

SLOT_LETTERS = string.ascii_uppercase
PREFILL_END = "{\n"  # the shared prompt ends here; every field's suffix follows it
STRING_CLOSE = '"'  # what ends a string option
LITERAL_CLOSE = ","  # what ends a literal option when the model writes the next field


class FieldLike(Protocol):
    """What the scoring model needs of a field: a key and its options in schema order."""

    name: str
    options: list


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')


def json_text(value) -> str:
    """What the model types for an option inside the JSON object (string content escaped)."""
    if isinstance(value, str):
        if not _NEEDS_ESCAPE.search(value):
            return value
        return json.dumps(value, ensure_ascii=False)[1:-1]
    return json.dumps(value, ensure_ascii=False)


def field_head(name: str) -> str:
    return f'  "{json_text(name)}": '


def split_options(site: FieldLike):
    """(string options, literal options, typed texts, hoisted prefix, remainders) of a site."""
    cached = site.__dict__.get("_split")
    if cached is not None:
        return cached
    strings = [(i, o) for i, o in enumerate(site.options) if isinstance(o, str)]
    literals = [(i, o) for i, o in enumerate(site.options) if not isinstance(o, str)]
    texts = [json_text(o) for _, o in strings]
    prefix = os.path.commonprefix(texts) if len(texts) >= 2 else ""
    result = strings, literals, texts, prefix, [t[len(prefix):] for t in texts]
    site.__dict__["_split"] = result
    return result


def prefetch(sites: Sequence[FieldLike], tokenizer: LoadedTokenizer) -> None:
    """Encode every remainder of these sites in one native batch (fills the tokenizer memo)."""
    tokenizer.encode_batch([r for site in sites for r in split_options(site)[4]])


@dataclass(frozen=True)
class ScoredOption:
    index: int
    value: object
    text: str  # the option as typed in JSON
    remainder: str  # the part scored after the suffix
    ids: tuple[int, ...]  # remainder tokens; () for an empty remainder
    scored_id: int

    @property
    def is_string(self) -> bool:
        return isinstance(self.value, str)


@dataclass(frozen=True)
class CanonicalText:
    """How the tokenizer cuts the whole field text; `start` is where the option begins."""

    text: str
    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    start: int

    def token_at(self, char: int) -> int | None:
        """Index of the token that starts exactly at `char`, or None when one spans it."""
        return next((k for k, (begin, _) in enumerate(self.offsets) if begin == char), None)


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
            "slots": [
                {"letter": letter, "option": option}
                for letter, option in zip(self.letters, options)
            ]
            if self.viable
            else [],
            "failures": self.failures,
        }


F = TypeVar("F", bound=FieldLike)


class SiteTokens(Generic[F]):
    """Tokenization of one site under one tokenizer, shared by every rule (and the decoder,
    whose fields carry only a name and options)."""

    def __init__(self, site: F, tokenizer: LoadedTokenizer):
        self.site = site
        self.tokenizer = tokenizer
        self.memo: dict = {}  # derived data higher layers compute once per tokenization
        self.close_id = tokenizer.encode('"')[0]
        strings, literals, texts, self.prefix, remainders = split_options(site)
        self.suffix = field_head(site.name) + '"' + self.prefix
        scored: dict[int, ScoredOption] = {}
        for (index, value), text, rest, encoded in zip(
            strings, texts, remainders, tokenizer.encode_batch(remainders)
        ):
            ids = tuple(encoded)
            scored[index] = ScoredOption(index, value, text, rest, ids, ids[0] if ids else self.close_id)
        if literals:
            self.literal_suffix, literal_options = self._literals(literals)
            scored.update(literal_options)
        else:
            self.literal_suffix = field_head(site.name).rstrip()
        self.options = [scored[i] for i in range(len(site.options))]
        self.has_strings = bool(strings)
        self.mixed = bool(strings) and bool(literals)

    def _literals(self, literals) -> tuple[str, dict[int, ScoredOption]]:
        base = field_head(self.site.name).rstrip()  # `  "field":`
        fulls = [f"{base} {json_text(value)}" for _, value in literals]
        encodings = self.tokenizer.hf.encode_batch(fulls, add_special_tokens=False)
        out: dict[int, ScoredOption] = {}
        cut_suffix = base
        for (index, value), full, enc in zip(literals, fulls, encodings):
            first_char = len(base) + 1
            # the token holding the literal's first character; it may start at the space
            position = next(
                (k for k, (start, end) in enumerate(enc.offsets) if start <= first_char < end),
                len(enc.ids) - 1,
            )
            cut = enc.offsets[position][0]
            ids = tuple(enc.ids[position:])
            cut_suffix = full[:cut]
            out[index] = ScoredOption(index, value, json_text(value), full[cut:], ids, ids[0])
        return cut_suffix, out

    # -- derived views rules share

    @cached_property
    def buckets(self) -> dict[int, list[int]]:
        """scored token id → option indexes, in option order; a bucket > 1 is a collision."""
        groups: dict[int, list[int]] = {}
        for option in self.options:
            groups.setdefault(option.scored_id, []).append(option.index)
        return groups

    @property
    def collisions(self) -> list[tuple[int, list[int]]]:
        return [(tid, idx) for tid, idx in self.buckets.items() if len(idx) > 1]

    @property
    def multi_token(self) -> list[ScoredOption]:
        return [o for o in self.options if len(o.ids) > 1]

    def pieces(self, option: ScoredOption) -> list[str]:
        return [self.tokenizer.piece(t) for t in option.ids] or ['"']

    @cached_property
    def canonical(self) -> dict[int, CanonicalText]:
        """String option index → canonical tokenization of `  "<field>": "<option>"`."""
        base = field_head(self.site.name) + '"'
        strings = [o for o in self.options if o.is_string]
        texts = [base + o.text + '"' for o in strings]
        encodings = self.tokenizer.hf.encode_batch(texts, add_special_tokens=False)
        return {
            o.index: CanonicalText(text, tuple(enc.ids), tuple(enc.offsets), len(base))
            for o, text, enc in zip(strings, texts, encodings)
        }

    @cached_property
    def suffix_ids(self) -> tuple[int, ...]:
        return tuple(self.tokenizer.encode(self.suffix))

    @cached_property
    def literal_suffix_ids(self) -> tuple[int, ...]:
        return tuple(self.tokenizer.encode(self.literal_suffix))

    @cached_property
    def literal_close_id(self) -> int:
        return self.tokenizer.encode(LITERAL_CLOSE)[0]

    def option_suffix_ids(self, option: ScoredOption) -> tuple[int, ...]:
        """The suffix an option is scored after: the string suffix or the literal one."""
        return self.suffix_ids if option.is_string else self.literal_suffix_ids

    def sequence(self, option: ScoredOption) -> tuple[int, ...]:
        """The tokens the model writes for an option after its suffix, closing token included."""
        close = self.close_id if option.is_string else self.literal_close_id
        return option.ids + (close,)

    def boundary_ok(self, index: int) -> bool:
        """Whether the canonical tokenization of the whole field text cuts where scoring does:
        the suffix's tokens, then the option's scored token (literals are cut canonically)."""
        option = self.options[index]
        if not option.is_string:
            return True
        canonical = self.canonical[index]
        at = canonical.token_at(canonical.start + len(self.prefix))
        return (at is not None and canonical.ids[:at] == self.suffix_ids
                and canonical.ids[at] == option.scored_id)

    @cached_property
    def noncanonical_options(self) -> list[int]:
        return [o.index for o in self.options if not self.boundary_ok(o.index)]

    @cached_property
    def option_lengths(self) -> list[int]:
        """Tokens of each option's JSON text encoded alone, in option order."""
        return [len(ids) for ids in self.tokenizer.encode_batch([o.text for o in self.options])]

    @cached_property
    def slot_table(self) -> SlotTable:
        return letter_slots(self.tokenizer, self.site.name, len(self.options))


_alone_cache: dict[int, dict[str, str]] = {}


def _letter_failures_alone(tokenizer: LoadedTokenizer) -> dict[str, str]:
    key = id(tokenizer)
    if key not in _alone_cache:
        failures: dict[str, str] = {}
        seen: dict[int, str] = {}
        for letter, ids in zip(SLOT_LETTERS, tokenizer.encode_batch(list(SLOT_LETTERS))):
            if len(ids) != 1:
                failures[letter] = f"encodes to {len(ids)} tokens"
            elif tokenizer.decode(ids) != letter:
                failures[letter] = f"decodes to {tokenizer.decode(ids)!r}"
            elif ids[0] in seen:
                failures[letter] = f"shares token {ids[0]} with {seen[ids[0]]}"
            else:
                seen[ids[0]] = letter
        _alone_cache[key] = failures
    return _alone_cache[key]


def letter_slots(tokenizer: LoadedTokenizer, field_name: str, needed: int) -> SlotTable:
    """Slots A, B, … in order: each must be one round-trip token, alone and after the quote."""
    failures = dict(_letter_failures_alone(tokenizer))
    suffix = field_head(field_name) + '"'
    base = tokenizer.encode(suffix)
    close = tokenizer.encode('"')
    candidates = [c for c in SLOT_LETTERS if c not in failures]
    in_context = tokenizer.encode_batch([suffix + c + '"' for c in candidates])
    for letter, ids in zip(candidates, in_context):
        alone = tokenizer.encode(letter)
        if ids != base + alone + close:
            pieces = [tokenizer.piece(t) for t in ids[len(base) - 1:]]
            failures[letter] = f"merges with the quote after the suffix: {pieces}"
    letters = tuple(c for c in SLOT_LETTERS if c not in failures)
    in_order = all(c not in failures for c in SLOT_LETTERS[:needed]) and needed <= len(SLOT_LETTERS)
    return SlotTable(letters if in_order else (), failures, in_order, needed)
