"""Source positions of JSON values, found only for the pointers someone asks about.

A linter needs positions for a few thousand nodes (sites, their options, schema problems), not
for every node of a 2 MB schema. So nothing is scanned up front: asking for `/a/b/3` scans the
root object's members (key and value offsets), then `a`'s, then `b`'s elements, stepping over
every sibling value with the C scanner of the standard `json` module, and keeps each scanned
container's table for the next question. Spans are what `json-source-map` reported (tested
against it on the whole corpus): 1-based lines counting `\\n` only, 1-based columns counting code
points, end exclusive; a key's span covers its quotes. Unlike `json-source-map`, a key written
with escapes (`"a\\u0062"`) is found under the key it decodes to.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")
# Steps over one value: numbers stay text (no big-int conversion), objects are never kept.
_DECODER = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str,
                            object_pairs_hook=lambda pairs: None)
_scan_value = json.scanner.make_scanner(_DECODER)  # type: ignore[attr-defined]
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]

# Offsets into the text: (key start, key end, value start, value end); keys -1 in arrays.
Entry = tuple[int, int, int, int]


class JsonPositions:
    """Offsets of JSON values and keys in `text` (valid JSON, already parsed by `json.loads`)."""

    def __init__(self, text: str):
        self.text = text
        start = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
        self._root: Entry = (-1, -1, start, len(text.rstrip(" \t\n\r")))
        self._objects: dict[int, dict[str, Entry]] = {}  # object's offset → its members
        self._arrays: dict[int, list[Entry]] = {}  # array's offset → its elements
        self._found: dict[str, Entry] = {"": self._root}  # pointer → entry of containers reached
        self._newlines: list[int] | None = None

    def locate(self, pointer: str) -> Entry | None:
        """The offsets of the node at an RFC 6901 pointer, None when there is no such node."""
        known = self._found.get(pointer)
        if known is not None:
            return known
        # Start from the nearest container already reached (a site's options share their parent).
        base, tokens = pointer, []
        while base not in self._found:
            if "/" not in base:  # not a pointer ("a/b"): no node
                return None
            base, token = base.rsplit("/", 1)
            tokens.append(token)
        entry: Entry | None = self._found[base]
        for token in reversed(tokens):
            entry = self._child(entry, token)  # type: ignore[arg-type]
            if entry is None:
                return None
            base = f"{base}/{token}"
            if self.text[entry[2]] in "{[":
                self._found[base] = entry  # containers only: leaves are asked about once
        return entry

    def locate_many(self, pointers: list[str]) -> list[Entry | None]:
        """locate() of each pointer, each parent found once (100,000 options of one enum)."""
        parents: dict[str, Entry | None] = {}
        out: list[Entry | None] = []
        for pointer in pointers:
            parent, slash, token = pointer.rpartition("/")
            if not slash:
                out.append(self.locate(pointer))
                continue
            if parent not in parents:
                parents[parent] = self.locate(parent)
            entry = parents[parent]
            out.append(None if entry is None else self._child(entry, token))
        return out

    def _child(self, entry: Entry, token: str) -> Entry | None:
        start = entry[2]
        opening = self.text[start]
        if opening == "{":
            return self._object(start).get(token.replace("~1", "/").replace("~0", "~"))
        if opening == "[" and _INDEX.match(token):
            elements, index = self._array(start), int(token)
            return elements[index] if index < len(elements) else None
        return None

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column of an offset (only `\\n` ends a line, as in json-source-map)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        line = bisect_left(self._newlines, offset)
        return line + 1, offset - (self._newlines[line - 1] + 1 if line else 0) + 1

    # -- scanning

    def _object(self, start: int) -> dict[str, Entry]:
        found = self._objects.get(start)
        if found is None:
            found = self._objects[start] = self._scan_object(start)
        return found

    def _array(self, start: int) -> list[Entry]:
        found = self._arrays.get(start)
        if found is None:
            found = self._arrays[start] = self._scan_array(start)
        return found

    def _skip(self, start: int) -> int:
        """The offset just past the value starting at `start`."""
        if self.text[start] == '"':
            return _scan_string(self.text, start + 1)[1]
        return _scan_value(self.text, start)[1]

    def _scan_object(self, start: int) -> dict[str, Entry]:
        text, space = self.text, _WHITESPACE.match
        members: dict[str, Entry] = {}
        pos = space(text, start + 1).end()  # type: ignore[union-attr]
        if text[pos] == "}":
            return members
        while True:
            key, key_end = _scan_string(text, pos + 1)
            value_start = space(text, space(text, key_end).end() + 1).end()  # type: ignore[union-attr]
            value_end = self._skip(value_start)
            members[key] = (pos, key_end, value_start, value_end)  # a repeated key: the last wins
            pos = space(text, value_end).end()  # type: ignore[union-attr]
            if text[pos] == "}":
                return members
            pos = space(text, pos + 1).end()  # type: ignore[union-attr]

    def _scan_array(self, start: int) -> list[Entry]:
        text, space = self.text, _WHITESPACE.match
        elements: list[Entry] = []
        pos = space(text, start + 1).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return elements
        while True:
            value_end = self._skip(pos)
            elements.append((-1, -1, pos, value_end))
            pos = space(text, value_end).end()  # type: ignore[union-attr]
            if text[pos] == "]":
                return elements
            pos = space(text, pos + 1).end()  # type: ignore[union-attr]
