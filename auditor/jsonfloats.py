"""Which floats `orjson` writes otherwise than `json.dumps`: the check that decides whether the
JSON writers (auditor.reporting.json_text) may use orjson.

A NaN or an infinity (orjson writes `null`), and a float under 1e-4 but not zero (orjson
writes `0.00001` or `1e-9` where `repr` writes `1e-05` and `1e-09`) are the only floats the two
write apart, in 243,000 random doubles and tests/test_json_text.py's hypothesis runs. It lives
below the layers so that the lint engine can check a finding's data where the finding is made
(a pool worker, in parallel), and the report then passes over what was checked; the writers'
orjson options live here for the same reason (`writer_options`).
"""

from __future__ import annotations

from typing import Any


def writer_options() -> int:
    """orjson's options for the JSON writers (indented two spaces; what json.dumps refuses,
    dataclasses and datetimes, refused too): auditor.reporting.json_text, and a finding's data
    packed where it is made (Finding.pack_data), which the JSON writer puts in as it is."""
    import orjson

    return orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def writes_apart(value: Any, checked: frozenset[int] | set[int] = frozenset()) -> bool:
    """Whether `value` (dicts, lists and tuples) holds a float orjson writes otherwise than
    json.dumps; `checked`: the ids of containers in it already known to hold none (passed
    over)."""
    stack: list = [[value]]
    while stack:
        node = stack.pop()
        for item in node.values() if isinstance(node, dict) else node:
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                continue
            if isinstance(item, (dict, list, tuple)):
                if id(item) not in checked:
                    stack.append(item)
            elif isinstance(item, float) and (item - item != 0.0 or (item != 0.0 and -1e-4 < item < 1e-4)):
                return True  # (inf - inf and nan - x are nan)
    return False
