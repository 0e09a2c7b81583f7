"""Engine profiles: which options a given PCD engine can return, and what it costs.

Each module here is one engine's documented decision procedure over the tokenizer (no model):
its suffix and boundary, its fallback and budget, its letter alphabet and option limits, its
matching rule. `losses(tokens)` simulates the engine with an oracle model certain of each
option in turn; `extra_passes(tokens)` is the field's sequential cost.
"""

from __future__ import annotations

from auditor.pcd.engines import (
    constrained,
    evals_classify,
    full_sequence,
    gather,
    lm_eval_sequence,
    logprob_parser,
    openjev,
    rlcd_mlx,
)
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
# the evaluation harnesses' scorers (engine-table rows of kind "harness"): each applies to the
# label sets of its own configs (auditor.schema.evalconfigs), never named with --engine
HARNESS_ENGINES: dict[str, EngineProfile] = {
    p.name: p for m in (evals_classify, lm_eval_sequence, logprob_parser) for p in m.profiles()
}
DEFAULT_ENGINE = gather.PROFILE.name


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
