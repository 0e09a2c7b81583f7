"""Source positions of JSON values, found only for the pointers someone asks about.

A linter needs positions for a few thousand nodes (sites, their options, schema problems), not
for every node of a 2 MB schema. So nothing is scanned up front: asking for `/a/b/3` scans the
root object's members (key and value offsets), then `a`'s, then `b`'s elements, stepping over
every sibling value with the C scanner of the standard `json` module, and keeps each scanned
container's table for the next question. The crawler asks once it knows every pointer it will
ask about (`prefetch`): then each container on the way is scanned as its parent's scan reaches
it, instead of being stepped over by its parent and scanned again (the corpus: 1.8 MB stepped
over, not 10 MB). Spans are what `json-source-map` reported (tested against it on the whole
corpus): 1-based lines counting `\\n` only, 1-based columns counting code points, end exclusive;
a key's span covers its quotes. Unlike `json-source-map`, a key written
with escapes (`"a\\u0062"`) is found under the key it decodes to.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import add, sub

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")  # between a key and its value
# After a value: `,` and the whitespace before the next one (lastindex 1), or the closing bracket.
_NEXT = re.compile(r"[ \t\n\r]*(?:(,)[ \t\n\r]*|[}\]])")
# An array element that is a string, then its separator: group 2 is the `,` (else a `]`). Only
# ever applied to valid JSON (json.loads accepted it: no raw control characters in a string).
_STRING_ELEMENT = re.compile(r'("[^"\\]*(?:\\[\s\S][^"\\]*)*")[ \t\n\r]*(?:(,)[ \t\n\r]*|\])')
_NEWLINE = re.compile("\n")
ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")  # an array index as RFC 6901 writes it (fullmatch)
# Steps over one value: numbers stay text (no big-int conversion), objects are never kept.
_DECODER = json.JSONDecoder(
    parse_int=str, parse_float=str, parse_constant=str, object_pairs_hook=lambda pairs: None
)
_scan_value = json.scanner.make_scanner(_DECODER)  # type: ignore[attr-defined]
_scan_string = json.decoder.scanstring  # type: ignore[attr-defined]

# Offsets into the text: (key start, key end, value start, value end); keys -1 in arrays.
Entry = tuple[int, int, int, int]
# An array's elements: where each starts, where each ends (two lists: an enum's options are
# read off the scan's matches in C, and handed on in bulk).
Elements = tuple[list[int], list[int]]


class JsonPositions:
    """Offsets of JSON values and keys in `text` (valid JSON, already parsed by `json.loads`)."""

    def __init__(self, text: str):
        self.text = text
        start = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
        self._root: Entry = (-1, -1, start, len(text.rstrip(" \t\n\r")))
        self._objects: dict[int, dict[str, Entry]] = {}  # object's offset → its members
        self._arrays: dict[int, Elements] = {}  # array's offset → its elements
        self._found: dict[str, Entry] = {"": self._root}  # pointer → entry of containers reached
        # [-1, offset of each "\n"]: bisect_left(marks, offset) is an offset's 1-based line
        self._marks: list[int] | None = None
        self._before: list[int] = []

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
        """locate() of each pointer, each parent found once."""
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

    def leading_elements(self, pointers: list[str]) -> Elements | None:
        """(starts, ends) of the values at `pointers` when they are exactly `<array>/0` …
        `<array>/n-1` of an array that has them (an enum's options, asked for together); None
        for any other list of pointers."""
        if len(pointers) < 2 or not pointers[0].endswith("/0"):
            return None
        parent = pointers[0][:-2]
        if pointers != [f"{parent}/{index}" for index in range(len(pointers))]:
            return None
        entry = self.locate(parent)
        if entry is None or self.text[entry[2]] != "[":
            return None
        starts, ends = self._array(entry[2])
        count = len(pointers)
        return (starts[:count], ends[:count]) if count <= len(starts) else None

    def _child(self, entry: Entry, token: str) -> Entry | None:
        start = entry[2]
        opening = self.text[start]
        if opening == "{":
            return self._object(start).get(token.replace("~1", "/").replace("~0", "~"))
        if opening == "[" and ARRAY_INDEX.fullmatch(token):
            (starts, ends), index = self._array(start), int(token)
            return (-1, -1, starts[index], ends[index]) if index < len(starts) else None
        return None

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column of an offset (only `\\n` ends a line, as in json-source-map)."""
        marks = self._line_marks()
        line = bisect_left(marks, offset)
        return line, offset - marks[line - 1]

    def line_columns(self, offsets: list[int]) -> tuple[list[int], list[int]]:
        """line_column() of many offsets: (their lines, their columns), computed in C loops."""
        marks = self._line_marks()
        lines = list(map(bisect_left, repeat(marks), offsets))
        return lines, list(map(sub, offsets, map(self._before.__getitem__, lines)))

    def regions(self, starts: list[int], ends: list[int]) -> Iterator[tuple[int, int, int, int]]:
        """(*line_column(start), *line_column(end)) of each value or key from start to end.
        Only an object or array can span lines (a string holds no raw newline in valid JSON):
        any other value ends on its line, its length further on."""
        lines, columns = self.line_columns(starts)
        end_lines = lines.copy()
        end_columns = list(map(add, columns, map(sub, ends, starts)))
        text = self.text
        spanning = [i for i, start in enumerate(starts) if text[start] in "{["]
        if spanning:
            for i, line, column in zip(spanning, *self.line_columns([ends[i] for i in spanning])):
                end_lines[i], end_columns[i] = line, column
        return zip(lines, columns, end_lines, end_columns)

    def _line_marks(self) -> list[int]:
        if self._marks is None:
            self._marks = [-1, *map(re.Match.start, _NEWLINE.finditer(self.text))]
            self._before = [0, *self._marks]  # _before[line] is marks[line - 1]
        return self._marks

    # -- scanning

    def _object(self, start: int) -> dict[str, Entry]:
        found = self._objects.get(start)
        if found is None:
            found = self._objects[start] = self._scan_object(start)[0]
        return found

    def _array(self, start: int) -> Elements:
        found = self._arrays.get(start)
        if found is None:
            found = self._arrays[start] = self._scan_array(start)[0]
        return found

    # -- prefetching

    def prefetch(self, pointers: Iterable[str]) -> None:
        """Scan, in one pass from the root, every container on the way to any of `pointers`, each
        once, keeping each one's table for locate().

        Asked one at a time, a pointer's containers are each scanned by stepping over every
        member's value with the C scanner: the root steps over the whole document, the next
        container over nearly all of it again, and so on down (3.5 times the corpus's text in
        all). Here a member on the way to a pointer is scanned member by member as its parent
        reaches it, so only values no pointer needs are stepped over: each byte of the text
        about once. A pointer that names no node is passed over, as locate() would find none."""
        # the containers to scan: each pointer's parent (a trie of their tokens; a scanned
        # container's members outside it are stepped over)
        trie: dict = {}
        for pointer in {pointer.rpartition("/")[0] for pointer in pointers if pointer}:
            node = trie
            for token in pointer.split("/")[1:]:
                node = node.setdefault(token.replace("~1", "/").replace("~0", "~"), {})
        if pointers:
            self._prefetch(self._root[2], trie)

    def _prefetch(self, start: int, wanted: dict) -> None:
        text = self.text
        if text[start] == "{":
            members = self._objects.get(start)
            if members is None:
                self._objects[start] = self._scan_object(start, wanted)[0]
                return
            for key, below in wanted.items():
                entry = members.get(key)
                if entry is not None and text[entry[2]] in "{[":
                    self._prefetch(entry[2], below)
        elif text[start] == "[":
            elements = self._arrays.get(start)
            if elements is None:
                self._arrays[start] = self._scan_array(start, wanted)[0]
                return
            starts = elements[0]
            for token, below in wanted.items():
                if (
                    ARRAY_INDEX.fullmatch(token)
                    and int(token) < len(starts)
                    and text[starts[int(token)]] in "{["
                ):
                    self._prefetch(starts[int(token)], below)

    def _scan_member(self, start: int, wanted: dict) -> int:
        """Scan a container a prefetch reaches inside its parent's scan (the first scan of the
        parent: nothing can have scanned this one yet); its end offset."""
        if self.text[start] == "{":
            self._objects[start], end = self._scan_object(start, wanted)
        else:
            self._arrays[start], end = self._scan_array(start, wanted)
        return end

    # The scans step over each value (a string by scanstring, anything else by the scanner)
    # and match each separator with one pattern: they are the inner loop, run over every member
    # of every container on the way to a pointer.

    def _scan_object(self, start: int, wanted: dict | None = None) -> tuple[dict[str, Entry], int]:
        """The object's members and its end offset. `wanted` (a prefetch's trie): members that
        lead to a wanted pointer are scanned in turn (_scan_member), not stepped over."""
        text, colon, after = self.text, _COLON.match, _NEXT.match
        members: dict[str, Entry] = {}
        pos = _WHITESPACE.match(text, start + 1).end()  # type: ignore[union-attr]
        if text[pos] == "}":
            return members, pos + 1
        while True:
            key, key_end = _scan_string(text, pos + 1)
            value_start = colon(text, key_end).end()  # type: ignore[union-attr]
            if text[value_start] == '"':
                value_end = _scan_string(text, value_start + 1)[1]
            elif wanted and key in wanted and text[value_start] in "{[":
                value_end = self._scan_member(value_start, wanted[key])
            else:
                value_end = _scan_value(text, value_start)[1]
            members[key] = (pos, key_end, value_start, value_end)  # a repeated key: the last wins
            separator = after(text, value_end)
            if separator.lastindex is None:  # type: ignore[union-attr]
                return members, separator.end()  # type: ignore[union-attr]
            pos = separator.end()  # type: ignore[union-attr]

    def _scan_array(self, start: int, wanted: dict | None = None) -> tuple[Elements, int]:
        """The array's elements and its end offset (`wanted`: as for _scan_object)."""
        text, after = self.text, _NEXT.match
        starts: list[int] = []
        ends: list[int] = []
        pos = _WHITESPACE.match(text, start + 1).end()  # type: ignore[union-attr]
        if text[pos] == "]":
            return (starts, ends), pos + 1
        while True:
            if text[pos] == '"':  # a run of strings (an enum's options) in C loops
                run = list(iter(_STRING_ELEMENT.scanner(text, pos).match, None))  # type: ignore[attr-defined]
                starts += map(re.Match.start, run)
                ends += map(re.Match.end, run, repeat(1))
                if run[-1].lastindex == 1:  # the run ended at `]`
                    return (starts, ends), run[-1].end()
                pos = run[-1].end()  # a value that is no string follows
            if wanted and str(len(starts)) in wanted and text[pos] in "{[":
                value_end = self._scan_member(pos, wanted[str(len(starts))])
            else:
                value_end = _scan_value(text, pos)[1]
            starts.append(pos)
            ends.append(value_end)
            separator = after(text, value_end)
            if separator.lastindex is None:  # type: ignore[union-attr]
                return (starts, ends), separator.end()  # type: ignore[union-attr]
            pos = separator.end()  # type: ignore[union-attr]


def repeated_keys(text: str) -> list[tuple[str, str, list[tuple[int, int]]]]:
    """Every key an object of `text` (valid JSON) writes more than once: (the object's pointer,
    the key, the (start, end) offsets of each time it is written, in order), in source order.
    Values a repeat drops are not looked into (json.loads keeps the last; their pointers name
    the kept value). A full scan of every container: only run where a parse found a repeat
    (documents.json_duplicates)."""
    out: list[tuple[int, str, str, list[tuple[int, int]]]] = []
    after, colon = _NEXT.match, _COLON.match
    start = _WHITESPACE.match(text).end()  # type: ignore[union-attr]
    stack = [(start, "")] if text[start : start + 1] in ("{", "[") else []
    while stack:
        start, pointer = stack.pop()
        pos = _WHITESPACE.match(text, start + 1).end()  # type: ignore[union-attr]
        if text[pos] in "}]":
            continue
        is_object = text[start] == "{"
        seen: dict[str, list[tuple[int, int]]] = {}
        containers: dict[str, int] = {}  # member token -> where its (last) container starts
        index = 0
        while True:
            if is_object:
                key, key_end = _scan_string(text, pos + 1)
                seen.setdefault(key, []).append((pos, key_end))
                token = key.replace("~", "~0").replace("/", "~1")
                pos = colon(text, key_end).end()  # type: ignore[union-attr]
            else:
                token, index = str(index), index + 1
            if text[pos] == '"':
                value_end = _scan_string(text, pos + 1)[1]
                containers.pop(token, None)
            else:
                value_end = _scan_value(text, pos)[1]
                if text[pos] in "{[":
                    containers[token] = pos
                else:
                    containers.pop(token, None)
            separator = after(text, value_end)
            if separator.lastindex is None:  # type: ignore[union-attr]
                break
            pos = separator.end()  # type: ignore[union-attr]
        stack += [(at, f"{pointer}/{token}") for token, at in containers.items()]
        out += [(spans[0][0], pointer, key, spans) for key, spans in seen.items() if len(spans) > 1]
    return [(pointer, key, spans) for _, pointer, key, spans in sorted(out, key=lambda e: e[0])]
