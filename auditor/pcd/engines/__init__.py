"""Engine profiles: which options a given PCD engine can return, and what it costs.

Each module here is one engine's documented decision procedure over the tokenizer (no model):
its suffix and boundary, its fallback and budget, its letter alphabet and option limits, its
matching rule. `losses(tokens)` simulates the engine with an oracle model certain of each
option in turn; `extra_passes(tokens)` is the field's sequential cost.
"""

from __future__ import annotations

from auditor.pcd.engines import constrained, full_sequence, gather, openjev, rlcd_mlx
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

ENGINES: dict[str, EngineProfile] = {
    m.PROFILE.name: m.PROFILE for m in (gather, rlcd_mlx, openjev, constrained, full_sequence)
}
ENGINES.update((p.name, p) for p in full_sequence.PROFILES)  # the named full-sequence variants
DEFAULT_ENGINE = gather.PROFILE.name


class UnknownEngine(ValueError):
    pass


def get_engine(name: str) -> EngineProfile:
    try:
        return ENGINES[name.strip().lower()]
    except KeyError:
        raise UnknownEngine(f"unknown engine '{name}' (choose from {', '.join(ENGINES)})") from None


__all__ = [
    "BUDGET",
    "DEFAULT_ENGINE",
    "ENGINES",
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
