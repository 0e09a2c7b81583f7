"""The layers of the package, read from every module's imports (ast), and no import cycles.

A module's layer is its folder (`auditor/schema/…` → schema; `rules/…` → rules). Each layer may
import only the layers listed for it below; `click` only in `cli`. Imports inside functions
count as much as those at the top. The one dynamic edge, rule discovery (the registry imports
`auditor.rules` by name), is not an import statement and is not listed.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from support import REPO

BASE = {"base"}
ALLOWED = {
    "base": BASE,
    "schema": BASE | {"schema"},
    "tokenizers": BASE | {"tokenizers"},
    "pcd": BASE | {"schema", "tokenizers", "pcd"},
    "linter": BASE | {"schema", "tokenizers", "pcd", "linter"},
    "rules": BASE | {"linter", "pcd"},
    "decoder": BASE | {"schema", "tokenizers", "pcd", "decoder"},
    # above the linter and the decoder (the brief's "linter / rules, decoder → eval"): the runs
    # that compose both (verify's static verdict, the scope probe's design links) live here
    "eval": BASE | {"schema", "tokenizers", "pcd", "linter", "decoder", "eval"},
    "reporting": BASE | {"schema", "tokenizers", "pcd", "linter", "decoder", "eval", "reporting"},
    # the language and MCP servers: what check uses, below the CLI (which hands them its config
    # reader); never the decoder (no verify, no model), never the CLI or click
    "editor": BASE | {"schema", "tokenizers", "pcd", "linter", "reporting", "editor"},
    "cli": BASE
    | {"schema", "tokenizers", "pcd", "linter", "decoder", "eval", "reporting", "editor", "cli", "api"},
    "api": BASE | {"schema", "tokenizers", "pcd", "linter", "reporting", "api"},
}
CLICK_LAYERS = {"cli"}


def module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "rules":
        parts[0:1] = ["auditor", "rules"]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "auditor":
        raise ValueError(module)
    if len(parts) == 1:
        return "api"
    if parts[1] == "__main__":
        return "cli"
    if parts[1] in ALLOWED and parts[1] not in ("base", "api"):
        return parts[1]
    if parts[1] == "templates":
        return "reporting"
    return "base"  # auditor.errors, auditor.exitcodes, auditor.cachedir


def sources() -> list[Path]:
    return sorted(
        p for top in ("auditor", "rules") for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts
    )


def _is_module(name: str) -> bool:
    parts = name.split(".")
    if parts[0] != "auditor":
        return False
    base = REPO / ("rules" if parts[1:2] == ["rules"] else "auditor")
    rel = parts[2:] if parts[1:2] == ["rules"] else parts[1:]
    target = base.joinpath(*rel) if rel else base
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    """Every module an import statement in this file names (auditor.* and click)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from pkg import sub` imports the module pkg.sub; `from pkg import name`, pkg
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if _is_module(sub) else node.module)
    return {m for m in found if m == "click" or m.startswith("click.") or m.split(".")[0] == "auditor"}


GRAPH = {module_name(p): imports_of(p) for p in sources()}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_follow_the_layers(module):
    layer = layer_of(module)
    wrong = []
    for target in sorted(GRAPH[module]):
        if target.split(".")[0] == "click":
            if layer not in CLICK_LAYERS:
                wrong.append(f"{target} (only cli/ imports click)")
            continue
        target_layer = layer_of(target)
        if target_layer not in ALLOWED[layer]:
            wrong.append(f"{target} ({layer} must not import {target_layer})")
    assert not wrong, f"{module}: " + "; ".join(wrong)


def test_rules_use_only_the_public_api():
    for path in (REPO / "rules").glob("*.py"):
        private = sorted(t for t in imports_of(path) if t not in ("auditor.linter", "auditor.pcd"))
        assert not private, f"{path.name} imports {private}: use auditor.linter / auditor.pcd"


def _resolve(target: str) -> str | None:
    """The module an import names, or its package when it names an attribute."""
    while target and target not in GRAPH:
        target = target.rpartition(".")[0]
    return target or None


def test_no_import_cycles():
    edges = {m: {r for t in targets if (r := _resolve(t)) and r != m} for m, targets in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_layer_map_covers_every_folder():
    folders = {p.name for p in (REPO / "auditor").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= set(ALLOWED) | {"templates"}, folders - set(ALLOWED)


RULE_CODE = re.compile(r"PCD\d{3}")


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_module_outside_rules_names_a_rule_code():
    """Rules declare what they need (auditor.linter.registry.Rule); the engine, suggest, verify and
    the reports read the declarations, so a rule code appears only in rules/ (docstrings and
    comments aside). Adding a rule touches its file and its case file, nothing else."""
    offenders = []
    for path in sorted((REPO / "auditor").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        docstrings = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and RULE_CODE.search(node.value)
            ):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}")
    assert not offenders, "\n".join(offenders)


# What only a run does (auditor.eval's schema_verify, decision_verify, decision_runs): lint for a
# verdict, load or probe requests, answer rows, open a served run's answer source.
RUN_CALLS = {
    "lint",
    "load_requests",
    "probe_decision",
    "verify_run",
    "verify_fields",
    "run_decision_eval",
    "selected_rows",
    "AnswerSource",
    "static_verdict",
    "compare_static_live",
    "design_refs",
}
SERVED_CLI = ("served.py", "verify.py", "gates.py", "eval.py")


@pytest.mark.parametrize("name", SERVED_CLI)
def test_the_served_commands_hold_no_run_logic(name):
    """The verify and eval commands parse, build and print: every call that composes a run is made
    in the eval layer (issue 43), so a change to a run is never a change to the CLI."""
    tree = ast.parse((REPO / "auditor" / "cli" / name).read_text(encoding="utf-8"))
    called = {
        node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
    }
    assert not called & RUN_CALLS, f"auditor/cli/{name} calls {sorted(called & RUN_CALLS)}"


HAND_CUT = re.compile(r"""\[[^\]\n]*:[^\]\n]*\]\s*\+\s*["']…""")


def test_shown_values_are_cut_by_one_helper():
    """A quoted value is cut by auditor.shown.shorten (which says how long the whole was), never by
    a slice with "…" appended in place (issue 43: four hand-made cutters had drifted apart)."""
    cut_by_hand = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HAND_CUT.search(line)
    ]
    assert not cut_by_hand, cut_by_hand
