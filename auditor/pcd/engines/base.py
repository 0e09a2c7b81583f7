"""What every engine profile shares: a field plan, the oracle simulation, losses, passes.

An engine profile is the engine's documented decision procedure over a tokenizer, with no
model. `plan` says how the engine sees one field: the suffix it scores after, and for every
option the token sequence the engine reads (or, for constrained decoding, walks). `pick`
simulates the engine with an *oracle model*: one certain of option k, which writes the tokens
of option k's sequence. Options the engine never returns even then are its `losses`.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import NamedTuple

from auditor.lazy import cached_property
from auditor.pcd.buckets import first_token_buckets
from auditor.pcd.runcache import RunCache
from auditor.pcd.scoring import FieldLike, SiteTokens, json_text, rendered  # noqa: F401  (re-exported)
from auditor.tokenizers.loader import LoadedTokenizer

LETTERS_A_Z = string.ascii_uppercase

# Why an engine loses an option. Only "tie" is a first-token tie (PCD001); the others are
# PCD013's business.
TIE = "tie"
PREFIX_MATCH = "prefix-match"
BUDGET = "budget"
OPTION_CAP = "option-cap"
SEQUENCE_PREFIX = "sequence-prefix"
# the clauses of RLCD-MLX's greedy fallback (rlcd_mlx.py) and openjev's validation (openjev.py)
STOP_CHAR = "stop-char"
STRIP = "strip"
DIGIT_FALLBACK = "digit-fallback"
FIRST_CHOICE = "first-choice-fallback"
DUPLICATE_ID = "duplicate-id"
NON_STRING_ID = "non-string-id"
# the evaluation harnesses' scorers (evals_classify.py, logprob_parser.py)
SUFFIX_MATCH = "suffix-match"
NO_MATCH = "no-match"
PUNCTUATION = "punctuation"
NOT_ONE_TOKEN = "not-one-token"
# reasons that refuse a whole field
REFUSALS = frozenset({OPTION_CAP, DUPLICATE_ID, NON_STRING_ID, PUNCTUATION})


@dataclass(frozen=True)
class FieldPlan:
    """One field as an engine sees it under one tokenizer."""

    suffix: str  # the text the engine scores after
    sequences: tuple[tuple[int, ...], ...]  # per option, in schema order
    texts: tuple[str, ...]  # per option: what the sequence spells (for prefix matching)
    refused: str | None = None  # why the engine refuses the whole field
    letters: tuple[str, ...] = ()  # letter slots, for engines that score letters
    # per option, the first token the engine gathers where it is not the sequence's first
    # (RLCD: the remainder encoded alone, not with the closing quote); None: the sequences'
    candidates: tuple[int, ...] | None = None
    refused_reason: str = "option-cap"  # the Loss reason of a refused field (REFUSALS)
    # the text an evaluation harness's scorer puts before each label (lm-eval's
    # target_delimiter); None: a JSON field's hoisted prefix (SiteTokens.prefix)
    scored_prefix: str | None = None

    @cached_property
    def first_tokens(self) -> list[int]:
        if self.candidates is not None:
            return list(self.candidates)
        return [s[0] if s else -1 for s in self.sequences]

    @cached_property
    def buckets(self) -> dict[int, list[int]]:
        return first_token_buckets(self.first_tokens)

    @cached_property
    def first_with(self) -> dict[tuple[int, ...], int]:
        """sequence → the lowest index of an option with exactly that sequence."""
        out: dict[tuple[int, ...], int] = {}
        for index, sequence in enumerate(self.sequences):
            out.setdefault(sequence, index)
        return out

    @cached_property
    def has_collision(self) -> bool:
        """Whether two options share a first token (without building the buckets)."""
        first = self.first_tokens
        return len(set(first)) < len(first)


class Loss(NamedTuple):  # one per lost option (a refused 10,000-option field: 10,000), so a
    # tuple built without its Python constructor (`tuple.__new__`, see `lost`), like ScoredOption
    """Option `index` is never returned: with the oracle certain of it, the engine returns
    option `returned` (None: nothing) for `reason`."""

    index: int  # type: ignore[assignment]  # (shadows tuple.index, which nothing calls)
    option: object
    returned: int | None
    returned_option: object
    reason: str
    detail: str

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "option": self.option,
            "returned": self.returned_option,
            "returned_index": self.returned,
            "reason": self.reason,
            "detail": self.detail,
        }

    def phrase(self) -> str:
        return f"{self.option!r} is never returned ({self.detail})"


@dataclass
class EngineProfile:
    name: str
    summary: str
    letters: str = LETTERS_A_Z  # the letter alphabet a remap to slots may use
    first_token: bool = True  # whether the engine decides by scoring a first token
    limits: dict = field(default_factory=dict)  # documented option limits, for describe()

    # -- what each profile defines

    def plan(self, tokens: SiteTokens) -> FieldPlan:
        raise NotImplementedError

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        """(returned index, reason, detail) when the oracle is certain of option k."""
        raise NotImplementedError

    def extra_passes(self, tokens: SiteTokens) -> int:
        """Sequential forward passes this field needs after the batched suffix pass."""
        return 0

    def quick_collision(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> bool | None:
        """`field_plan(SiteTokens(site, tokenizer)).has_collision` where the profile can tell it
        without building the plan (stopping at the first repeated first token); None: build it.
        `cache`: the run's RunCache, where the site's split is kept."""
        return None

    def plan_texts(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> list[str]:
        """The texts `plan` encodes beyond SiteTokens' own under this tokenizer, so the engine
        can encode them in its one batch per run (a text left out is encoded on demand: slower,
        never different); `cache`: the run's RunCache, where the site's split and join flags
        are kept."""
        return []

    # -- derived, shared

    def field_plan(self, tokens: SiteTokens) -> FieldPlan:
        key = ("plan", self.name)
        if key not in tokens.memo:
            tokens.memo[key] = self.plan(tokens)
        return tokens.memo[key]

    def losses(self, tokens: SiteTokens) -> list[Loss]:
        """Every option the engine never returns, in schema order (cached per site tokens)."""
        key = ("losses", self.name)
        if key in tokens.memo:
            return tokens.memo[key]
        plan = self.field_plan(tokens)
        options = tokens.site.options
        if plan.refused is not None:  # every option, for one reason
            refused, why, new = (
                plan.refused,
                plan.refused_reason,
                tuple.__new__,
            )  # (lost(), no call per option)
            out = [new(Loss, (k, option, None, None, why, refused)) for k, option in enumerate(options)]
        else:
            out = []
            for k, option in enumerate(options):
                returned, reason, detail = self.pick(plan, tokens, k)
                if returned != k:
                    out.append(
                        lost(
                            k,
                            option,
                            returned,
                            None if returned is None else options[returned],
                            reason,
                            detail,
                        )
                    )
        tokens.memo[key] = out
        return out

    def describe(self) -> dict:
        return {
            "name": self.name,
            "summary": self.summary,
            "letters": self.letters,
            "first_token": self.first_token,
            **self.limits,
        }


def lost(
    index: int, option: object, returned: int | None, returned_option: object, reason: str, detail: str
) -> Loss:
    """Loss(...) without the NamedTuple's Python constructor (a third of its time)."""
    return tuple.__new__(Loss, (index, option, returned, returned_option, reason, detail))


def is_boolean(tokens: SiteTokens) -> bool:
    options = tokens.site.options
    return len(options) == 2 and all(isinstance(o, bool) for o in options) and options[0] != options[1]


def tie_winner(plan: FieldPlan, k: int) -> int:
    """Gather + argmax: the lowest index among the options sharing option k's first token."""
    return plan.buckets[plan.first_tokens[k]][0]
