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
import math
import os
import re
import string
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Generic, NamedTuple, Protocol, TypeVar

from auditor.lazy import cached_property
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
    kind = type(value)  # the literals a schema holds most, as json.dumps writes them
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False)


@lru_cache(maxsize=4096)  # (a site's head is asked for by every option's canonical text)
def field_head(name: str, array_depth: int = 0) -> str:
    """`  "<field>": ` — and one `[` per array level for the items of an array (`  "tags": [`)."""
    return f'  "{json_text(name)}": ' + "[" * array_depth


def split_options(site: FieldLike):
    """(string options, literal options, typed texts, hoisted prefix, remainders) of a site."""
    cached = site.__dict__.get("_split")
    if cached is not None:
        return cached
    strings = [(i, o) for i, o in enumerate(site.options) if isinstance(o, str)]
    literals = [(i, o) for i, o in enumerate(site.options) if not isinstance(o, str)]
    needs_escape = _NEEDS_ESCAPE.search  # (json_text, without a call per plain option)
    texts = [json_text(o) if needs_escape(o) else o for _, o in strings]
    prefix = os.path.commonprefix(texts) if len(texts) >= 2 else ""
    result = strings, literals, texts, prefix, [t[len(prefix) :] for t in texts]
    site.__dict__["_split"] = result
    return result


def option_windows(n: int, limit: int) -> list[tuple[int, int]]:
    """(start, end) of balanced windows of at most `limit` options over `n` (PCD003's split)."""
    count = math.ceil(n / limit)
    size = math.ceil(n / count)
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def window_sites(site, limit: int) -> list:
    """The site cut into option_windows, each a site of its own (its own common prefix); the
    same window objects for the same limit (the engine's prefetch and PCD003 share them)."""
    key = f"_windows_{limit}"
    cached = site.__dict__.get(key)
    if cached is None:
        _, literals, texts, _, _ = split_options(site)
        cached = []
        for a, b in option_windows(len(site.options), limit):
            window = replace(
                site,
                options=site.options[a:b],
                option_pointers=site.option_pointers[a:b],
                option_spans=site.option_spans[a:b],
            )
            if not literals:  # its split from the site's JSON texts (its own prefix hoisted)
                part = texts[a:b]
                prefix = os.path.commonprefix(part) if len(part) >= 2 else ""
                cut = len(prefix)
                window.__dict__["_split"] = (
                    list(enumerate(window.options)),
                    [],
                    part,
                    prefix,
                    [t[cut:] for t in part] if cut else list(part),
                )
            cached.append(window)
        site.__dict__[key] = cached
    return cached


def canonical_text(head: str, text: str) -> str:
    """`  "<field>": "<option>"`: the whole field as the model writes a string option."""
    return head + '"' + text + '"'


def rendered(value) -> str:
    """An option as it stands in the JSON object: quoted for strings, its literal otherwise."""
    return f'"{json_text(value)}"' if isinstance(value, str) else json_text(value)


def field_texts(site: FieldLike) -> list[str]:
    """`  "<field>": <option>` of every option, as the model writes the field (the cost model's
    texts; computed once per site)."""
    cached = site.__dict__.get("_field_texts")
    if cached is None:
        head = field_head(site.name)
        strings, _, texts, _, _ = split_options(site)
        if len(strings) == len(site.options):  # (the JSON texts split_options made)
            cached = [f'{head}"{t}"' for t in texts]
        else:
            cached = [head + rendered(v) for v in site.options]
        site.__dict__["_field_texts"] = cached
    return cached


def literal_texts(site: FieldLike) -> list[str]:
    """`  "<field>": <literal>` of each literal option (SiteTokens cuts these canonically;
    computed once per site, as the prefetch and SiteTokens both read them)."""
    cached = site.__dict__.get("_literal_texts")
    if cached is None:
        base = field_head(site.name, int(getattr(site, "array_depth", 0))).rstrip()
        gap = "" if base.endswith("[") else " "  # `  "flags": [true`, `  "flag": true`
        cached = [f"{base}{gap}{json_text(value)}" for _, value in split_options(site)[1]]
        site.__dict__["_literal_texts"] = cached
    return cached


# The groups of texts a run may need (the engine asks for those its rules and engines read):
# "core" what SiteTokens itself encodes; "canonical" the whole field text of each string option
# (PCD005, with offsets); "cost" each option after the field head (the cost model); "lengths"
# each option's JSON text alone (PCD011, full-sequence); "normal" each string option
# NFC-normalised (PCD010); "letters" the letter probes of letter_slots.
TEXT_GROUPS = ("core", "canonical", "cost", "lengths", "normal", "letters")


def site_texts(
    site: FieldLike,
    groups: Iterable[str],
    tokenizer: LoadedTokenizer | None = None,
    plain: list[bool] | None = None,
) -> tuple[list[str], list[str]]:
    """(texts, texts whose offsets are needed too) that scoring this site reads, by group. The
    whole field texts that encode as their parts' ids are left out (SiteTokens joins those from
    the suffix's and the option's own): `plain` says which, per option (SiteTokens.plain), or
    else the tokenizer (plain_cuts); with neither, every text is in."""
    strings, _, texts, prefix, remainders = split_options(site)
    depth = int(getattr(site, "array_depth", 0))
    head = field_head(site.name, depth)
    suffix = head + '"' + prefix
    out: list[str] = []
    spans: list[str] = []
    if plain is None and tokenizer is not None and "canonical" in groups:
        plain = join_flags(site, tokenizer)[1]
    if "core" in groups:
        out += remainders
        out += [suffix, head.rstrip(), STRING_CLOSE, LITERAL_CLOSE]
        spans += literal_texts(site)
    if "canonical" in groups:
        spans += [canonical_text(head, t) for (i, _), t in zip(strings, texts) if not (plain and plain[i])]
        out.append(suffix)
        spans.append(suffix)
    if "cost" in groups:
        if tokenizer is not None:  # the field texts not joined from their suffix's ids (field_joins)
            suffix0, joined = field_joins(site, tokenizer)
            whole = field_texts(site)
            out += [whole[k] for k, cut in enumerate(joined) if not cut]
            if depth:
                out.append(suffix0)
        else:
            out += field_texts(site)
    if "lengths" in groups:
        out += [json_text(v) for v in site.options]
    if "normal" in groups:  # (not those PCD010 leaves alone: LoadedTokenizer.round_trips)
        out += [
            unicodedata.normalize("NFC", value)
            for _, value in strings
            if value and not (tokenizer is not None and tokenizer.round_trips(value))
        ]
    if "letters" in groups:
        out += letter_probe_texts(site.name, tokenizer=tokenizer)
    return out, spans


def plain_cuts(tokenizer: LoadedTokenizer, suffix: str, texts: list[str]) -> tuple[list[bool], list[bool]]:
    """Per text: (`text + '"'` encodes as the text's ids then the quote's, and also
    `suffix + text + '"'` as the suffix's ids before those): LoadedTokenizer.joins, where the
    split regex always cuts. A plain option cuts canonically by construction."""
    closes = tokenizer.joins_quote(texts)
    opens = tokenizer.joins_after(suffix, texts)
    return closes, [a and b for a, b in zip(closes, opens)]


def closed_remainder_ids(
    tokenizer: LoadedTokenizer, rest: str, closes: bool, ids: tuple[int, ...] | None = None
) -> tuple[int, ...]:
    """ids of `rest + '"'`: the remainder's ids (`ids`, when the caller holds them) then the
    quote's where they join (`closes`, from plain_cuts), else the whole text's (what the
    `gather` plan scores for a string option)."""
    if closes:
        return (tokenizer.ids(rest) if ids is None else ids) + (tokenizer.ids(STRING_CLOSE)[0],)
    return tokenizer.ids(rest + STRING_CLOSE)


def join_flags(site: FieldLike, tokenizer: LoadedTokenizer) -> tuple[list[bool], list[bool]]:
    """plain_cuts of a site's remainders after its suffix, per option (literals: False);
    computed once per site and tokenizer (SiteTokens, the engine's plan texts and the prefetch
    read them). Shared: callers must not change the lists."""
    cached = site.__dict__.setdefault("_join_flags", {})
    flags = cached.get(tokenizer.id)
    if flags is None:
        prefix = split_options(site)[3]
        suffix = field_head(site.name, int(getattr(site, "array_depth", 0))) + '"' + prefix
        flags = cached[tokenizer.id] = _join_flags(site, tokenizer, suffix)
    return flags


def _join_flags(site: FieldLike, tokenizer: LoadedTokenizer, suffix: str) -> tuple[list[bool], list[bool]]:
    """plain_cuts of a site's remainders after `suffix`, per option (literals: False)."""
    strings, _, _, _, remainders = split_options(site)
    closes, plain = plain_cuts(tokenizer, suffix, remainders)
    if len(strings) == len(site.options):
        return closes, plain
    n = len(site.options)
    all_closes, all_plain = [False] * n, [False] * n
    for (index, _), close, cut in zip(strings, closes, plain):
        all_closes[index], all_plain[index] = close, cut
    return all_closes, all_plain


def field_joins(site: FieldLike, tokenizer: LoadedTokenizer) -> tuple[str, list[bool]]:
    """(`  "<field>": "<prefix>`, per option whether its field text `  "<field>": "<option>"`
    (field_texts, the cost model's) encodes as that suffix's ids, then its remainder's, then the
    quote's: plain_cuts). At depth 0 that suffix is the site's own and so are the flags
    (join_flags); an array's items are scored after `[`, but their field texts are written as
    at depth 0, so their flags are worked out against the depth-0 suffix (once per site and
    tokenizer). Literals: False."""
    suffix = field_head(site.name) + '"' + split_options(site)[3]
    if not int(getattr(site, "array_depth", 0)):
        return suffix, join_flags(site, tokenizer)[1]
    cached = site.__dict__.setdefault("_field_joins", {})
    flags = cached.get(tokenizer.id)
    if flags is None:
        flags = cached[tokenizer.id] = _join_flags(site, tokenizer, suffix)[1]
    return suffix, flags


def prefetch(
    sites: Sequence[FieldLike],
    tokenizer: LoadedTokenizer,
    groups: Iterable[str] = ("core",),
    extra: Iterable[str] = (),
) -> None:
    """Encode every distinct text these sites need in one native batch (fills the tokenizer
    memo; SiteTokens, the rules and the cost model then read it without calls of their own).
    `extra`: more texts (an engine profile's, see EngineProfile.plan_texts)."""
    groups = set(groups)
    texts: list[str] = list(extra)
    spans: list[str] = []
    for site in sites:
        more, more_spans = site_texts(site, groups, tokenizer)
        texts += more
        spans += more_spans
    tokenizer.prefill(texts + spans, spans)


def scored_ids(site: FieldLike, tokenizer: LoadedTokenizer) -> tuple[str, list[int]]:
    """(hoisted prefix, each option's scored token id) as SiteTokens scores them, without the
    per-option objects for a site of strings only (PCD003's windows of a large enum)."""
    _, literals, _, prefix, remainders = split_options(site)
    if literals:
        tokens = SiteTokens(site, tokenizer)
        return tokens.prefix, [o.scored_id for o in tokens.options]
    close = tokenizer.ids(STRING_CLOSE)[0]
    return prefix, [ids[0] if ids else close for ids in tokenizer.ids_many(remainders)]


class ScoredOption(NamedTuple):  # one per option (a 100,000-option enum holds 100,000): a
    # tuple is built in a third of a frozen dataclass's time
    index: int  # type: ignore[assignment]  # (shadows tuple.index, which nothing calls)
    value: object
    text: str  # the option as typed in JSON
    remainder: str  # the part scored after the suffix
    ids: tuple[int, ...]  # remainder tokens; () for an empty remainder
    scored_id: int
    is_string: bool  # a string option (else a literal: number, boolean, null)


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


F = TypeVar("F", bound=FieldLike)


class SiteTokens(Generic[F]):
    """Tokenization of one site under one tokenizer, shared by every rule (and the decoder,
    whose fields carry only a name and options)."""

    def __init__(self, site: F, tokenizer: LoadedTokenizer):
        self.site = site
        self.tokenizer = tokenizer
        self.memo: dict = {}  # derived data higher layers compute once per tokenization
        self.close_id = tokenizer.ids(STRING_CLOSE)[0]
        strings, literals, texts, self.prefix, remainders = split_options(site)
        # items of an array are typed after `"<field>": [` (Site.array_depth; 0 for other fields)
        self.array_depth = int(getattr(site, "array_depth", 0))
        self.suffix = field_head(site.name, self.array_depth) + '"' + self.prefix
        close, new = self.close_id, tuple.__new__  # (a ScoredOption without its Python __new__)
        strung = [
            new(ScoredOption, (index, value, text, rest, ids, ids[0] if ids else close, True))
            for (index, value), text, rest, ids in zip(
                strings, texts, remainders, map(tuple, tokenizer.ids_many(remainders))
            )
        ]
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
    def _join_flags(self) -> tuple[list[bool], list[bool]]:
        return join_flags(self.site, self.tokenizer)

    @property
    def closes(self) -> list[bool]:
        return self._join_flags[0]

    @property
    def plain(self) -> list[bool]:
        return self._join_flags[1]

    def _literals(self, literals) -> tuple[str, dict[int, ScoredOption]]:
        base = field_head(self.site.name, self.array_depth).rstrip()  # `  "field":`
        gap = "" if base.endswith("[") else " "  # `  "flags": [true`, `  "flag": true`
        fulls = literal_texts(self.site)
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
        strings = [o for o in self.options if o.is_string and not self.plain[o.index]]
        texts = [self._canonical_text(o) for o in strings]
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
        """Tokens of each option's field text `  "<field>": <option>` (field_texts; the cost
        model's), joined from the depth-0 suffix's and the option's where they join (field_joins;
        at depth 0 the field text is the canonical one)."""
        texts = field_texts(self.site)
        ids = self.tokenizer.ids
        suffix, joined = field_joins(self.site, self.tokenizer)
        n = len(ids(suffix)) + 1
        return [n + len(o.ids) if cut else len(ids(t)) for o, t, cut in zip(self.options, texts, joined)]

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
        return self.memo[key]


_alone_cache: dict[tuple[int, str], dict[str, str]] = {}


def _letter_failures_alone(tokenizer: LoadedTokenizer, alphabet: str = SLOT_LETTERS) -> dict[str, str]:
    key = (id(tokenizer), alphabet)
    if key not in _alone_cache:
        failures: dict[str, str] = {}
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
        _alone_cache[key] = failures
    return _alone_cache[key]


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
        return tokenizer.derived[key]
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
