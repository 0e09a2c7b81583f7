"""The texts the scoring model reads: an option as typed in JSON, a field's head and suffix, the
options' hoisted prefix and remainders. Pure string work, no tokenizer.

The seed convention: the prefill ends after `{\\n` (PREFILL_END) and each field is continued
by its own suffix. For string options the suffix is `  "<field>": "<prefix>` where prefix is
the options' common prefix (os.path.commonprefix); non-string options are written as their
JSON literal after `  "<field>":`.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple, Protocol

PREFILL_END = "{\n"  # the shared prompt ends here; every field's suffix follows it
STRING_CLOSE = '"'  # what ends a string option
LITERAL_CLOSE = ","  # what ends a literal option when the model writes the next field


class FieldLike(Protocol):
    """What the scoring model needs of a field: a key and its options in schema order."""

    name: str
    options: list


_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')


def json_text(value: object) -> str:
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


def array_depth(site: FieldLike) -> int:
    """How many `[` open before a site's value (Site.array_depth; 0 for a field without one)."""
    return int(getattr(site, "array_depth", 0))


def canonical_text(head: str, text: str) -> str:
    """`  "<field>": "<option>"`: the whole field as the model writes a string option."""
    return head + '"' + text + '"'


def canonical_texts(head: str, texts: Iterable[str]) -> list[str]:
    """canonical_text of each text, in one pass."""
    opening = head + '"'
    return [f'{opening}{text}"' for text in texts]


def rendered(value: object) -> str:
    """An option as it stands in the JSON object: quoted for strings, its literal otherwise."""
    return f'"{json_text(value)}"' if isinstance(value, str) else json_text(value)


class OptionSplit(NamedTuple):
    """A site's options as the scoring model splits them."""

    strings: list[tuple[int, str]]  # (index, option) of each string option
    literals: list[tuple[int, object]]  # (index, option) of each other option
    texts: list[str]  # each string option's JSON text, in order
    prefix: str  # the string options' common prefix (hoisted into the suffix)
    remainders: list[str]  # each string option's text after the prefix


def split_options(site: FieldLike) -> OptionSplit:
    """(string options, literal options, typed texts, hoisted prefix, remainders) of a site."""
    options = site.options
    if set(map(type, options)) <= {str}:  # (most fields: strings only, told in one pass)
        strings, literals, texts = list(enumerate(options)), [], list(options)
    else:
        strings = [(i, o) for i, o in enumerate(options) if isinstance(o, str)]
        literals = [(i, o) for i, o in enumerate(options) if not isinstance(o, str)]
        texts = [o for _, o in strings]
    needs_escape = _NEEDS_ESCAPE.search  # (json_text, without a call per plain option)
    if needs_escape("".join(texts)):  # (one search of them all: it matches single characters)
        texts = [json_text(o) if needs_escape(o) else o for o in texts]
    return OptionSplit(strings, literals, texts, *_hoisted(texts))


def split_texts(options: list, texts: list[str]) -> OptionSplit:
    """The split of string options whose JSON texts are known (a window of a site's own:
    its own prefix hoisted)."""
    return OptionSplit(list(enumerate(options)), [], texts, *_hoisted(texts))


def _hoisted(texts: list[str]) -> tuple[str, list[str]]:
    """(the texts' common prefix, each text after it): the prefix hoisted into the suffix."""
    prefix = os.path.commonprefix(texts) if len(texts) >= 2 else ""
    cut = len(prefix)
    return prefix, [t[cut:] for t in texts] if cut else list(texts)


def option_windows(n: int, limit: int) -> list[tuple[int, int]]:
    """(start, end) of balanced windows of at most `limit` options over `n` (PCD003's split)."""
    count = math.ceil(n / limit)
    size = math.ceil(n / count)
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def string_suffix(site: FieldLike, split: OptionSplit, depth: int | None = None) -> str:
    """`  "<field>": "<prefix>`: what a site's string options are scored after (`depth`: the
    array depth to write it at, default the site's own)."""
    return field_head(site.name, array_depth(site) if depth is None else depth) + '"' + split.prefix


def field_texts(site: FieldLike, split: OptionSplit | None = None) -> list[str]:
    """`  "<field>": <option>` of every option, as the model writes the field (the cost model's
    texts); `split`: the site's, when the caller holds it."""
    head = field_head(site.name)
    strings, _, texts, _, _ = split or split_options(site)
    if len(strings) == len(site.options):  # (the JSON texts of the split)
        return [f'{head}"{t}"' for t in texts]
    return [head + rendered(v) for v in site.options]


def field_text(site: FieldLike, index: int) -> str:
    """field_texts' text of option `index` alone (`  "<field>": <option>`)."""
    return field_head(site.name) + rendered(site.options[index])


def literal_texts(site: FieldLike, split: OptionSplit | None = None) -> list[str]:
    """`  "<field>": <literal>` of each literal option (SiteTokens cuts these canonically)."""
    base = field_head(site.name, array_depth(site)).rstrip()
    gap = "" if base.endswith("[") else " "  # `  "flags": [true`, `  "flag": true`
    return [f"{base}{gap}{json_text(value)}" for _, value in (split or split_options(site)).literals]
