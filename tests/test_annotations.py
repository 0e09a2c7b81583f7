"""Every public function in auditor/ and rules/ annotates its parameters and its return.

Public: a module-level function, or a method of a module-level class, whose name does not start
with `_` (dunders count: `__init__`'s parameters are its class's signature; its return may be
left out, as mypy allows). `self` and `cls` need none. With the annotations in place mypy
(`check_untyped_defs`) checks every caller, so a new public function without them fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def public_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """(qualified name, node, is a method) for every public function and method of a module."""
    found = []
    for node in tree.body:
        if isinstance(node, FUNCTIONS) and _public(node.name):
            found.append((node.name, node, False))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for sub in node.body:
                if isinstance(sub, FUNCTIONS) and _public(sub.name):
                    found.append((f"{node.name}.{sub.name}", sub, True))
    return found


def _is_static(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def missing_annotations(path: Path) -> list[str]:
    """`name(param)` for each unannotated parameter, `name -> ?` for each missing return."""
    out = []
    for name, node, method in public_functions(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if method and params and not _is_static(node):
            params = params[1:]  # self / cls
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        out += [f"{name}({a.arg})" for a in params if a.annotation is None]
        if node.returns is None and node.name != "__init__":
            out.append(f"{name} -> ?")
    return out


def sources() -> list[Path]:
    return sorted(
        p for top in ("auditor", "rules") for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts
    )


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_public_functions_are_annotated():
    offenders = []
    for path in sources():
        offenders += [f"{_relative(path)}: {item}" for item in missing_annotations(path)]
    assert not offenders, "public functions without annotations:\n" + "\n".join(offenders)


def test_the_check_sees_a_missing_annotation(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(a, b: int): ...\n"
        "def _private(x): ...\n"
        "class C:\n"
        "    def __init__(self, n): ...\n"
        "    def m(self, y: int) -> int: ...\n"
        "    @staticmethod\n"
        "    def s(z) -> None: ...\n"
        "    def _hidden(self, w): ...\n"
        "class _Private:\n"
        "    def m(self, v): ...\n",
        encoding="utf-8",
    )
    assert missing_annotations(sample) == ["f(a)", "f -> ?", "C.__init__(n)", "C.s(z)"]
