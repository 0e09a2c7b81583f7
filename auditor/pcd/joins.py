"""Where a tokenizer cuts a field text at its parts: the probes that let the scoring model join
a text's ids from its parts' ids instead of encoding it (LoadedTokenizer.joins)."""

from __future__ import annotations

from auditor.pcd.texts import STRING_CLOSE, FieldLike, OptionSplit
from auditor.tokenizers.loader import LoadedTokenizer

JoinFlags = tuple[list[bool], list[bool]]  # per option: (closes, plain)


def plain_cuts(tokenizer: LoadedTokenizer, suffix: str, texts: list[str]) -> JoinFlags:
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


def option_join_flags(
    site: FieldLike, split: OptionSplit, tokenizer: LoadedTokenizer, suffix: str
) -> JoinFlags:
    """plain_cuts of a site's remainders after `suffix`, per option (literals: False)."""
    strings, _, _, _, remainders = split
    closes, plain = plain_cuts(tokenizer, suffix, remainders)
    if len(strings) == len(site.options):
        return closes, plain
    n = len(site.options)
    all_closes, all_plain = [False] * n, [False] * n
    for (index, _), close, cut in zip(strings, closes, plain):
        all_closes[index], all_plain[index] = close, cut
    return all_closes, all_plain
