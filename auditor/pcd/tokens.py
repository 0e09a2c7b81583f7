"""SiteTokens: one site's tokenization under one tokenizer, as the scoring model scores it.

An option's scored token is the first token of its remainder encoded alone, or the
closing-quote token when the remainder is empty. Non-string options are scored as their JSON
literal after `  "<field>":`, cut where the canonical tokenization of the whole text cuts
(booleans as ` true`, numbers after the space token). The engine builds one SiteTokens per
(site, tokenizer), under the run's RunCache, and every rule reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Generic, NamedTuple, TypeVar

from auditor.lazy import cached_property
from auditor.pcd.buckets import first_token_buckets
from auditor.pcd.joins import JoinFlags, closed_remainder_ids
from auditor.pcd.letters import SLOT_LETTERS, SlotTable, letter_slots
from auditor.pcd.runcache import RunCache
from auditor.pcd.texts import (
    LITERAL_CLOSE,
    STRING_CLOSE,
    FieldLike,
    array_depth,
    canonical_text,
    canonical_texts,
    field_head,
    field_text,
    json_text,
)
from auditor.tokenizers.loader import LoadedTokenizer


class ScoredOption(NamedTuple):  # one per option (a 100,000-option enum holds 100,000)
    index: int  # type: ignore[assignment]  # (shadows tuple.index, which nothing calls)
    value: object
    text: str  # the option as typed in JSON
    remainder: str  # the part scored after the suffix
    ids: tuple[int, ...]  # remainder tokens; () for an empty remainder
    scored_id: int
    is_string: bool  # a string option (else a literal: number, boolean, null)


_scored_id = itemgetter(5)  # ScoredOption.scored_id, read without a call per option


@dataclass(frozen=True, slots=True)
class CanonicalText:
    """How the tokenizer cuts the whole field text; `start` is where the option begins."""

    text: str
    ids: tuple[int, ...]
    offsets: tuple[tuple[int, int], ...]
    start: int

    def token_at(self, char: int) -> int | None:
        """Index of the token that starts exactly at `char`, or None when one spans it."""
        return next((k for k, (begin, _) in enumerate(self.offsets) if begin == char), None)


F = TypeVar("F", bound=FieldLike)


class SiteTokens(Generic[F]):
    """Tokenization of one site under one tokenizer, shared by every rule (and the decoder,
    whose fields carry only a name and options). `cache`: the run's RunCache (default: one of
    its own), where the site's split, texts and join flags are kept."""

    def __init__(self, site: F, tokenizer: LoadedTokenizer, cache: RunCache | None = None) -> None:
        self.site = site
        self.tokenizer = tokenizer
        self.cache = cache if cache is not None else RunCache()
        self.memo: dict[Any, Any] = {}  # derived data higher layers compute once per tokenization
        self.close_id = tokenizer.ids(STRING_CLOSE)[0]
        strings, literals, texts, self.prefix, remainders = self.cache.split(site)
        # items of an array are typed after `"<field>": [` (Site.array_depth; 0 for other fields)
        self.array_depth = array_depth(site)
        self.suffix = field_head(site.name, self.array_depth) + '"' + self.prefix
        # (tuple.__new__: a ScoredOption without its Python __new__, one per option of a field)
        close, new = self.close_id, tuple.__new__
        strung = [
            new(ScoredOption, (index, value, text, rest, ids, ids[0] if ids else close, True))
            for (index, value), text, rest, ids in zip(
                strings, texts, remainders, map(tuple, tokenizer.ids_many(remainders))
            )
        ]
        self.options: list[ScoredOption]
        if literals:
            self.literal_suffix, literal_options = self._literals(literals)
            scored = {o.index: o for o in strung}
            scored.update(literal_options)
            self.options = [scored[i] for i in range(len(site.options))]
        else:
            self.literal_suffix = field_head(site.name, self.array_depth).rstrip()
            self.options = strung  # (strings only: in option order)
        self.has_strings = bool(strings)
        self.mixed = bool(strings) and bool(literals)

    # per option: whether `remainder + '"'` is its ids and the quote's (closes), and also the
    # canonical field text the suffix's ids before those (plain); literals: neither

    @cached_property
    def _join_flags(self) -> JoinFlags:
        return self.cache.join_flags(self.site, self.tokenizer)

    @property
    def closes(self) -> list[bool]:
        return self._join_flags[0]

    @property
    def plain(self) -> list[bool]:
        return self._join_flags[1]

    def _literals(self, literals: list[tuple[int, object]]) -> tuple[str, dict[int, ScoredOption]]:
        base = field_head(self.site.name, self.array_depth).rstrip()  # `  "field":`
        gap = "" if base.endswith("[") else " "  # `  "flags": [true`, `  "flag": true`
        fulls = self.cache.literal_texts(self.site)
        tokenizer = self.tokenizer
        tokenizer.prefill(fulls, fulls)
        out: dict[int, ScoredOption] = {}
        cut_suffix = base
        for (index, value), full in zip(literals, fulls):
            all_ids, offsets = tokenizer.ids(full), tokenizer.offsets(full)
            first_char = len(base) + len(gap)
            # the token holding the literal's first character; it may start at the space
            position = next(
                (k for k, (start, end) in enumerate(offsets) if start <= first_char < end),
                len(all_ids) - 1,
            )
            cut = offsets[position][0]
            ids = tuple(all_ids[position:])
            cut_suffix = full[:cut]
            out[index] = ScoredOption(index, value, json_text(value), full[cut:], ids, ids[0], False)
        return cut_suffix, out

    # -- derived views rules share

    @cached_property
    def buckets(self) -> dict[int, list[int]]:
        """scored token id → option indexes, in option order; a bucket > 1 is a collision."""
        return first_token_buckets(self.scored_tokens)

    @cached_property
    def scored_tokens(self) -> list[int]:
        """Each option's scored token id, in option order."""
        return list(map(_scored_id, self.options))

    @cached_property
    def collisions(self) -> list[tuple[int, list[int]]]:
        """The buckets of two or more options (most fields have none: then no bucket is built)."""
        scored = self.scored_tokens
        if len(set(scored)) == len(scored):
            return []
        return [(tid, idx) for tid, idx in self.buckets.items() if len(idx) > 1]

    @cached_property
    def multi_token(self) -> list[ScoredOption]:
        return [o for o in self.options if len(o.ids) > 1]

    def pieces(self, option: ScoredOption) -> list[str]:
        return self.tokenizer.pieces(option.ids) or ['"']

    def _canonical_text(self, option: ScoredOption) -> str:
        return canonical_text(field_head(self.site.name, self.array_depth), option.text)

    @cached_property
    def suffix_ids(self) -> tuple[int, ...]:
        return tuple(self.tokenizer.ids(self.suffix))

    @cached_property
    def literal_suffix_ids(self) -> tuple[int, ...]:
        return tuple(self.tokenizer.ids(self.literal_suffix))

    @cached_property
    def literal_close_id(self) -> int:
        return self.tokenizer.ids(LITERAL_CLOSE)[0]

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
        if not option.is_string or self.plain[index]:
            return True
        return self._cuts_at_suffix(option, self._canonical_text(option))

    def _cuts_at_suffix(self, option: ScoredOption, text: str) -> bool:
        # the first token starting where the remainder begins (len(suffix): the canonical text
        # starts with the suffix) must follow exactly the suffix's tokens and be the scored one
        suffix = self.suffix_ids
        n = len(suffix)
        ids = self.tokenizer.ids(text)
        if len(ids) <= n or ids[n] != option.scored_id or tuple(ids[:n]) != suffix:
            return False
        return self.tokenizer.token_begins_at(text, n, len(self.suffix))

    def canonical_at(self, index: int) -> CanonicalText:
        """How the tokenizer cuts `  "<field>": "<option>"` for string option `index`."""
        text = self._canonical_text(self.options[index])
        tokenizer = self.tokenizer
        start = len(field_head(self.site.name, self.array_depth)) + 1  # after the opening quote
        return CanonicalText(text, tuple(tokenizer.ids(text)), tuple(tokenizer.offsets(text)), start)

    @cached_property
    def noncanonical_options(self) -> list[int]:
        """String options whose canonical tokenization does not cut where scoring does."""
        strings = [o for o, plain in zip(self.options, self.plain) if o.is_string and not plain]
        if not strings:  # (every option plain: it cuts canonically by construction)
            return []
        texts = canonical_texts(field_head(self.site.name, self.array_depth), [o.text for o in strings])
        self.tokenizer.prefill(texts, texts)
        return [o.index for o, text in zip(strings, texts) if not self._cuts_at_suffix(o, text)]

    @cached_property
    def closed_sequences(self) -> list[tuple[int, ...] | None]:
        """closed_ids of every option, in option order (literals: None; the `gather` plan's)."""
        tokenizer, closes = self.tokenizer, self.closes
        if self.mixed or not self.has_strings:
            return [
                closed_remainder_ids(tokenizer, o.remainder, closes[o.index], o.ids) if o.is_string else None
                for o in self.options
            ]
        # all strings, in option order: closed_remainder_ids of each, without a call per option
        tail, ids = (self.close_id,), tokenizer.ids
        return [
            o.ids + tail if joins else ids(o.remainder + STRING_CLOSE)
            for o, joins in zip(self.options, closes)
        ]

    def closed_ids(self, option: ScoredOption) -> tuple[int, ...]:
        """ids of a string option's `remainder + '"'` (joined from the memo where they join)."""
        return closed_remainder_ids(self.tokenizer, option.remainder, self.closes[option.index], option.ids)

    @cached_property
    def field_lengths(self) -> list[int]:
        """Tokens of each option's field text `  "<field>": <option>` (texts.field_texts; the
        cost model's), joined from the depth-0 suffix's and the option's where they join
        (RunCache.field_joins; at depth 0 the field text is the canonical one): only the
        others' texts are made."""
        site, ids = self.site, self.tokenizer.ids
        suffix, joined = self.cache.field_joins(site, self.tokenizer)
        n = len(ids(suffix)) + 1
        return [
            n + len(o.ids) if cut else len(ids(field_text(site, o.index)))
            for o, cut in zip(self.options, joined)
        ]

    @cached_property
    def option_lengths(self) -> list[int]:
        """Tokens of each option's JSON text encoded alone, in option order."""
        return [len(ids) for ids in self.tokenizer.ids_many([o.text for o in self.options])]

    @cached_property
    def slot_table(self) -> SlotTable:
        return self.slots(SLOT_LETTERS)

    def slots(self, alphabet: str) -> SlotTable:
        """The single-letter remap over this alphabet (an engine's, or the `letters` option)."""
        key = ("slots", alphabet)
        if key not in self.memo:
            self.memo[key] = letter_slots(self.tokenizer, self.site.name, len(self.options), alphabet)
        table: SlotTable = self.memo[key]
        return table


def scored_ids(
    site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
) -> tuple[str, list[int]]:
    """(hoisted prefix, each option's scored token id) as SiteTokens scores them, without the
    per-option objects for a site of strings only (PCD003's windows of a large enum)."""
    cache = cache if cache is not None else RunCache()
    _, literals, _, prefix, remainders = cache.split(site)
    if literals:
        tokens = SiteTokens(site, tokenizer, cache)
        return tokens.prefix, [o.scored_id for o in tokens.options]
    close = tokenizer.ids(STRING_CLOSE)[0]
    return prefix, [ids[0] if ids else close for ids in tokenizer.ids_many(remainders)]
