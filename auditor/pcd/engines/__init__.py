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

from dataclasses import dataclass
from functools import lru_cache
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
from auditor.pcd.engines.table import (
    DEFAULT_PCD_ENGINE,
    ENGINE_ROWS,
    EngineRow,
    EngineTableError,
    check_engine_name,
    default_decision_row,
    row_module,
)


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


@dataclass(frozen=True)
class EngineSelection:
    """The engines a run was asked for, resolved once from their names: the PCD profiles a
    schema's fields are checked under and the decision engines a decision request's questions
    are. `named` are the names as given (checked, in order, without repeats)."""

    named: tuple[str, ...]
    named_profiles: tuple[EngineProfile, ...]  # the named engines that score option names
    decision_rows: tuple[EngineRow, ...]  # the named decision engines (the default's when none)
    default_decisions: (
        bool  # only the default decision engine (named or not): the note naming --engine is due
    )

    @property
    def profiles(self) -> tuple[EngineProfile, ...]:
        """The PCD profiles a schema's fields are checked under (gather when none is named)."""
        return self.named_profiles or (get_engine(DEFAULT_ENGINE),)

    @property
    def names_decisions(self) -> bool:
        """Whether a decision request's option names are scored (a named engine scores names)."""
        return bool(self.named_profiles)


@lru_cache(maxsize=64)
def select_engines(names: tuple[str, ...] = ()) -> EngineSelection:
    """The selection `names` make (each checked by `check_engine_name`; UnknownEngineName for
    one the table does not let a user name)."""
    rows = [check_engine_name(name) for name in names]
    rows = list({row.name: row for row in rows}.values())
    decisions = tuple(row for row in rows if not row.scores_option_names)
    return EngineSelection(
        named=tuple(row.name for row in rows),
        named_profiles=tuple(get_engine(row.name) for row in rows if row.scores_option_names),
        decision_rows=decisions or (default_decision_row(),),
        default_decisions=all(row.default for row in decisions),
    )


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
    "EngineSelection",
    "FieldPlan",
    "Loss",
    "UnknownEngine",
    "get_engine",
    "select_engines",
]
