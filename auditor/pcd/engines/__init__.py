"""Engine profiles: which options a given PCD engine can return, and what it costs.

Each module here is one engine's documented decision procedure over the tokenizer (no model):
its suffix and boundary, its fallback and budget, its letter alphabet and option limits, its
matching rule. `losses(tokens)` simulates the engine with an oracle model certain of each
option in turn; `extra_passes(tokens)` is the field's sequential cost.

Which modules are profiles is the engine table's: every `pcd` and `harness` row names its module
in `scorer`, and that module's `profiles()` gives the row's profile by name. Nothing here lists
them; a row whose module or profile is missing fails at import, loudly.
"""

from __future__ import annotations

from typing import Any

from auditor.pcd.engines.base import (
    BUDGET,
    OPTION_CAP,
    PREFIX_MATCH,
    REFUSALS,
    SEQUENCE_PREFIX,
    TIE,
    EngineProfile,
    FieldPlan,
    Loss,
)
from auditor.pcd.engines.table import DEFAULT_PCD_ENGINE, ENGINE_ROWS, EngineTableError, row_module


def _profiles(kind: str) -> dict[str, EngineProfile]:
    """The profile of every row of `kind`, by name, in table order, from its `scorer` module."""
    provided: dict[str, dict[str, EngineProfile]] = {}
    out: dict[str, EngineProfile] = {}
    for row in ENGINE_ROWS.values():
        if row.kind != kind:
            continue
        if row.scorer not in provided:
            module: Any = row_module(__name__, row, "scorer")
            provided[row.scorer] = {p.name: p for p in module.profiles()}
        if row.name not in provided[row.scorer]:
            raise EngineTableError(f"engines.toml: {row.scorer}.profiles() gives no profile {row.name!r}")
        out[row.name] = provided[row.scorer][row.name]
    return out


ENGINES: dict[str, EngineProfile] = _profiles("pcd")
# the evaluation harnesses' scorers (engine-table rows of kind "harness"): each applies to the
# label sets of its own configs (auditor.schema.evalconfigs), never named with --engine
HARNESS_ENGINES: dict[str, EngineProfile] = _profiles("harness")
DEFAULT_ENGINE = DEFAULT_PCD_ENGINE


class UnknownEngine(ValueError):
    pass


def get_engine(name: str) -> EngineProfile:
    key = name.strip().lower()
    try:
        return ENGINES[key] if key in ENGINES else HARNESS_ENGINES[key]
    except KeyError:
        raise UnknownEngine(f"unknown engine '{name}' (choose from {', '.join(ENGINES)})") from None


__all__ = [
    "BUDGET",
    "DEFAULT_ENGINE",
    "ENGINES",
    "HARNESS_ENGINES",
    "OPTION_CAP",
    "PREFIX_MATCH",
    "REFUSALS",
    "SEQUENCE_PREFIX",
    "TIE",
    "EngineProfile",
    "FieldPlan",
    "Loss",
    "UnknownEngine",
    "get_engine",
]
