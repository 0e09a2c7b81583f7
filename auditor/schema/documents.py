"""Read JSON and YAML files into plain values plus a JSON-Pointer → source-position map.

Values always come from `json.loads` or the YAML loader; positions come from `json-source-map`
(JSON) or ruamel.yaml's line/column records (YAML). Lines and columns are 1-based; columns count
Unicode code points, which is what SARIF's `unicodeCodePoints` column kind means.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import InputFileError

YAML_SUFFIXES = {".yaml", ".yml"}
JSON_SUFFIXES = {".json"}
LINTABLE_SUFFIXES = YAML_SUFFIXES | JSON_SUFFIXES


@dataclass(frozen=True)
class Span:
    """A region of the source: start inclusive, end exclusive (1-based lines and columns)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass
class Document:
    path: str
    data: object
    text: str
    value_spans: dict[str, Span] = field(default_factory=dict)
    key_spans: dict[str, Span] = field(default_factory=dict)

    def span(self, pointer: str) -> Span:
        """The value's span; the nearest ancestor's when a pointer has none (never fails)."""
        probe = pointer
        while True:
            found = self.value_spans.get(probe)
            if found is not None:
                return found
            if not probe:
                return Span(1, 1, 1, 1)
            probe = probe.rsplit("/", 1)[0]

    def key_span(self, pointer: str) -> Span:
        return self.key_spans.get(pointer) or self.span(pointer)


def escape_token(token: str) -> str:
    """RFC 6901 escaping of one reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve_pointer(data, pointer: str):
    """The value at an RFC 6901 pointer (raises KeyError/IndexError/ValueError if absent)."""
    node = data
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


def read_source(path: Path, display: str) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise InputFileError(display, "is a directory") from None
    except OSError as exc:
        raise InputFileError(display, f"cannot read file ({exc.strerror or exc})") from None


def parse_document(raw: bytes, suffix: str, display: str) -> Document:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(display, f"not UTF-8 text (byte {exc.start})") from None
    if suffix.lower() in YAML_SUFFIXES:
        return _load_yaml(text, display)
    return _load_json(text, display)


def load_document(path: Path, display: str | None = None) -> Document:
    display = display or str(path)
    return parse_document(read_source(path, display), path.suffix, display)


# --------------------------------------------------------------------------- JSON


def _load_json(text: str, display: str) -> Document:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(display, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise InputFileError(display, "invalid JSON: nested too deeply") from None
    from json_source_map import calculate

    values: dict[str, Span] = {}
    keys: dict[str, Span] = {}
    for pointer, entry in _escaped(calculate(text), data).items():
        start, end = entry.value_start, entry.value_end
        values[pointer] = Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)
        if entry.key_start is not None:
            ks, ke = entry.key_start, entry.key_end
            keys[pointer] = Span(ks.line + 1, ks.column + 1, ke.line + 1, ke.column + 1)
    return Document(display, data, text, values, keys)


def _escaped(entries: dict, data) -> dict:
    """json-source-map writes pointers unescaped (`/paths//pets`): re-key them per RFC 6901."""
    out = {}

    def walk(node, raw: str, escaped: str) -> None:
        if raw in entries:
            out[escaped] = entries[raw]
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{raw}/{key}", f"{escaped}/{escape_token(key)}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{raw}/{index}", f"{escaped}/{index}")

    if any("/" in key or "~" in key for key in _keys(data)):
        walk(data, "", "")
        return out
    return entries


def _keys(node):
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield from item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# --------------------------------------------------------------------------- YAML


def _load_yaml(text: str, display: str) -> Document:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")  # YAML 1.2, keeps line/column records
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise InputFileError(display, f"invalid YAML: {problem}", line, column) from None
    except YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "invalid YAML"
        raise InputFileError(display, f"invalid YAML: {first}") from None
    lines = text.splitlines()
    values: dict[str, Span] = {"": Span(1, 1, len(lines) + 1, 1)}
    keys: dict[str, Span] = {}
    data = _walk_yaml(tree, "", lines, values, keys)
    return Document(display, data, text, values, keys)


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


def _walk_yaml(node, pointer: str, lines, values, keys):
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
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
                value, child, lines, values, keys
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
            out_list.append(_walk_yaml(value, child, lines, values, keys))
        return out_list
    return _plain_scalar(node)


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
    return str(value)  # dates and other YAML-only types: their text
