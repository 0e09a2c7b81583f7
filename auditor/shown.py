"""How a value is shown in a message or a report: one helper for every place that quotes a
user's value (an option, a label, a path, a server's text).

`shown` writes a value as JSON (a string quoted, or bare with `quoted=False`) and cuts it with
`shorten`, which says how long the whole was: a 5 MB label is never echoed.
"""

from __future__ import annotations

import json

SHOWN_CHARS = 120  # a value longer than this is cut in messages (a 5 MB label is not echoed)


def shorten(text: str, limit: int = SHOWN_CHARS, *, total: int | None = None) -> str:
    """`text` as shown in a one-line message: at most `limit` characters, the cut said (`total`:
    the length of the whole when `text` is already a prefix of it)."""
    size = len(text) if total is None else max(total, len(text))
    if size <= limit:
        return text
    keep = max(8, limit - 30)
    return f"{text[:keep]}… ({size:,} characters)"


def shown(value: object, *, quoted: bool = True, limit: int | None = None) -> str:
    """`value` as JSON (`quoted=False`: a string as it is), cut at `limit` characters when one is
    given; a value JSON cannot write is named by its type."""
    if isinstance(value, str) and not quoted:
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            text = type(value).__name__
    return text if limit is None else shorten(text, limit)
