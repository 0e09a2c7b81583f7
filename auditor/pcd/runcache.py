"""The run cache: every value the scoring model derives from a site and keeps for the run.

A lint run creates one RunCache (auditor.linter.engine), hands it to every SiteTokens it
builds and to every rule's context, and drops it when the run ends; a pool worker builds its
own (auditor.linter.pool). Sites stay plain data: nothing is written onto them.

What it keeps, per site (SiteEntry): the option split (OptionSplit), PCD003's windows per
option limit (each window a site of its own, its split made from the site's JSON texts) and
the literal options' texts; per site and tokenizer: the join
flags of its remainders after its suffix (and after the depth-0 suffix, for an array's items).
Sites are keyed by identity; an entry holds its site, so no key is reused while the run lives.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial
from operator import itemgetter
from typing import Any

from auditor.lazy import Deferred
from auditor.pcd.joins import JoinFlags, option_join_flags
from auditor.pcd.letters import letter_probe_texts
from auditor.pcd.texts import (
    LITERAL_CLOSE,
    STRING_CLOSE,
    FieldLike,
    OptionSplit,
    array_depth,
    canonical_texts,
    field_head,
    field_text,
    field_texts,
    json_text,
    literal_texts,
    option_windows,
    split_options,
    split_texts,
    string_suffix,
)
from auditor.tokenizers.loader import LoadedTokenizer

# The groups of texts a run may need (the engine asks for those its rules and engines read):
# "core" what SiteTokens itself encodes; "canonical" the whole field text of each string option
# (PCD005, with offsets); "cost" each option after the field head (the cost model); "lengths"
# each option's JSON text alone (PCD011, full-sequence); "normal" each string option
# NFC-normalised (PCD010); "letters" the letter probes of letter_slots.
TEXT_GROUPS = ("core", "canonical", "cost", "lengths", "normal", "letters")


class SiteEntry:
    """What the run keeps about one site (each made on first use)."""

    __slots__ = ("field_joins", "join_flags", "literal_texts", "site", "split", "windows")

    def __init__(self, site: FieldLike) -> None:
        self.site = site  # (held: the entry is keyed by the site's identity)
        self.split: OptionSplit | None = None
        self.windows: dict[int, list[Any]] = {}  # option limit → the site's windows
        self.literal_texts: list[str] | None = None
        self.join_flags: dict[str, JoinFlags] = {}  # tokenizer id → flags after its suffix
        self.field_joins: dict[str, list[bool]] = {}  # tokenizer id → plain after the depth-0 suffix


def _span_slice(site: Any, start: int, end: int) -> list:
    """The spans of options start..end of a site (a window's, made where first read)."""
    return site.option_spans[start:end]


class RunCache:
    """Per-run caches of the scoring model, shared by SiteTokens, the engine and the rules.

    Shared values: callers must not change the lists it hands out."""

    def __init__(self) -> None:
        self._sites: dict[int, SiteEntry] = {}

    def entry(self, site: FieldLike) -> SiteEntry:
        """The site's entry (made empty on first use)."""
        found = self._sites.get(id(site))
        if found is None:
            found = self._sites[id(site)] = SiteEntry(site)
        return found

    def split(self, site: FieldLike) -> OptionSplit:
        """split_options of the site, made once."""
        entry = self.entry(site)
        if entry.split is None:
            entry.split = split_options(site)
        return entry.split

    def windows(self, site: Any, limit: int) -> list[Any]:
        """The site cut into option_windows, each a site of its own (its own common prefix); the
        same window objects for the same limit (the engine's prefetch and PCD003 share them)."""
        entry = self.entry(site)
        found = entry.windows.get(limit)
        if found is None:
            _, literals, texts, _, _ = self.split(site)
            found = []
            for a, b in option_windows(len(site.options), limit):
                window = replace(
                    site,
                    options=site.options[a:b],
                    option_pointers=site.option_pointers[a:b],
                    option_spans=[],
                )
                if isinstance(window, Deferred):  # its spans, only where read (the site's spans of
                    # a 100,000-option enum are 100,000 Spans made from the document for nothing)
                    window.defer("option_spans", partial(_span_slice, site, a, b))
                else:
                    window.option_spans = site.option_spans[a:b]
                if not literals:  # its split from the site's JSON texts (its own prefix hoisted)
                    self.entry(window).split = split_texts(window.options, texts[a:b])
                found.append(window)
            entry.windows[limit] = found
        return found

    def literal_texts(self, site: FieldLike) -> list[str]:
        """texts.literal_texts of the site, made once (the prefetch and SiteTokens read it)."""
        entry = self.entry(site)
        if entry.literal_texts is None:
            entry.literal_texts = literal_texts(site, self.split(site))
        return entry.literal_texts

    def join_flags(self, site: FieldLike, tokenizer: LoadedTokenizer) -> JoinFlags:
        """joins.plain_cuts of a site's remainders after its suffix, per option (literals:
        False); made once per site and tokenizer (SiteTokens, the engines' plan texts and the
        prefetch read them)."""
        entry = self.entry(site)
        flags = entry.join_flags.get(tokenizer.id)
        if flags is None:
            split = self.split(site)
            flags = entry.join_flags[tokenizer.id] = option_join_flags(
                site, split, tokenizer, string_suffix(site, split)
            )
        return flags

    def field_joins(self, site: FieldLike, tokenizer: LoadedTokenizer) -> tuple[str, list[bool]]:
        """(`  "<field>": "<prefix>`, per option whether its field text `  "<field>": "<option>"`
        (field_texts, the cost model's) encodes as that suffix's ids, then its remainder's, then
        the quote's: plain_cuts). At depth 0 that suffix is the site's own and so are the flags
        (join_flags); an array's items are scored after `[`, but their field texts are written
        as at depth 0, so their flags are worked out against the depth-0 suffix. Literals: False."""
        split = self.split(site)
        suffix = string_suffix(site, split, depth=0)
        if not array_depth(site):
            return suffix, self.join_flags(site, tokenizer)[1]
        entry = self.entry(site)
        flags = entry.field_joins.get(tokenizer.id)
        if flags is None:
            flags = entry.field_joins[tokenizer.id] = option_join_flags(site, split, tokenizer, suffix)[1]
        return suffix, flags

    def texts(
        self,
        site: FieldLike,
        groups: Iterable[str],
        tokenizer: LoadedTokenizer | None = None,
        plain: list[bool] | None = None,
    ) -> tuple[list[str], list[str]]:
        """(texts, texts whose offsets are needed too) that scoring this site reads, by group
        (TEXT_GROUPS). The whole field texts that encode as their parts' ids are left out
        (SiteTokens joins those from the suffix's and the option's own): `plain` says which,
        per option (SiteTokens.plain), or else the tokenizer (join_flags); with neither, every
        text is in."""
        strings, _, texts, _, remainders = split = self.split(site)
        depth = array_depth(site)
        head = field_head(site.name, depth)
        suffix = string_suffix(site, split)
        out: list[str] = []
        spans: list[str] = []
        if plain is None and tokenizer is not None and "canonical" in groups:
            plain = self.join_flags(site, tokenizer)[1]
        if "core" in groups:
            out += remainders
            out += [suffix, head.rstrip(), STRING_CLOSE, LITERAL_CLOSE]
            spans += self.literal_texts(site)
        if "canonical" in groups:
            if not plain:
                kept = texts
            elif all(plain):  # (most fields: every option joins, told in one pass)
                kept = []
            else:
                kept = [t for (i, _), t in zip(strings, texts) if not plain[i]]
            spans += canonical_texts(head, kept)
            out.append(suffix)
            spans.append(suffix)
        if "cost" in groups:
            if tokenizer is not None:  # the field texts not joined from their suffix's ids (field_joins)
                suffix0, joined = self.field_joins(site, tokenizer)
                if not all(joined):  # (most fields: every option joins, told in one pass)
                    out += [field_text(site, k) for k, cut in enumerate(joined) if not cut]
                if depth:
                    out.append(suffix0)
            else:
                out += field_texts(site, split)
        if "lengths" in groups:
            out += [json_text(v) for v in site.options]
        if "normal" in groups:  # (not those PCD010 leaves alone: LoadedTokenizer.round_trips)
            values = list(map(itemgetter(1), strings))
            trips = tokenizer.round_trips_many(values) if tokenizer is not None else [False] * len(values)
            if not all(trips):  # (most fields: every option round-trips, told in one pass)
                out += [
                    unicodedata.normalize("NFC", value)
                    for value, trip in zip(values, trips)
                    if value and not trip
                ]
        if "letters" in groups:
            out += letter_probe_texts(site.name, tokenizer=tokenizer)
        return out, spans

    def prefetch(
        self,
        sites: Sequence[FieldLike],
        tokenizer: LoadedTokenizer,
        groups: Iterable[str] = ("core",),
        extra: Iterable[str] = (),
    ) -> None:
        """Encode every distinct text these sites need in one native batch (fills the tokenizer
        memo; SiteTokens, the rules and the cost model then read it without calls of their
        own). `extra`: more texts (an engine profile's, see EngineProfile.plan_texts)."""
        groups = set(groups)
        texts: list[str] = list(extra)
        spans: list[str] = []
        for site in sites:
            more, more_spans = self.texts(site, groups, tokenizer)
            texts += more
            spans += more_spans
        tokenizer.prefill(texts + spans, spans)


def site_texts(
    site: FieldLike,
    groups: Iterable[str],
    tokenizer: LoadedTokenizer | None = None,
    plain: list[bool] | None = None,
    cache: RunCache | None = None,
) -> tuple[list[str], list[str]]:
    """RunCache.texts, under `cache` (default: a cache of its own)."""
    return (cache or RunCache()).texts(site, groups, tokenizer, plain)


def prefetch(
    sites: Sequence[FieldLike],
    tokenizer: LoadedTokenizer,
    groups: Iterable[str] = ("core",),
    extra: Iterable[str] = (),
    cache: RunCache | None = None,
) -> None:
    """RunCache.prefetch, under `cache` (default: a cache of its own)."""
    (cache or RunCache()).prefetch(sites, tokenizer, groups, extra)


def window_sites(site: Any, limit: int, cache: RunCache | None = None) -> list[Any]:
    """RunCache.windows, under `cache` (default: a cache of its own)."""
    return (cache or RunCache()).windows(site, limit)


def join_flags(site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None) -> JoinFlags:
    """RunCache.join_flags, under `cache` (default: a cache of its own)."""
    return (cache or RunCache()).join_flags(site, tokenizer)


def field_joins(
    site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
) -> tuple[str, list[bool]]:
    """RunCache.field_joins, under `cache` (default: a cache of its own)."""
    return (cache or RunCache()).field_joins(site, tokenizer)
