"""No hand-kept list of rendering families or PCD profile modules (ast): the engine table's
`prompt` column selects a decision engine's renderer (auditor.pcd.readouts) and its `scorer`
column a PCD or harness profile's module (auditor.pcd.engines); the registries are the only
places that turn those values into modules, and no other module lists them or compares a row's
`prompt` with a family's name."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import auditor.pcd.engines as engines_package
import auditor.pcd.readouts as readouts_package
from auditor.pcd.engines.table import ENGINE_ROWS, decision_engines
from support import REPO

FAMILIES = {row.prompt for row in decision_engines()}
SCORERS = {row.scorer for row in ENGINE_ROWS.values() if row.kind in ("pcd", "harness")}
READOUTS_DIR = REPO / "auditor" / "pcd" / "readouts"


def sources() -> list[Path]:
    return sorted(
        p
        for top in ("auditor", "rules", "scripts")
        for p in (REPO / top).rglob("*.py")
        if "__pycache__" not in p.parts
    )


def _members(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return [k for k in node.keys if k is not None]
    return []


def _strings(items: list[ast.expr]) -> set[str]:
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def _names(items: list[ast.expr]) -> set[str]:
    return {
        i.id if isinstance(i, ast.Name) else i.attr for i in items if isinstance(i, (ast.Name, ast.Attribute))
    }


def hand_kept(path: Path) -> list[str]:
    """Where a module lists two or more families or profile modules, or compares `.prompt`
    with a family's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    found = []
    for node in ast.walk(tree):
        members = _members(node)
        families = _strings(members) & FAMILIES
        if len(families) >= 2:
            found.append(f"{where}:{node.lineno}: lists the families {sorted(families)}")
        modules = _names(members) & SCORERS
        if len(modules) >= 2:
            found.append(f"{where}:{node.lineno}: lists the profile modules {sorted(modules)}")
        if isinstance(node, ast.ImportFrom) and node.module == engines_package.__name__:
            imported = {alias.name for alias in node.names} & SCORERS
            if len(imported) >= 2:
                found.append(f"{where}:{node.lineno}: imports the profile modules {sorted(imported)}")
        if isinstance(node, ast.Compare) and not path.is_relative_to(READOUTS_DIR):
            sides = [node.left, *node.comparators]
            reads_prompt = any(isinstance(s, ast.Attribute) and s.attr == "prompt" for s in sides)
            named = {v for s in sides for v in _strings([s, *_members(s)])} & FAMILIES
            if reads_prompt and named:
                found.append(f"{where}:{node.lineno}: compares a row's prompt with {sorted(named)}")
    return found


def test_no_hand_kept_list_of_families_or_profile_modules():
    assert len(FAMILIES) >= 5 and len(SCORERS) >= 8
    found = [line for path in sources() for line in hand_kept(path)]
    assert found == []


def test_the_check_finds_what_it_looks_for(tmp_path):
    """The ast check itself: each kind of hand-kept list, written into a module, is found."""
    family, other = sorted(FAMILIES)[:2]
    one, two = sorted(SCORERS)[:2]
    path = tmp_path / "probe.py"
    path.write_text(
        f"CHAT = ({family!r}, {other!r})\n"
        f"from auditor.pcd.engines import {one}, {two}\n"
        f"ENGINES = [{one}, {two}]\n"
        f"def chat(row): return row.prompt == {family!r}\n",
        encoding="utf-8",
    )
    found = hand_kept(path)
    assert len(found) == 4, found
    for says in ("lists the families", "imports the profile", "lists the profile", "compares"):
        assert any(says in line for line in found), found


def test_every_family_module_renders_a_row_and_every_row_has_one():
    modules = {m.name for m in pkgutil.iter_modules(readouts_package.__path__)} - {"base"}
    assert modules == {family.replace("-", "_") for family in FAMILIES}
    assert set(readouts_package.READOUTS) == FAMILIES


def test_every_profile_module_is_a_rows_scorer():
    with_profiles = {
        m.name
        for m in pkgutil.iter_modules(engines_package.__path__)
        if "def profiles(" in (Path(engines_package.__path__[0]) / f"{m.name}.py").read_text(encoding="utf-8")
    }
    assert with_profiles == SCORERS
    assert set(engines_package.ENGINES) == {r.name for r in ENGINE_ROWS.values() if r.kind == "pcd"}
    assert set(engines_package.HARNESS_ENGINES) == {
        r.name for r in ENGINE_ROWS.values() if r.kind == "harness"
    }
