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
from auditor.schema.code_values import Reading, Scope
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
        # a field's docstring: the string literal right below its `name: annotation` line
        self.docstrings: dict[int, str] = {}
        for cls in self.classes.values():
            for stmt, after in zip(cls.body, cls.body[1:]):
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    self.docstrings[id(stmt)] = after.value.value.strip()

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
            docstring = self.docstrings.get(id(stmt))
            if docstring and isinstance(properties[field], dict) and "description" not in properties[field]:
                properties[field]["description"] = docstring  # (a field's docstring, as Pydantic reads it)
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


# --------------------------------------------------------------------------- decision requests
# A walked `.py` file's decision requests (auditor.schema.code_requests): its literals and calls,
# read with `ast` like the classes above, never imported.

_MUTATORS = {
    "append",
    "extend",
    "insert",
    "update",
    "setdefault",
    "pop",
    "popitem",
    "remove",
    "clear",
    "add",
    "discard",
    "__setitem__",
}


def read_python_requests(text: str) -> Reading:
    """The literals and calls of a Python module's source (auditor.schema.code_requests). A
    module that does not parse (syntax newer than this Python, or broken) is a note."""
    from auditor.schema.code_values import Reading

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        return Reading(
            notes=[f"not read: not Python this pcdlint can parse{where}: {getattr(exc, 'msg', exc)}"]
        )
    except RecursionError:
        return Reading(notes=["not read: nested too deeply to parse"])
    return _RequestReader(tree, text).read()


class _Scope(Scope):
    """The names bound in one module or function body (code_values.Scope)."""

    def __init__(self, node: ast.AST, parent: Scope | None):
        super().__init__(parent)
        body = list(_own_nodes(node))
        for child in body:
            if isinstance(child, ast.Assign):
                for target in child.targets:
                    self._bind(target, child.value)
            elif isinstance(child, (ast.AnnAssign, ast.AugAssign)) and isinstance(child.target, ast.Name):
                self._bind(child.target, child.value if isinstance(child, ast.AnnAssign) else None)
            elif isinstance(child, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._bind(child.target, None)
            elif isinstance(child, (ast.With, ast.AsyncWith)):
                for item in child.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            elif isinstance(child, ast.NamedExpr):
                self._bind(child.target, None)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    self.bindings[(alias.asname or alias.name).split(".")[0]] = None
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is not node:
                returns = [n for n in _own_nodes(child) if isinstance(n, ast.Return) and n.value is not None]
                self.functions[child.name] = (child, returns[0].value if len(returns) == 1 else None)
                self.bindings[child.name] = None
            elif (isinstance(child, ast.Subscript) and isinstance(child.ctx, (ast.Store, ast.Del))) or (
                isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Store)
            ):
                self._mutate(child.value)
            elif (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in _MUTATORS
            ):
                self._mutate(child.func.value)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            for parameter in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                self.bindings[parameter.arg] = None
            for rest in (arguments.vararg, arguments.kwarg):
                if rest is not None:
                    self.bindings[rest.arg] = None

    def _bind(self, target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bindings[target.id] = value if target.id not in self.bindings else None
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element, None)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, None)
        else:
            self._mutate(target)

    def _mutate(self, node: ast.AST) -> None:
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        if isinstance(node, ast.Name):
            self.bindings[node.id] = None


def _own_nodes(node: ast.AST):
    """The nodes of a body, not those of functions, lambdas or classes defined inside it."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))


class _RequestReader:
    def __init__(self, tree: ast.Module, text: str):
        self.tree, self.lines = tree, text.splitlines()
        self.text = text
        self.values: dict[tuple[int, int], object] = {}
        self.scopes: dict[int, _Scope] = {}  # a function's or class's scope, by its node

    def scope_of(self, node: ast.AST, parent: Scope) -> _Scope:
        if id(node) not in self.scopes:
            self.scopes[id(node)] = _Scope(node, parent)
        return self.scopes[id(node)]

    def read(self):
        from auditor.schema.code_values import Reading

        reading = Reading()
        self._visit(self.tree, _Scope(self.tree, None), reading)
        return reading

    def _visit(self, node: ast.AST, scope: Scope, reading) -> None:
        from auditor.schema.code_values import Call

        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                inner = self.scope_of(child, scope)
            if isinstance(child, (ast.Dict, ast.List, ast.Tuple)) and not isinstance(
                getattr(child, "ctx", None), (ast.Store, ast.Del)
            ):
                reading.literals.append(self.value(child, inner, 0))
            elif isinstance(child, ast.Call):
                args = [self.value(a, inner, 0) for a in child.args if not isinstance(a, ast.Starred)]
                kwargs = {k.arg: self.value(k.value, inner, 0) for k in child.keywords if k.arg}
                reading.calls.append(Call(_dotted(child.func), args, kwargs, self.span(child)))
            self._visit(child, inner, reading)

    # ---- values

    def value(self, node: ast.AST, scope: Scope, depth: int):
        key = (id(node), id(scope))
        cached = self.values.get(key)
        if cached is None:
            cached = self._value(node, scope, depth)
            self.values[key] = cached
        return cached

    def _value(self, node: ast.AST, scope: Scope, depth: int):
        from auditor.schema.code_values import (
            CONSTRUCTORS,
            MAX_FOLLOW,
            NOUL_CRITERIA,
            Arr,
            Dyn,
            Lit,
            Obj,
            constructed,
            noul_criteria,
        )

        span = self.span(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return Lit(node.value, span)
        if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
            return Lit("".join(str(v.value) for v in node.values), span)  # type: ignore[attr-defined]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, scope, depth), self.value(node.right, scope, depth)
            if (
                isinstance(left, Lit)
                and isinstance(right, Lit)
                and {type(left.value), type(right.value)} == {str}
            ):
                return Lit(left.value + right.value, span)  # type: ignore[operator]
        if isinstance(node, ast.Dict):
            entries, rest = [], []
            for key, item in zip(node.keys, node.values):
                if key is None:  # `**spread`
                    spread = self.value(item, scope, depth)
                    if isinstance(spread, Obj):
                        entries.extend(spread.entries)
                        rest.extend(spread.rest)
                    else:
                        rest.append(spread if isinstance(spread, Dyn) else Dyn(self.source(item), span))
                    continue
                written = self.value(key, scope, depth)
                name = written.value if isinstance(written, Lit) and isinstance(written.value, str) else None
                entries.append(
                    (
                        name if name is not None else Dyn(self.source(key), self.span(key)),
                        self.span(key),
                        self.value(item, scope, depth),
                    )
                )
            return Obj(entries, span, rest)
        if isinstance(node, ast.DictComp):  # one entry per item: its key built at run time
            return Obj(
                [
                    (
                        Dyn(self.source(node.key), self.span(node.key)),
                        self.span(node.key),
                        self.value(node.value, scope, depth),
                    )
                ],
                span,
            )
        if isinstance(node, (ast.List, ast.Tuple)):
            items, rest = [], []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    spread = self.value(element.value, scope, depth)
                    if isinstance(spread, Arr):
                        items.extend(spread.items)
                    else:
                        rest.append(Dyn(self.source(element), self.span(element)))
                    continue
                items.append(self.value(element, scope, depth))
            return Arr(items, span, rest)
        if isinstance(node, ast.Name) and depth < MAX_FOLLOW:
            found = scope.lookup(node.id)
            if found is not None and found[0] == "value" and found[1] is not None:
                return self.value(found[1], found[2], depth + 1)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            held = self.value(node.value, scope, depth)
            if isinstance(held, Obj):
                for written, _, entry in held.entries:
                    if written == node.slice.value:
                        return entry
            if isinstance(held, Arr) and isinstance(node.slice.value, int) and not held.rest:
                if -len(held.items) <= node.slice.value < len(held.items):
                    return held.items[node.slice.value]
        if isinstance(node, ast.Call):
            name = _dotted(node.func).rsplit(".", 1)[-1]
            args = [self.value(a, scope, depth) for a in node.args if not isinstance(a, ast.Starred)]
            kwargs = {k.arg: self.value(k.value, scope, depth) for k in node.keywords if k.arg}
            if name in CONSTRUCTORS and not any(isinstance(a, ast.Starred) for a in node.args):
                return constructed(CONSTRUCTORS[name], args, kwargs, span, name)
            if name == NOUL_CRITERIA:
                return noul_criteria(kwargs, span)
            if name == "dict" and not node.args and all(k.arg for k in node.keywords):
                return Obj([(k, v.span, v) for k, v in kwargs.items()], span)
            if isinstance(node.func, ast.Name) and depth < MAX_FOLLOW:
                found = scope.lookup(node.func.id)
                if found is not None and found[0] == "function" and found[1] is not None:
                    function = found[2].functions[node.func.id][0]
                    return self.value(found[1], self.scope_of(function, found[2]), depth + 1)
        return Dyn(self.source(node), span)

    # ---- positions

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        column = self._column(line, getattr(node, "col_offset", 0))
        end_line = getattr(node, "end_lineno", None) or line
        end_column = self._column(end_line, getattr(node, "end_col_offset", None) or 0)
        return Span(line, column, end_line, end_column)

    def _column(self, line: int, offset: int) -> int:
        """ast's column (UTF-8 bytes) as a 1-based code-point column."""
        if 0 < line <= len(self.lines):
            return len(self.lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace")) + 1
        return offset + 1

    def source(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or type(node).__name__


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""
