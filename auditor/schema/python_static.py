"""A Python class read from its source with `ast`, never imported: the fallback when
`pkg.module:Class` cannot be imported (a dependency not installed, an API call at import time).

What it reads, all within the one file: Enum subclasses (`class Tone(str, Enum)` and its members'
literal values), classes with annotated fields (Pydantic models, dataclasses, TypedDicts: any
class body of `name: annotation` lines, with the fields of base classes defined in the same file),
and in annotations `Literal[...]`, `Optional[X]`, `Union[...]` and `X | Y`, `list[X]` (and
`List`, `Sequence`, `set`, `tuple[X, ...]`), `Annotated[X, ...]`, the builtin scalar types, module
level aliases (`Channel = Literal["email", "chat"]`) and nested classes of the file (as `$defs`
entries, as Pydantic names them). Anything else becomes `{}` (any value), which no rule reads.
Every pointer is placed at the Python source it came from: the class line, the field's name,
each `Literal` value or enum member.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from auditor.errors import InputFileError
from auditor.schema.documents import Document, Span, escape_token, parse_document

SCALARS = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string"},
    "None": {"type": "null"},
    "dict": {"type": "object"},
    "Dict": {"type": "object"},
    "Mapping": {"type": "object"},
}
ARRAYS = {"list", "List", "Sequence", "set", "Set", "frozenset", "FrozenSet", "tuple", "Tuple", "Iterable"}
ENUM_BASES = {"Enum", "StrEnum", "IntEnum", "Flag", "IntFlag"}


def read_class(path: Path, display: str, name: str) -> Document:
    """A Document for class `name` of the Python file at `path`: the JSON Schema its source
    declares, positioned at the source."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(display, f"cannot read {path}: {exc}") from None
    except SyntaxError as exc:
        raise InputFileError(display, f"{path}:{exc.lineno}: not valid Python: {exc.msg}") from None
    reader = _Reader(tree)
    if name not in reader.classes:
        raise InputFileError(display, f"{path} defines no class '{name}'")
    schema = reader.root(name)
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    document = parse_document(text.encode("utf-8"), ".json", display)
    document.settle_spans(())  # positions in the Python source, not in the dumped text
    spans = {"": reader.spans.get("", Span(1, 1, 1, 1)), **reader.spans}
    document.value_spans, document.key_spans = spans, dict(reader.spans)
    return document


class _Reader:
    def __init__(self, tree: ast.Module):
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.aliases: dict[str, ast.expr] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                self.aliases[node.targets[0].id] = node.value
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
            ):
                self.aliases[node.target.id] = node.value
            elif type(node).__name__ == "TypeAlias":  # `type Channel = Literal[...]` (3.12)
                self.aliases[node.name.id] = node.value  # type: ignore[attr-defined]
        self.defs: dict[str, dict] = {}
        self.spans: dict[str, Span] = {}

    def root(self, name: str) -> dict:
        node = self.classes[name]
        self.spans[""] = _class_span(node)
        schema = self._class(node, "")
        if self.defs:
            schema["$defs"] = self.defs
        return schema

    def _class(self, node: ast.ClassDef, pointer: str) -> dict:
        if _base_names(node) & ENUM_BASES:
            values, written = [], []
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                    values.append(stmt.value.value)
                    written.append(stmt)  # (the member line, as the imported path places it)
            for index, constant in enumerate(written):
                self.spans[f"{pointer}/enum/{index}"] = _span(constant)
            kinds = {type(v).__name__ for v in values}
            schema: dict = {"enum": values, "title": node.name}
            if kinds == {"str"}:
                schema["type"] = "string"
            return schema
        properties: dict = {}
        required: list[str] = []
        for field, stmt in self._fields(node, set()).items():
            at = f"{pointer}/properties/{escape_token(field)}"
            self.spans[at] = _span(stmt.target)
            properties[field] = self._annotation(stmt.annotation, at, set())
            if stmt.value is None:
                required.append(field)
        schema = {"properties": properties, "title": node.name, "type": "object"}
        if required:
            schema["required"] = required
        return schema

    def _fields(self, node: ast.ClassDef, seen: set[str]) -> dict[str, ast.AnnAssign]:
        """Annotated fields, those of same-file base classes first (as Pydantic orders them)."""
        seen.add(node.name)
        fields: dict[str, ast.AnnAssign] = {}
        for base in _base_names(node):
            if base in self.classes and base not in seen:
                fields.update(self._fields(self.classes[base], seen))
        for stmt in node.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and not stmt.target.id.startswith("_")
                and not _is_classvar(stmt.annotation)
            ):
                fields[stmt.target.id] = stmt
        return fields

    def _annotation(self, node: ast.expr | None, pointer: str, aliases: set[str]) -> dict:
        if node is None:
            return {}
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
            try:
                return self._annotation(ast.parse(node.value, mode="eval").body, pointer, aliases)
            except SyntaxError:
                return {}
        if isinstance(node, ast.Constant) and node.value is None:
            return {"type": "null"}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._union(_flatten_or(node), pointer, aliases)
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = _name(node)
            if name in self.classes:
                return self._reference(name)
            if name in self.aliases and name not in aliases:
                return self._annotation(self.aliases[name], pointer, aliases | {name})
            return dict(SCALARS.get(name, {}))
        if isinstance(node, ast.Subscript):
            head = _name(node.value)
            items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Literal":
                constants = [i for i in items if isinstance(i, ast.Constant)]
                for index, constant in enumerate(constants):
                    self.spans[f"{pointer}/enum/{index}"] = _span(constant)
                values = [c.value for c in constants]
                schema: dict = {"enum": values}
                if values and all(isinstance(v, str) for v in values):
                    schema["type"] = "string"
                return schema
            if head == "Optional":
                return self._union([items[0], ast.Constant(None)], pointer, aliases)
            if head == "Union":
                return self._union(items, pointer, aliases)
            if head == "Annotated":
                return self._annotation(items[0], pointer, aliases)
            if head in ARRAYS:
                return {"items": self._annotation(items[0], f"{pointer}/items", aliases), "type": "array"}
            return dict(SCALARS.get(head, {}))
        return {}

    def _union(self, items: list[ast.expr], pointer: str, aliases: set[str]) -> dict:
        return {
            "anyOf": [
                self._annotation(item, f"{pointer}/anyOf/{index}", aliases)
                for index, item in enumerate(items)
            ]
        }

    def _reference(self, name: str) -> dict:
        pointer = f"/$defs/{escape_token(name)}"
        if name not in self.defs:
            self.defs[name] = {}  # (a class that refers to itself stops here)
            self.spans[pointer] = _class_span(self.classes[name])
            self.defs[name] = self._class(self.classes[name], pointer)
        return {"$ref": f"#{pointer}"}


def _flatten_or(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flatten_or(node.left) + _flatten_or(node.right)
    return [node]


def _name(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr  # typing.Literal, t.Optional, enum.Enum
    return ""


def _base_names(node: ast.ClassDef) -> set[str]:
    return {_name(base) for base in node.bases}


def _is_classvar(annotation) -> bool:
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return _name(head) in ("ClassVar", "Final")


def _span(node) -> Span:
    line, column = node.lineno, node.col_offset + 1
    end_line = getattr(node, "end_lineno", None) or line
    end_column = (getattr(node, "end_col_offset", None) or node.col_offset) + 1
    if end_line != line:
        end_line, end_column = line, column + 1
    return Span(line, column, end_line, end_column)


def _class_span(node: ast.ClassDef) -> Span:
    column = node.col_offset + 1 + len("class ")
    return Span(node.lineno, column, node.lineno, column + len(node.name))
