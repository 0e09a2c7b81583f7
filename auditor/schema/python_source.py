"""Schemas defined in Python: Pydantic v2 models, Enum classes, Literal aliases, TypedDicts and
dataclasses, linted as the JSON Schema Pydantic gives them, with findings at the Python lines.

`pcdlint check pkg.module:Ticket` imports `pkg.module` (from the working directory first), which
runs its code: that is why it happens only for an object named this way, never for a `.py` file a
directory walk meets. `model_json_schema()` (models) or `TypeAdapter(obj).json_schema()` (the
rest) gives the schema; it is dumped, crawled like any JSON Schema, and then each pointer whose
Python origin `inspect` and `ast` can tell is moved there: a model or enum class to its `class`
line, a field to its annotation, an enum member or a `Literal[...]` value to where it is written.
Pointers with no Python origin keep the nearest mapped ancestor's position.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import enum
import importlib
import inspect
import json
import os
import re
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from auditor.distribution import install_hint
from auditor.errors import InputFileError, UsageError
from auditor.paths import shorten
from auditor.schema.documents import Document, Span, escape_token, parse_document

PYTHON_REF = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
# `path/to/any-file.py:Class`: a file named by its path, whatever its name
PYTHON_FILE_REF = re.compile(r"^(?P<file>.+\.py):(?P<name>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)$")
_LIBRARY_MODULES = {
    "typing",
    "typing_extensions",
    "pydantic",
    "pydantic_core",
    "builtins",
    "enum",
    "abc",
    "dataclasses",
    "auditor",
}


def is_python_ref(arg: str) -> bool:
    """`pkg.module:Name` or `path/file.py:Name` (and not an existing file of that name)."""
    if os.path.exists(arg):
        return False
    file_ref = PYTHON_FILE_REF.match(arg)
    return bool(PYTHON_REF.match(arg)) or (file_ref is not None and os.path.isfile(file_ref["file"]))


def _pydantic():
    try:
        import pydantic
    except ImportError:
        raise UsageError(f"linting Python objects needs Pydantic v2: {install_hint('pydantic')}") from None
    if not str(getattr(pydantic, "VERSION", "0")).startswith("2"):
        raise UsageError(
            f"linting Python objects needs Pydantic v2 (found {pydantic.VERSION}): {install_hint('pydantic')}"
        )
    return pydantic


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """What runs inside writes to stderr, Python's sys.stdout and file descriptor 1 alike (a
    module that prints, or runs a program, while it is imported)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 (closed stdout): only Python's own stream is redirected
        saved = -1
    if saved != -1:
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved != -1:
            os.dup2(saved, 1)
            os.close(saved)


class ImportFailed(InputFileError):
    """The module of `pkg.module:Name` could not be imported (or raised while importing)."""


def _split(spec: str) -> tuple[str, str]:
    """(module name or .py path, attribute) of a Python reference."""
    file_ref = PYTHON_FILE_REF.match(spec)
    if file_ref is not None and os.path.isfile(file_ref["file"]):
        return file_ref["file"], file_ref["name"]
    module_name, _, attribute = spec.partition(":")
    return module_name, attribute


def _import_file(path: str):
    """Import a .py file named by its path (any file name) as a module of its own."""
    import importlib.util

    name = "_pcdlint_" + re.sub(r"\W", "_", Path(path).stem)
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"no Python module at {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # Pydantic and dataclasses look their module up by name
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_object(spec: str) -> Any:
    """The object `pkg.module:Name` (or `path/file.py:Name`) names (the working directory comes
    first on sys.path)."""
    module_name, attribute = _split(spec)
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:  # for this import only: a long-lived process (the API) keeps its own sys.path
        sys.path.insert(0, cwd)
    try:
        with stdout_to_stderr():  # stdout stays the report's (a clean JSON document)
            module = (
                _import_file(module_name)
                if module_name.endswith(".py")
                else importlib.import_module(module_name)
            )
    except ImportError as exc:
        raise ImportFailed(spec, f"cannot import module '{module_name}': {exc}") from None
    except (Exception, SystemExit) as exc:  # the user's module raised (or exited) while importing
        raise ImportFailed(
            spec, f"importing '{module_name}' raised {type(exc).__name__}: {shorten(str(exc))}"
        ) from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)
    obj = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise InputFileError(spec, f"module '{module_name}' has no attribute '{attribute}'")
        obj = getattr(obj, part)
    return obj


def json_schema_of(obj: Any, display: str) -> dict:
    pydantic = _pydantic()
    try:
        if isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
            return obj.model_json_schema()  # type: ignore[attr-defined]
        if isinstance(obj, pydantic.TypeAdapter):
            return obj.json_schema()
        return pydantic.TypeAdapter(obj).json_schema()
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputFileError(display, f"cannot build a JSON Schema with Pydantic: {first}") from None


def load_python_object(obj: Any, display: str | None = None, name: str | None = None) -> Document:
    """A Document for a Python object: the dumped schema, positioned at the Python source."""
    name = name or getattr(obj, "__name__", None) or type(obj).__name__
    schema = json_schema_of(obj, display or name)
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    document = parse_document(text.encode("utf-8"), ".json", display or name)
    origin = _Origins(obj, name, schema)
    if origin.file is None:  # nothing to point at in Python: positions in the dumped schema
        document.path = display or f"<{name}>"
        return document
    document.path = display if display and not is_python_ref(display) else origin.display
    values, keys = origin.spans(document)
    document.settle_spans(())  # positions in the Python source, not in the dumped text
    document.value_spans, document.key_spans = values, keys
    return document


def load_python_input(spec: str) -> tuple[Document, str | None]:
    """(the Document of `pkg.module:Name`, a note or None). A module that cannot be imported is
    read from its source with `ast` instead (auditor.schema.python_static); the note says so and
    why the import failed."""
    _pydantic()  # before running the user's module: a missing extra is said as such
    module_name, attribute = _split(spec)
    try:
        obj = import_object(spec)
    except InputFileError as failed:
        source = module_source(module_name)
        if source is None or "." in attribute or not isinstance(failed, ImportFailed):
            raise
        from auditor.schema.python_static import read_class

        document = read_class(source, _display(str(source)), attribute)
        reason = failed.message
        return document, (
            f"read statically from its source with ast (not imported: {reason}); "
            "validators, defaults computed at import and imported types are not seen"
        )
    return load_python_object(obj, None, attribute.rsplit(".", 1)[-1]), None


def module_source(module_name: str) -> Path | None:
    """The .py file of a module, found on disk without importing anything (its package's
    `__init__` neither): the working directory first, then sys.path."""
    if module_name.endswith(".py"):
        return Path(module_name) if os.path.isfile(module_name) else None
    parts = module_name.split(".")
    for root in [os.getcwd(), *sys.path]:
        base = Path(root or ".").joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


# --------------------------------------------------------------------------- Python origins


class _Origins:
    """Where the classes, fields, members and Literal values of a schema are written."""

    def __init__(self, obj, name: str, schema: dict):
        self.schema = schema
        self.target = getattr(obj, "_type", obj)  # a TypeAdapter holds its type as `_type`
        self.name = name
        self.file = self._source_file(self.target)
        if self.file is None:
            self.file = self._module_file(self.target, name)
        self.display = _display(self.file) if self.file else name
        self._trees: dict[str, ast.Module] = {}
        self.spans_at: dict[str, Span] = {}

    @staticmethod
    def _source_file(obj) -> str | None:
        try:
            return inspect.getsourcefile(obj) if inspect.isclass(obj) else None
        except (TypeError, OSError):
            return None

    def _module_file(self, obj, name: str) -> str | None:
        """A Literal alias or other typing form: the module that binds it (under `name`, or any
        name when the object was passed without one); `self.name` becomes that name."""
        for module_name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if module_name.split(".")[0] in _LIBRARY_MODULES or not (path and path.endswith(".py")):
                continue
            if getattr(module, name, None) is obj:
                return path
            for attribute, value in list(vars(module).items()):
                if value is obj and not attribute.startswith("_"):
                    self.name = attribute
                    return path
        return None

    def tree(self, path: str) -> ast.Module | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(Path(path).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, UnicodeDecodeError):
                self._trees[path] = None  # type: ignore[assignment]
        return self._trees[path]

    def spans(self, document: Document) -> tuple[dict[str, Span], dict[str, Span]]:
        root_node = self._root_node()
        if root_node is not None:
            self.spans_at[""] = _span_of(root_node, self.name)
        self._map(self.target, "", root_node)
        found = self.schema.get("$defs")
        defs: dict = found if isinstance(found, dict) else {}
        for cls in _referenced_classes(self.target):
            if cls.__name__ in defs:
                node = self._class_node(cls)
                pointer = f"/$defs/{escape_token(cls.__name__)}"
                if node is not None:
                    self.spans_at[pointer] = _span_of(node, cls.__name__)
                self._map(cls, pointer, node)
        values = {"": self.spans_at.get("", Span(1, 1, 1, 1))}
        values.update(self.spans_at)
        return values, dict(self.spans_at)

    def _root_node(self):
        if inspect.isclass(self.target):
            return self._class_node(self.target)
        tree = self.tree(self.file) if self.file else None
        for node in tree.body if tree else []:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else [getattr(node, "name", None)]
                if type(node).__name__ == "TypeAlias"
                else []
            )
            if any(isinstance(t, ast.Name) and t.id == self.name for t in targets):
                return node
        return None

    def _class_node(self, cls) -> ast.ClassDef | None:
        path = self._source_file(cls)
        tree = self.tree(path) if path else None
        if tree is None:
            return None
        try:
            first = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            first = 0
        found = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
        after = [n for n in found if n.lineno >= first]
        return min(after or found, key=lambda n: n.lineno) if (after or found) else None

    def _map(self, obj, pointer: str, node) -> None:
        """Fields and members of one class (or the values of a Literal alias) under `pointer`."""
        schema = _at(self.schema, pointer)
        if not isinstance(schema, dict) or node is None:
            return
        if inspect.isclass(obj) and issubclass(obj, enum.Enum):
            members = [n for n in node.body if isinstance(n, (ast.Assign, ast.AnnAssign))]
            values = schema.get("enum")
            if isinstance(values, list) and len(members) >= len(values):
                by_value: dict = {}
                for member in obj:
                    for stmt in members:
                        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                        if any(isinstance(t, ast.Name) and t.id == member.name for t in targets):
                            by_value.setdefault(_jsonable(member.value), stmt)
                for index, value in enumerate(values):
                    written = by_value.get(_jsonable(value))
                    if written is not None:
                        self.spans_at[f"{pointer}/enum/{index}"] = _span_of(written)
            return
        if not isinstance(node, ast.ClassDef):  # a module-level alias: its Literal values
            self._literals(pointer, getattr(node, "value", None))
            return
        annotated: dict[str, ast.AnnAssign] = {
            stmt.target.id: stmt
            for stmt in node.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        }
        found = schema.get("properties")
        properties: dict = found if isinstance(found, dict) else {}
        for field_name, key in _property_keys(obj).items():
            field = annotated.get(field_name)
            if field is None or key not in properties:
                continue
            field_pointer = f"{pointer}/properties/{escape_token(key)}"
            self.spans_at[field_pointer] = _span_of(field.target)
            self._literals(field_pointer, field.annotation)

    def _literals(self, pointer: str, annotation) -> None:
        """`Literal["a", "b"]` values → the schema's option pointers under `pointer`, in order."""
        constants = _literal_constants(annotation)
        options = _option_pointers(_at(self.schema, pointer), pointer)
        if constants and len(constants) == len(options):
            for option, constant in zip(options, constants):
                self.spans_at[option] = _span_of(constant)


def _display(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def _span_of(node, name: str | None = None) -> Span:
    line, column = node.lineno, node.col_offset + 1
    if name is not None and isinstance(node, ast.ClassDef):
        column = node.col_offset + 1 + len("class ")
        return Span(line, column, line, column + len(name))
    end_line = getattr(node, "end_lineno", None) or line
    end_column = (getattr(node, "end_col_offset", None) or node.col_offset) + 1
    if end_line != line:
        end_line, end_column = line, column + 1
    return Span(line, column, end_line, end_column)


def _at(schema, pointer: str):
    node = schema
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _option_pointers(node, pointer: str) -> list[str]:
    """Pointers of every enum value and const under a schema node, in document order."""
    out: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            child = f"{pointer}/{escape_token(key)}"
            if key == "enum" and isinstance(value, list):
                out.extend(f"{child}/{i}" for i in range(len(value)))
            elif key == "const":
                out.append(child)
            elif key not in ("default", "examples", "$defs"):
                out.extend(_option_pointers(value, child))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.extend(_option_pointers(value, f"{pointer}/{index}"))
    return out


def _literal_constants(annotation) -> list[ast.Constant]:
    found: list[ast.Constant] = []
    for node in ast.walk(annotation) if annotation is not None else []:
        if isinstance(node, ast.Subscript):
            head = node.value
            name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
            if name == "Literal":
                items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                found.extend(i for i in items if isinstance(i, ast.Constant))
    return found


def _jsonable(value):
    return json.loads(json.dumps(value, default=str))


def _property_keys(cls) -> dict[str, str]:
    """Python field name → JSON property key (Pydantic aliases, else the name)."""
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict):
        out = {}
        for name, info in fields.items():
            alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
            out[name] = alias or name
        return out
    if dataclasses.is_dataclass(cls):
        return {f.name: f.name for f in dataclasses.fields(cls)}
    return {name: name for name in getattr(cls, "__annotations__", {})}


def _referenced_classes(obj, seen: set | None = None) -> list[type]:
    """Classes a schema's $defs can come from: models, enums, dataclasses, TypedDicts reached."""
    seen = seen if seen is not None else set()
    out: list[type] = []

    def visit(tp) -> None:
        if isinstance(tp, type) and tp not in seen and tp.__module__ != "builtins":
            seen.add(tp)
            if (
                issubclass(tp, enum.Enum)
                or dataclasses.is_dataclass(tp)
                or hasattr(tp, "model_fields")
                or typing.is_typeddict(tp)
            ):
                out.append(tp)
                for annotation in _annotations(tp):
                    visit(annotation)
            return
        for arg in typing.get_args(tp):
            visit(arg)

    visit(obj)
    return out


def _annotations(cls) -> list:
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict):
        return [info.annotation for info in fields.values()]
    try:
        return list(typing.get_type_hints(cls).values())
    except Exception:
        return list(getattr(cls, "__annotations__", {}).values())
