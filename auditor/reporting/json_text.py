"""The JSON reports' text, fast: the bytes of `json.dumps(strict_json(v), indent=2, ...)`.

`json.dumps` with `indent` runs the pure-Python encoder (on CPython 3.11–3.13), about six
times slower than the C encoder on the corpus's 18 MB JSON document. Here the C encoder writes
the compact form with the same separators (`,` and `: `), and the indentation is inserted
exactly where the pure-Python encoder puts it: after every `[`/`{` of a non-empty container,
after every `,` between items, and before every `]`/`}` of a non-empty container, each time
a newline and two spaces per depth. Only those characters *outside* strings count: the C
encoder always escapes `"` and `\\` inside a string and never writes a raw control character,
so once the escape pairs `\\\\` and `\\"` are blanked every `"` left opens or closes a string
and the bracket depth is a running sum. Both passes are numpy array operations, imported only
for documents large enough to pay for it; small ones go through `json.dumps(indent=2)` itself.

Non-finite floats (`NaN`, `1e999` from a schema) make the C encoder raise under
`allow_nan=False`; then the document is first rewritten by `strict_json`, as before.

Faster still, `orjson` writes the indented form itself (about ten times the C encoder's speed),
and its bytes are the same as `json.dumps`'s except in cases that are checked for and then left
to the path above: a non-finite float (orjson writes `null`), a float under 1e-4 (orjson writes
`0.00001` or `1e-9` where `repr` writes `1e-05` and `1e-09`), and anything orjson refuses (an
integer beyond 64 bits, a lone surrogate, a non-string key, nesting deeper than 255).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from auditor.jsonfloats import writer_options, writes_apart
from auditor.reporting.escape import strict_json
from auditor.reporting.outputs import encode_text

# Below this many characters of compact JSON the numpy import costs more than it saves.
REINDENT_MIN_CHARS = 1 << 18
_OPEN, _CLOSE, _COMMA = 1, -1, 2  # byte kinds outside strings

_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ": "))


def dumps_strict(value: Any, checked: frozenset[int] | set[int] = frozenset(), newline: bool = False) -> str:
    """`json.dumps(strict_json(value), indent=2, ensure_ascii=False, allow_nan=False)`, with a
    final newline when `newline`; `checked`: ids of containers in `value` known to hold no
    float orjson writes apart (jsonfloats.writes_apart; a lint run checks each finding's data
    where it is made)."""
    text = _orjson_text(value, checked, newline)
    if text is not None:
        return text
    return _fallback_text(value) + ("\n" if newline else "")


def dumps_strict_bytes(value: Any, checked: frozenset[int] | set[int] = frozenset()) -> bytes:
    """The bytes a report writer writes for `dumps_strict(value, checked, newline=True)`: its
    UTF-8, a lone surrogate as a backslash escape (auditor.reporting.outputs.encode_text).
    Where orjson writes the document these are its own bytes: no str is made of an 18 MB
    report (a str of it decoded, then encoded again to be written)."""
    raw = orjson_bytes(value, checked, newline=True)
    if raw is not None:
        return raw
    return encode_text(_fallback_text(value) + "\n")


def _fallback_text(value) -> str:
    """dumps_strict without orjson: the C encoder, re-indented (or json.dumps for small ones)."""
    try:
        compact = _COMPACT.encode(value)
    except ValueError:  # a non-finite float: write it as a string, exactly as before
        value = strict_json(value)
        compact = _COMPACT.encode(value)
    if len(compact) < REINDENT_MIN_CHARS:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    return reindent(compact)


def _orjson_text(
    value, checked: frozenset[int] | set[int] = frozenset(), newline: bool = False
) -> str | None:
    """The document as `orjson` writes it, or None where that could differ from `json.dumps`."""
    raw = orjson_bytes(value, checked, newline)
    return None if raw is None else raw.decode()


def orjson_bytes(
    value: Any, checked: frozenset[int] | set[int] = frozenset(), newline: bool = False
) -> bytes | None:
    """_orjson_text's UTF-8 bytes (orjson writes no lone surrogate: it refuses them), or None."""
    try:
        import orjson
    except ImportError:  # a core dependency; an environment without it takes the path above
        return None
    if writes_apart(value, checked):
        return None
    options = writer_options()
    try:
        # what json.dumps refuses (dataclasses, datetimes) orjson must refuse too
        return orjson.dumps(value, option=options | orjson.OPT_APPEND_NEWLINE if newline else options)
    except TypeError:  # orjson.JSONEncodeError: big integers, surrogates, non-string keys, depth
        return None


def reindent(compact: str) -> str:
    """The indent=2 form of `compact`, which the C encoder wrote with separators `,` and `: `."""
    import numpy as np

    # Lone surrogates (undecodable file names) pass through as they would in the str.
    raw = compact.encode("utf-8", "surrogatepass")
    blanked = np.frombuffer(raw.replace(b"\\\\", b"\0\0").replace(b'\\"', b"\0\0"), dtype=np.uint8)
    quotes = np.flatnonzero(blanked == ord('"'))
    kinds = _kinds()[blanked]
    where = np.flatnonzero(kinds)
    where = where[(np.searchsorted(quotes, where) & 1) == 0]  # an even number of quotes before
    kinds = kinds[where]
    depth = np.cumsum(np.where(kinds == _COMMA, 0, kinds), dtype=np.int32)
    # `[]` and `{}` stay as they are, as in the pure-Python encoder
    empty = (kinds[:-1] == _OPEN) & (kinds[1:] == _CLOSE) & (where[1:] == where[:-1] + 1)
    keep = np.ones(len(where), dtype=bool)
    keep[:-1] &= ~empty
    keep[1:] &= ~empty
    where, kinds, depth = where[keep], kinds[keep], depth[keep]
    # a line break goes after an open or a comma, before a close: at byte `gaps` of `raw`
    gaps = where + (kinds != _CLOSE)
    widths = 1 + 2 * depth.astype(np.int64)
    lengths = np.empty(2 * len(gaps) + 1, dtype=np.int64)  # raw run, break, raw run, ...
    lengths[0::2] = np.diff(gaps, prepend=0, append=len(raw))
    lengths[1::2] = widths
    runs = np.zeros(len(lengths), dtype=bool)
    runs[0::2] = True
    from_raw = np.repeat(runs, lengths)
    out = np.full(len(from_raw), ord(" "), dtype=np.uint8)
    out[from_raw] = np.frombuffer(raw, dtype=np.uint8)
    out[gaps + np.cumsum(widths) - widths] = ord("\n")
    return out.tobytes().decode("utf-8", "surrogatepass")


@functools.cache
def _kinds():
    import numpy as np

    table = np.zeros(256, dtype=np.int8)
    table[[ord("["), ord("{")]] = _OPEN
    table[[ord("]"), ord("}")]] = _CLOSE
    table[ord(",")] = _COMMA
    return table
