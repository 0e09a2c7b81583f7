"""What verify measured: per-field scores and verdicts, pass counts, timings."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

RESULT_FORMAT_VERSION = 1


@dataclass
class Ledger:
    """Forward passes actually run and wall time, both per stage."""

    passes: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def count(self, stage: str, passes: int = 1) -> None:
        self.passes[stage] = self.passes.get(stage, 0) + passes

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started


@dataclass
class FieldResult:
    name: str
    kind: str
    options: list
    flagged_codes: list[str]
    prefix: str
    suffix_text: str
    scored_tokens: list[str]
    first_token_probs: list[float]
    first_token_pick: int
    collision_groups: list[list[int]]
    ties_bit_identical: bool | None
    full_sequence_logprob_sum: list[float]
    full_sequence_logprob_mean: list[float]
    full_sequence_probs: list[float]
    full_sequence_pick: int
    full_sequence_pick_mean: int
    letter_viable: bool
    letter_note: str
    letter_probs: list[float] | None
    letter_pick: int | None
    parity_max_abs_diff: float | None
    prompt_cut_ok: bool
    noncanonical_options: list[int]
    verdicts: list[str] = field(default_factory=list)
    coupling_flips: list[dict] = field(default_factory=list)
    constrained_pick: int | None = None  # greedy token-masked decoding over the option trie
    letter_probs_reversed: list[float] | None = None  # legend with A = the last option
    letter_pick_reversed: int | None = None  # as an option index
    tokenization_mismatches: list[str] = field(default_factory=list)  # server vs pcdlint tokenizer
    decides_answer: bool = False  # a flagged flaw changes this field's answer on this context
    decision: str = ""  # why (or why not), one line
    # the pick of each named full-sequence variant (auditor.pcd.engines.full_sequence.VARIANTS),
    # the engine profile of the same name's rule on this model's log-probs
    full_sequence_variants: dict[str, int] = field(default_factory=dict)


@dataclass
class VerifyResult:
    model: str
    tokenizer: str
    device: str
    dtype: str
    prompt_tokens: int
    passes: dict[str, int]
    seconds: dict[str, float]
    fields: list[FieldResult]
    notes: list[str] = field(default_factory=list)
    coupling: list[dict] = field(default_factory=list)
    backend: str = "in-process"
    server: dict = field(default_factory=dict)  # requests, prompts, prompt_tokens, retries, mismatches
    load_seconds: float | None = None
    letter_bias: dict = field(default_factory=dict)  # letter picks per letter, flips under a reversed legend

    @property
    def parity_max_abs_diff(self) -> float | None:
        diffs = [f.parity_max_abs_diff for f in self.fields if f.parity_max_abs_diff is not None]
        return max(diffs) if diffs else None

    @property
    def deciding(self) -> list[FieldResult]:
        return [f for f in self.fields if f.decides_answer]

    @property
    def harmless(self) -> list[FieldResult]:
        return [f for f in self.fields if f.flagged_codes and not f.decides_answer]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["version"] = RESULT_FORMAT_VERSION
        data["total_passes"] = sum(self.passes.values())
        data["parity_max_abs_diff"] = self.parity_max_abs_diff
        data["verdict"] = {
            "deciding": [f.name for f in self.deciding],
            "harmless": [f.name for f in self.harmless],
        }
        return data
