"""Full-sequence scoring, one named variant per real engine (`sum`, `sum-close`, `mean`,
`byte-norm`; `full-sequence` is `sum` under its earlier name, unchanged output).

Every variant teacher-forces each option's tokens in one more batched pass and takes the
argmax of a per-option score, ties to the lowest index (`np.argmax`). They differ in what is
scored and how the log-probs are folded:

- `sum` — lm-evaluation-harness `acc` (lm_eval/api/task.py, `ConfigurableTask.process_results`,
  multiple_choice: `np.argmax(lls)`): the summed log-prob of the option's own tokens
  (`encode(option)` after `  "<field>": "`), no terminator: a choice is a free continuation.
- `sum-close` — what `pcdlint verify` computes (auditor/decoder/prompt.py `plan_field`: each
  option's remainder after the hoisted prefix, encoded alone, then the closing quote's token):
  the closing quote ends the option, so a shorter option no longer outscores its extensions.
- `mean` — SGLang `select`'s default `token_length_normalized` (sgl-project/sglang,
  python/sglang/lang/choices.py, and docs "Choices Methods in SGLang": "the option with the
  highest average logprob across all of its tokens"; `np.argmax`, ties to the first listed).
- `byte-norm` — lm-eval `acc_norm` (same function: `np.argmax(lls / completion_len)` with
  `completion_len = len(choice)`): the sum divided by the continuation's length. lm-eval counts
  characters of the choice string; we divide by the option text's length in characters as it
  does (equal to bytes for ASCII options).

Simulated with the oracle certain of option k, which gives each of option k's tokens
probability 1 − ε, the same ε for every token (a softmax never gives exactly 1) and writes the
closing quote after them: every other option scores −∞ at its first token that differs, so the
only rivals are the options whose sequence is a token prefix of option k's (`DELIVER` for
`DELIVER_WITH_WARNING` without the quote). A rival of n tokens scores n·log(1 − ε) under `sum`
(the shortest wins), log(1 − ε) under `mean` (a tie: the first listed wins), n·log(1 − ε)/chars
under `byte-norm` (the fewest tokens per character wins; ties to the first listed). Under
`sum-close` a rival's closing quote would have to stand where option k's text goes on: only an
option with the very same tokens (a duplicate) takes its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from auditor.pcd.engines.base import SEQUENCE_PREFIX, EngineProfile, FieldLike, FieldPlan
from auditor.pcd.scoring import RunCache, SiteTokens, field_head, json_text
from auditor.tokenizers import LoadedTokenizer

if TYPE_CHECKING:
    from fractions import Fraction


@dataclass(frozen=True)
class Variant:
    name: str
    close: bool  # whether the closing quote's token is scored (and the prefix hoisted, as verify does)
    fold: str  # "sum" | "mean" | "chars"
    engine: str  # the real engine it models
    source: str  # where its rule was read

    def score(self, logprobs: list[float], text: str) -> float:
        """The option's score from its tokens' log-probs (the quote's included iff `close`)."""
        total = sum(logprobs)
        if self.fold == "mean":
            return total / len(logprobs) if logprobs else 0.0
        if self.fold == "chars":
            return total / len(text) if text else 0.0
        return total

    def oracle_key(self, tokens: int, text: str) -> Fraction:
        """Under the oracle, a rival of `tokens` tokens scores −(this)·|log(1 − ε)|: the lowest wins."""
        from fractions import Fraction  # (only where a full-sequence engine scores: not at start-up)

        if self.fold == "mean":
            return Fraction(1 if tokens else 0)
        if self.fold == "chars":
            return Fraction(tokens, len(text)) if text else Fraction(0)
        return Fraction(tokens)


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "sum",
            False,
            "sum",
            "lm-evaluation-harness acc",
            "lm_eval/api/task.py process_results (multiple_choice)",
        ),
        Variant(
            "sum-close",
            True,
            "sum",
            "pcdlint verify's full-sequence scorer",
            "auditor/decoder/prompt.py plan_field",
        ),
        Variant(
            "mean",
            False,
            "mean",
            "SGLang select (token_length_normalized, the default)",
            "sgl-project/sglang python/sglang/lang/choices.py; docs/en/choices_methods.md",
        ),
        Variant(
            "byte-norm",
            False,
            "chars",
            "lm-evaluation-harness acc_norm",
            "lm_eval/api/task.py process_results (completion_len = len(choice))",
        ),
    )
}


def live_pick(variant: str, sequence_logprobs: list[list[float]], texts: list[str]) -> int:
    """The option a variant picks from verify's teacher-forced log-probs: per option, its
    remainder's tokens then the closing quote's (`sum-close` scores them all, the others all but
    the quote), `texts` the remainders. Ties go to the lowest index. (verify hoists the common
    prefix, so `mean` and `byte-norm` fold the remainder here, not the whole option.)"""
    rule = VARIANTS[variant]
    scores = [
        rule.score(values if rule.close else values[:-1], text)
        for values, text in zip(sequence_logprobs, texts)
    ]
    return max(range(len(scores)), key=lambda i: (scores[i], -i))


def sequence_plan(tokens: SiteTokens, close: bool = False) -> FieldPlan:
    options = tokens.site.options
    strings = all(isinstance(o, str) for o in options)
    if close:  # verify's: the remainder alone after the hoisted prefix, then the closing token
        sequences = tuple(tokens.sequence(o) for o in tokens.options)
        texts = tuple(o.remainder if o.is_string else o.text for o in tokens.options)
        suffix = tokens.suffix if strings else tokens.literal_suffix
        return FieldPlan(suffix, sequences, texts)
    texts = tuple(json_text(o) for o in options)
    sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many(list(texts)))
    return FieldPlan(
        field_head(tokens.site.name, tokens.array_depth) + ('"' if strings else ""), sequences, texts
    )


class FullSequence(EngineProfile):
    variant: Variant

    def plan(self, tokens: SiteTokens) -> FieldPlan:
        return sequence_plan(tokens, self.variant.close)

    def plan_texts(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> list[str]:
        return [] if self.variant.close else [json_text(o) for o in site.options]

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        wanted = plan.sequences[k]
        # the rivals: options whose tokens are a prefix of option k's (option k among them);
        # the lowest oracle key wins, ties to the lowest index
        first_with, key = plan.first_with, self.variant.oracle_key
        rivals = [first_with[wanted[:n]] for n in range(len(wanted) + 1) if wanted[:n] in first_with]
        best = min(rivals, key=lambda i: (key(len(plan.sequences[i]), plan.texts[i]), i))
        if best == k:
            return k, "", ""
        if plan.sequences[best] == wanted and self.variant.name != "sum":
            return best, SEQUENCE_PREFIX, f"its tokens are {plan.texts[best]!r}'s, listed first"
        why = {
            "sum": "whose shorter sum of log-probs always scores higher",
            "mean": "whose mean log-prob ties with it and is listed first",
            "chars": "which has fewer tokens per character, so a higher normalised score",
        }[self.variant.fold]
        return best, SEQUENCE_PREFIX, f"its tokens start with all of {plan.texts[best]!r}'s, {why}"

    def extra_passes(self, tokens: SiteTokens) -> int:
        plan = self.field_plan(tokens)
        return 1 if any(len(s) > 1 for s in plan.sequences) else 0


def _profile(name: str, variant: str, summary: str) -> FullSequence:
    limits = {"fallback": "one teacher-forced batched pass"}
    if name == variant:  # (`full-sequence` describes itself as it did)
        limits["variant"] = variant
    profile = FullSequence(name=name, summary=summary, first_token=False, limits=limits)
    profile.variant = VARIANTS[variant]
    return profile


# `full-sequence` stays what it was (the `sum` variant under its earlier name)
PROFILE = _profile(
    "full-sequence",
    "sum",
    "full-sequence scoring: teacher-forced sum of log-probs of every option, one more batched pass",
)
PROFILES = [
    _profile("sum", "sum", "lm-eval acc: summed log-prob of each option, no terminator; ties → first"),
    _profile(
        "sum-close", "sum-close", "pcdlint verify: summed log-prob of each remainder and its closing quote"
    ),
    _profile(
        "mean", "mean", "SGLang select default: mean token log-prob of each option; ties → first listed"
    ),
    _profile(
        "byte-norm", "byte-norm", "lm-eval acc_norm: summed log-prob / the option's length; ties → first"
    ),
]


def profiles() -> list[FullSequence]:
    """The profiles this module gives the engine table's rows (`scorer = "full_sequence"`)."""
    return [PROFILE, *PROFILES]
