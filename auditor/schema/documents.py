"""Read JSON and YAML files into plain values plus a JSON-Pointer → source-position map.

Values always come from `json.loads` or the YAML loader; positions come from a scanner that finds
only the nodes asked about (JSON, auditor.schema.positions) or ruamel.yaml's line/column records
(YAML). Lines and columns are 1-based; columns count Unicode code points, which is what SARIF's
`unicodeCodePoints` column kind means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from auditor.errors import InputFileError
from auditor.lazy import Deferred
from auditor.limits import MAX_DEPTH, MAX_FILE_BYTES, Unreadable, nesting_depth, read_regular
from auditor.schema.positions import JsonPositions, repeated_keys

# Input limits (config keys `max-file-bytes`, `max-depth`; see docs/security.md).
# (MAX_FILE_BYTES and MAX_DEPTH live in auditor.limits, shared with the other readers)
# The deepest nesting the analysis thread's stack takes (run_deep), whatever max-depth says:
# measured, the site crawler overflows it (SIGSEGV) from about 12,000 levels of `items`.
MAX_DEPTH_CAP = 8_000
MAX_INT_DIGITS = 4_300  # Python's own int/str conversion limit
# A YAML document expands to at most this many nodes per byte of text (plus a floor): without
# aliases a document cannot exceed it, so only alias bombs ("billion laughs") are refused.
YAML_NODES_PER_BYTE = 2
YAML_NODES_FLOOR = 10_000

YAML_SUFFIXES = {".yaml", ".yml"}
JSON_SUFFIXES = {".json"}
LINTABLE_SUFFIXES = YAML_SUFFIXES | JSON_SUFFIXES
# Code whose decision requests are read statically (auditor.schema.code_requests), never run
PYTHON_SUFFIXES = {".py"}
SCRIPT_SUFFIXES = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts"}
CODE_SUFFIXES = PYTHON_SUFFIXES | SCRIPT_SUFFIXES


class Span(NamedTuple):
    """A region of the source: start inclusive, end exclusive (1-based lines and columns). A
    tuple: a document has one per node, and a cached one is read back 30,000 at a time."""

    line: int
    column: int
    end_line: int
    end_column: int


def pack_spans(spans: dict[str, Span] | list[Span]) -> list:
    """[pointers, numbers] of a pointer → Span map (or of a list of spans: [numbers]): four
    numbers per span, flat (the analysis cache's form; a pool worker's too: a flat list of
    ints pickles in a fifth of the time of as many Span tuples)."""
    if isinstance(spans, dict):
        return [list(spans), list(chain.from_iterable(spans.values()))]
    return [list(chain.from_iterable(spans))]


def unpack_spans(numbers: list) -> list[Span]:
    """The Spans of pack_spans' flat numbers."""
    at = iter(numbers)
    # tuple.__new__(Span, four): a Span without the keyword-parsing constructor (30,000 a run)
    return list(map(tuple.__new__, repeat(Span), zip(at, at, at, at)))


# A document's pointer → Span maps (packed flat in the analysis cache and in a pickle).
SPAN_MAPS = ("value_spans", "key_spans")


class PackedSpans:
    """A span map packed flat (pack_spans: pointers, four numbers each): called, the map."""

    def __init__(self, pointers: list[str], numbers: list[int]):
        self.pointers, self.numbers = pointers, numbers

    @property
    def packed(self) -> list:
        return [self.pointers, self.numbers]

    def __call__(self) -> dict[str, Span]:
        return dict(zip(self.pointers, unpack_spans(self.numbers)))


@dataclass(frozen=True)
class DuplicateKey:
    """A key that one object of the source writes more than once. Every reader keeps the last
    value, as JSON parsers do (Python's json, JavaScript's JSON.parse, serde_json) and as PyYAML
    does; the earlier ones are silently dropped. `pointer` names the member whose value was kept,
    `spans` each place the key is written, in source order (the last one kept)."""

    pointer: str
    key: str
    spans: tuple[Span, ...]


@dataclass
class Document(Deferred):
    path: str
    # the parsed value; `...` (never a JSON or YAML value) until first read for a JSON document
    # read back from the analysis cache, which parses `text` again only when something asks
    _data: object
    text: str
    value_spans: dict[str, Span] = field(default_factory=dict)
    key_spans: dict[str, Span] = field(default_factory=dict)
    # JSON: spans not in the maps yet are found on demand, until settle_spans() (then the maps
    # are all there is, as for YAML, and as a cached document is stored)
    positions: JsonPositions | None = field(default=None, repr=False, compare=False)
    _absent: set[str] = field(default_factory=set, repr=False, compare=False)
    # the value is `json.loads(text)` (a JSON file's): a pickle leaves it out, and it is parsed
    # again where something reads it, as for a document read back from the analysis cache
    reparse: bool = field(default=False, repr=False, compare=False)
    # The duplicate-key hook: every key an object writes twice or more, recorded by the reader
    # that parsed the source (JSON and YAML here; a reader of another input kind appends its
    # own, with spans in its source) and kept in the analysis cache. Rules and the served
    # checks read it; a value it names as dropped never reaches the parsed data.
    duplicates: list[DuplicateKey] = field(default_factory=list, compare=False)
    # a code file's parts built at run time: pointer → the expression as written (their value in
    # `data` is a placeholder; auditor.schema.code_requests), and what reading it met (notes)
    runtime: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def __getstate__(self) -> dict:
        """What pickling keeps (a pool worker sends documents back): the spans packed flat (as
        they were where still unread), a JSON file's value left out."""
        state = dict(self.__dict__)
        deferred = state.pop("_deferred", {})
        for name in SPAN_MAPS:
            state[name] = deferred[name].packed if name in deferred else pack_spans(state[name])
        if self.reparse:
            state["_data"] = ...
        return state

    def __setstate__(self, state: dict) -> None:
        """The spans stay packed until first read: the process that collects a pool's
        documents mostly reports them, and never reads most spans."""
        packed = [state.pop(name) for name in SPAN_MAPS]
        self.__dict__.update(state)
        self._defer_spans(*packed)

    @classmethod
    def packed(
        cls,
        path: str,
        data: object,
        text: str,
        value_spans: list,
        key_spans: list,
        duplicates: list[DuplicateKey] | None = None,
    ) -> Document:
        """A document whose spans are given as pack_spans() made them (the analysis cache's
        form), turned into Spans when first read: a cached model read before a pool forks has
        its spans made by the process that reads them, if any does."""
        document = cls(path, data, text, duplicates=list(duplicates or ()))
        document._defer_spans(value_spans, key_spans)
        return document

    def _defer_spans(self, value_spans: list, key_spans: list) -> None:
        for name, packed in zip(SPAN_MAPS, (value_spans, key_spans)):
            self.defer(name, PackedSpans(*packed))

    @property
    def data(self) -> object:
        if self._data is ...:  # (as deep as the file is: parsed where the analysis was, run_deep)
            self._data = run_deep(_parse_json_value, self.text, self.path)
        return self._data

    def span(self, pointer: str) -> Span:
        """The value's span; the nearest ancestor's when a pointer has none (never fails)."""
        probe = pointer
        while True:
            found = self.value_spans.get(probe)
            if found is None and self.positions is not None:
                found = self._locate(probe)
            if found is not None:
                return found
            if not probe:
                return Span(1, 1, 1, 1)
            probe = probe.rsplit("/", 1)[0]

    def key_span(self, pointer: str) -> Span:
        if self.positions is not None and pointer not in self.value_spans:
            self._locate(pointer)
        return self.key_spans.get(pointer) or self.span(pointer)

    def spans(self, pointers: list[str]) -> list[Span]:
        """span() of each pointer, found together (each parent once)."""
        if self.positions is not None:
            missing = [p for p in pointers if p not in self.value_spans and p not in self._absent]
            elements = self.positions.leading_elements(missing) if missing else None
            if elements is not None:  # an enum's options: values without keys, all there
                self.value_spans.update(zip(missing, self._spans_of(*elements)))
            elif missing:
                self._store_many(missing, self.positions.locate_many(missing))
        found = list(map(self.value_spans.get, pointers))
        if None not in found:
            return found  # type: ignore[return-value]
        return [span or self.span(p) for span, p in zip(found, pointers)]

    def prefetch(self, pointers: Iterable[str]) -> None:
        """Scan the way to all these pointers at once (JsonPositions.prefetch), so that finding
        their spans afterwards, in any order, scans no container twice."""
        if self.positions is not None:
            self.positions.prefetch(pointers)

    def settle_spans(self, pointers: Iterable[str]) -> None:
        """Find the spans of these pointers now, then stop finding any others."""
        if self.positions is not None:
            self.spans([p for p in pointers if p not in self.value_spans])
        self.positions = None
        self._absent = set()

    def _locate(self, pointer: str) -> Span | None:
        assert self.positions is not None
        if pointer in self._absent:
            return None
        return self._store(pointer, self.positions.locate(pointer))

    def _store(self, pointer: str, entry) -> Span | None:
        assert self.positions is not None
        if entry is None:
            self._absent.add(pointer)
            return None
        key_start, key_end, value_start, value_end = entry
        at = self.positions.line_column
        value = self.value_spans[pointer] = tuple.__new__(Span, (*at(value_start), *at(value_end)))
        if key_start >= 0:
            self.key_spans[pointer] = tuple.__new__(Span, (*at(key_start), *at(key_end)))
        return value

    def _store_many(self, pointers: list[str], entries: list) -> None:
        """_store() of each (pointer, entry), in order, with the lines and columns of all their
        offsets found at once (an enum's thousands of options)."""
        assert self.positions is not None
        found = [(p, e) for p, e in zip(pointers, entries) if e is not None]
        if len(found) < len(pointers):
            self._absent.update(p for p, e in zip(pointers, entries) if e is None)
        self.value_spans.update(self._spans_between(found, 2))
        self.key_spans.update(self._spans_between([(p, e) for p, e in found if e[0] >= 0], 0))

    def _spans_between(self, found: list, start: int):
        """(pointer, Span from entry[start] to entry[start + 1]) of each (pointer, entry)."""
        assert self.positions is not None
        if not found:
            return []
        spans = self._spans_of([entry[start] for _, entry in found], [entry[start + 1] for _, entry in found])
        return zip([pointer for pointer, _ in found], spans)

    def _spans_of(self, starts: list[int], ends: list[int]):
        """The Span from each start offset to its end."""
        assert self.positions is not None
        return map(tuple.__new__, repeat(Span), self.positions.regions(starts, ends))


def escape_token(token: str) -> str:
    """RFC 6901 escaping of one reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve_pointer(data: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer (raises KeyError/IndexError/ValueError if absent)."""
    node = data
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def read_source(path: Path, display: str, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; anything else is an input error
    (auditor.paths.read_regular: FIFOs, devices and sockets are never opened)."""
    limit = MAX_FILE_BYTES if max_bytes is None else max_bytes
    try:
        return read_regular(path, limit)
    except Unreadable as exc:
        if exc.over_limit:
            raise InputFileError(display, f"{exc.reason} (config key max-file-bytes)") from None
        skipped = exc.reason.startswith("not a regular file")
        raise InputFileError(display, f"{exc.reason}; skipped" if skipped else exc.reason) from None


def parse_document(raw: bytes, suffix: str, display: str, max_depth: int | None = None) -> Document:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(display, f"not UTF-8 text (byte {exc.start})") from None
    limit = MAX_DEPTH if max_depth is None else min(max_depth, MAX_DEPTH_CAP)
    try:
        if suffix.lower() in YAML_SUFFIXES:
            document = _load_yaml(text, display, limit)
        else:
            document = _load_json(text, display, limit)
    except InputFileError as error:
        marker = conflict_marker_line(text)
        if marker is not None:  # (named at its own line, not where the parser gave up)
            raise InputFileError(
                display, "unresolved merge conflict marker '<<<<<<<' (resolve the merge)", marker, 1
            ) from None
        raise error from None
    check_depth(document.data, display, limit)
    if _SURROGATE_ESCAPE.search(text):
        check_unicode(document.data, display)
    return document


def conflict_marker_line(text: str) -> int | None:
    """The line of the first merge conflict marker (`<<<<<<< ` at a line's start), if any."""
    found = _CONFLICT_MARKER.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


_CONFLICT_MARKER = re.compile(r"^<<<<<<<(?: |$)", re.MULTILINE)


def load_document(path: Path, display: str | None = None) -> Document:
    display = display or str(path)
    return parse_document(read_source(path, display), path.suffix, display)


_SURROGATE_ESCAPE = re.compile(r"\\[uU][dD][89a-fA-F]")  # only an escape can write one
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def check_unicode(data: Any, display: str) -> None:
    """Refuse strings holding a lone surrogate (`"\\ud800"`): not text any tokenizer can encode."""
    stack = [(data, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        for key, value in items:
            child = f"{pointer}/{escape_token(str(key))}"
            for text in (key, value):
                if isinstance(text, str):
                    found = _LONE_SURROGATE.search(text)
                    if found:
                        raise InputFileError(
                            display,
                            f"lone surrogate U+{ord(found.group()):04X} in "
                            f"a string at {child or '/'}: not Unicode text",
                        )
            stack.append((value, child))


def check_depth(data: Any, display: str, limit: int) -> None:
    depth = nesting_depth(data)
    if depth > limit:
        raise InputFileError(
            display, f"nested {depth} levels deep, over the limit of {limit} ({_depth_key(limit)})"
        )


def _depth_key(limit: int) -> str:
    """Where the depth limit comes from, for messages: the config key, and the cap it hit."""
    if limit >= MAX_DEPTH_CAP:
        return f"config key max-depth, capped at {MAX_DEPTH_CAP}: the deepest the analysis stack takes"
    return "config key max-depth"


def _parse_json_value(text: str, display: str) -> object:
    return json.loads(text, parse_int=_int_or_refuse(display))


def _too_deep(display: str, limit: int) -> InputFileError:
    return InputFileError(display, f"nested more than {limit} levels deep ({_depth_key(limit)})")


def _int_or_refuse(display: str):
    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise InputFileError(
                display, f"integer literal with {len(digits.lstrip('-')):,} digits (limit {MAX_INT_DIGITS:,})"
            )
        return int(digits)

    return parse_int


# --------------------------------------------------------------------------- JSON


class _RepeatWatch:
    """json.loads' object_pairs_hook: builds each object as json.loads would (the last of a
    repeated key wins) and notes whether any object repeated a key."""

    def __init__(self) -> None:
        self.repeated = False

    def __call__(self, pairs: list) -> dict:
        built = dict(pairs)
        if len(built) < len(pairs):
            self.repeated = True
        return built


def _load_json(text: str, display: str, max_depth: int = MAX_DEPTH) -> Document:
    watch = _RepeatWatch()
    try:
        data = json.loads(text, parse_int=_int_or_refuse(display), object_pairs_hook=watch)
    except json.JSONDecodeError as exc:
        raise InputFileError(display, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise _too_deep(display, max_depth) from None
    positions = JsonPositions(text)
    document = Document(display, data, text, positions=positions, reparse=True)  # depth: parse_document
    if watch.repeated:
        document.duplicates = json_duplicates(text, positions)
    return document


def json_duplicates(text: str, positions: JsonPositions | None = None) -> list[DuplicateKey]:
    """The keys an object of `text` (valid JSON) writes more than once, with their spans."""
    positions = positions or JsonPositions(text)
    at = positions.line_column
    return [
        DuplicateKey(
            f"{pointer}/{escape_token(key)}",
            key,
            tuple(tuple.__new__(Span, (*at(start), *at(end))) for start, end in spans),
        )
        for pointer, key, spans in repeated_keys(text)  # (parsed where the depth is handled)
    ]


# --------------------------------------------------------------------------- YAML


def _load_yaml(text: str, display: str, max_depth: int = MAX_DEPTH) -> Document:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")  # YAML 1.2, keeps line/column records
    repeats = _yaml_repeat_hook(yaml)
    try:
        tree = yaml.load(text)
    except RecursionError:
        raise _too_deep(display, max_depth) from None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        raise InputFileError(display, f"invalid YAML value: {str(exc).split(';')[0]}") from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise InputFileError(display, f"invalid YAML: {problem}", line, column) from None
    except YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
        raise InputFileError(display, f"invalid YAML: {first}") from None
    lines = _YAML_LINE_END.split(text)  # ruamel's lines: U+2028, NEL, form feed do not end one
    if lines and lines[-1] == "":
        lines.pop()
    values: dict[str, Span] = {"": Span(1, 1, len(lines) + 1, 1)}
    keys: dict[str, Span] = {}
    budget = _NodeBudget(display, YAML_NODES_FLOOR + YAML_NODES_PER_BYTE * len(text), max_depth)
    try:
        data = _walk_yaml(tree, "", lines, values, keys, budget, 1, repeats)
    except RecursionError:
        raise _too_deep(display, max_depth) from None
    duplicates = sorted(repeats.named, key=lambda d: d.spans[0][:2])
    return Document(display, data, text, values, keys, duplicates=duplicates)


class _YamlRepeats:
    """The keys written twice in one mapping that the loader met: `pending` maps a mapping's
    start (line, column) to [(key, the marks of each time it is written)]; _walk_yaml, which
    knows each mapping's pointer, turns them into DuplicateKeys (`named`)."""

    def __init__(self) -> None:
        self.pending: dict[tuple[int, int], list[tuple[Any, list]]] = {}
        self.named: list[DuplicateKey] = []

    def __bool__(self) -> bool:
        return bool(self.pending)


def _yaml_repeat_hook(yaml) -> _YamlRepeats:
    """Let the loader take a key written twice in one mapping (ruamel refuses the file by
    default) and keep the last value, as PyYAML and JSON parsers do, noting each repeat."""
    yaml.allow_duplicate_keys = True
    constructor = yaml.constructor
    unique = constructor.check_mapping_key
    repeats = _YamlRepeats()

    def check(node, key_node, mapping, key, value) -> bool:
        if not unique(node, key_node, mapping, key, value):
            found = repeats.pending.setdefault((node.start_mark.line, node.start_mark.column), [])
            if all(k != key for k, _ in found):
                same = [
                    k.start_mark for k, _ in node.value if k.value == key_node.value and k.tag == key_node.tag
                ]
                found.append((key, same))
        return True  # (stored over the earlier value: the last wins)

    constructor.check_mapping_key = check
    return repeats


class _NodeBudget:
    """Counts the nodes the YAML walk produces: aliases can make them exponential."""

    def __init__(self, display: str, limit: int, max_depth: int):
        self.display, self.limit, self.max_depth, self.used = display, limit, max_depth, 0

    def spend(self, depth: int, container: bool) -> None:
        self.used += 1
        if self.used > self.limit:
            raise InputFileError(
                self.display,
                f"YAML aliases expand to more than {self.limit:,} nodes (an alias bomb?); refused",
            )
        if container and depth > self.max_depth:
            raise _too_deep(self.display, self.max_depth)


_YAML_LINE_END = re.compile("\r\n|\r|\n")


def _scalar_end(lines: list[str], line0: int, col0: int, flow: bool = False) -> tuple[int, int]:
    """End (0-based, exclusive) of the scalar starting at (line0, col0): quotes or plain text.

    A plain scalar ends at ` #` (a comment needs the space: `C#` is one scalar), at `: ` or a
    line-final `:`, and, inside `[...]`/`{...}` only, at a flow indicator `,[]{}`.
    """
    if line0 >= len(lines):
        return line0, col0
    row = lines[line0]
    if col0 < len(row) and row[col0] in "\"'":
        quote, i = row[col0], col0 + 1
        while i < len(row):
            if row[i] == "\\" and quote == '"':
                i += 2
                continue
            if row[i] == quote:
                if quote == "'" and i + 1 < len(row) and row[i + 1] == "'":
                    i += 2
                    continue
                return line0, i + 1
            i += 1
        return line0, len(row)
    end = col0
    while end < len(row):
        char = row[end]
        if char == "#" and end > col0 and row[end - 1] in " \t":
            break
        if char == ":" and (end + 1 == len(row) or row[end + 1] in " \t"):
            break
        if flow and char in ",[]{}":
            break
        end += 1
    return line0, len(row[:end].rstrip())


def _span_at(lines: list[str], line0: int, col0: int, flow: bool = False) -> Span:
    end_line, end_col = _scalar_end(lines, line0, col0, flow)
    return Span(line0 + 1, col0 + 1, end_line + 1, end_col + 1)


def _is_flow(node) -> bool:
    try:
        return bool(node.fa.flow_style())
    except AttributeError:
        return False


def _walk_yaml(
    node,
    pointer: str,
    lines,
    values,
    keys,
    budget: _NodeBudget,
    depth: int,
    repeats: _YamlRepeats | None = None,
):
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    budget.spend(depth, isinstance(node, (CommentedMap, CommentedSeq)))
    if isinstance(node, CommentedMap):
        if repeats:
            _name_repeats(node, pointer, lines, repeats)
        out = {}
        for key, value in node.items():
            child = f"{pointer}/{escape_token(str(key))}"
            try:
                key_line, key_col, val_line, val_col = node.lc.key(key) + node.lc.value(key)
                keys[child] = _span_at(lines, key_line, key_col, _is_flow(node))
                values[child] = _span_at(lines, val_line, val_col, _is_flow(node))
            except (KeyError, TypeError, AttributeError):
                pass
            out[str(key) if not isinstance(key, (str, int, float, bool)) else key] = _walk_yaml(
                value, child, lines, values, keys, budget, depth + 1, repeats
            )
        return {str(k): v for k, v in out.items()}
    if isinstance(node, CommentedSeq):
        out_list = []
        for index, value in enumerate(node):
            child = f"{pointer}/{index}"
            try:
                line, col = node.lc.item(index)
                values[child] = _span_at(lines, line, col, _is_flow(node))
            except (KeyError, TypeError, AttributeError):
                pass
            out_list.append(_walk_yaml(value, child, lines, values, keys, budget, depth + 1, repeats))
        return out_list
    return _plain_scalar(node)


def _name_repeats(node, pointer: str, lines, repeats: _YamlRepeats) -> None:
    """The repeats the loader met in this mapping, as DuplicateKeys at its pointer."""
    try:
        found = repeats.pending.pop((node.lc.line, node.lc.col), ())
    except AttributeError:
        return
    flow = _is_flow(node)
    for key, marks in found:
        spans = tuple(_span_at(lines, m.line, m.column, flow) for m in marks)
        repeats.named.append(DuplicateKey(f"{pointer}/{escape_token(str(key))}", str(key), spans))


def _plain_scalar(value):
    """ruamel's round-trip scalar subclasses → plain JSON values."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    tag = getattr(getattr(value, "tag", None), "value", None)
    if isinstance(tag, str) and tag.startswith("!") and isinstance(getattr(value, "value", None), str):
        return f"{tag} {value.value}"  # an unknown tag (`!function utils.f`): its text, never run
    return str(value)  # dates and other YAML-only types: their text


# --------------------------------------------------------------------------- deep inputs

DEEP_STACK_BYTES = 512 * 1024 * 1024  # address space reserved for the worker's stack, not memory
DEEP_RECURSION_LIMIT = 60_000


T = TypeVar("T")


def run_deep(function: Callable[..., T], *args: Any) -> T:
    """Run `function(*args)` where nesting up to MAX_DEPTH cannot overflow the stack.

    The parsers, the position mapper and the meta-schema validator recurse once (or several
    times) per nesting level; Python's default limit (1,000 frames) breaks a clean schema 100
    levels deep. So analysis runs in a worker thread with a large stack and a raised recursion
    limit (restored afterwards; the caller waits, so nothing else runs meanwhile).
    """
    import sys
    import threading

    outcome: dict = {}

    def work() -> None:
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    previous_limit = sys.getrecursionlimit()
    previous_stack = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        worker = threading.Thread(target=work, name="pcdlint-analysis", daemon=True)
    finally:
        threading.stack_size(previous_stack)
    sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT))
    try:
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
