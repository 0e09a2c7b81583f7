"""`gather` — the RLCD CUDA/torch path (the default profile).

Procedure, as RLCD's `StructuredSchema.compile_parallel_metadata` builds it (read in the public
port stephanj/parallelConstraintDecoding, python/core/schema.py; line numbers of commit
0e0208f):

- schema.py:169-170: a string field's common prefix (`os.path.commonprefix` of the raw
  choices) is hoisted into the suffix `  "<field>": "<prefix>`;
- schema.py:172-175 (the *bare-remainder* clause): each option's candidate is the first token
  of its remainder **encoded alone** (`encode(rem)[0]`; an empty remainder: the quote's
  token), not of `rem + '"'`: so `"!"` and `"! urgent"` after another option share `!` (the
  remainder alone) although `!"` is a token of its own;
- schema.py:161-166: a boolean is scored after `  "<field>": ` (with the space) as
  `encode("true")[0]` / `encode("false")[0]`;
- schema.py:181: a field collides when two candidates are equal; one batched pass gathers
  every candidate and argmax (engine_mlx.py:369) breaks ties to the lowest index. No fallback,
  no budget: a tie is simply wrong.
- schema.py:21-22: RLCD refuses a field of more than 255 choices.

The plan's `sequences` are what a model certain of an option writes after the suffix
(`encode(rest + '"')`, the canonical cut; rlcd_mlx's greedy fallback reads them); its
`candidates` are the bare-remainder first tokens above. RLCD works on raw strings; pcdlint's
remainders are JSON text, the same unless an option holds a quote, a backslash or a control
character, where the candidates and the prefix are worked out on the raw choices. Fields of
other literals (which RLCD does not accept) are scored as pcdlint scores them (their literal
after `":`, cut where the canonical tokenization cuts).
"""

from __future__ import annotations

import os

from auditor.pcd.engines.base import TIE, EngineProfile, FieldPlan, Loss, is_boolean, lost, tie_winner
from auditor.pcd.runcache import RunCache
from auditor.pcd.scoring import STRING_CLOSE, FieldLike, SiteTokens, field_head, json_text
from auditor.tokenizers.loader import LoadedTokenizer

RLCD_MAX_OPTIONS = 255


def rlcd_plan(tokens: SiteTokens) -> FieldPlan:
    """The suffix and candidate sequences RLCD compiles for one field."""
    site, tokenizer = tokens.site, tokens.tokenizer
    options = site.options
    refused = (
        f"RLCD refuses fields with more than {RLCD_MAX_OPTIONS} options ({len(options)} here)"
        if len(options) > RLCD_MAX_OPTIONS
        else None
    )
    if is_boolean(tokens):
        texts = tuple("true" if o else "false" for o in options)
        sequences = tuple(tuple(ids) for ids in tokenizer.ids_many(list(texts)))
        return FieldPlan(field_head(site.name, tokens.array_depth), sequences, texts, refused)
    if not tokens.cache.split(site).literals:  # (all strings)
        # what the model writes: each option's `remainder + '"'` after the hoisted prefix; what
        # RLCD gathers: the first token of each remainder alone
        raw = rlcd_raw(tokens)
        return FieldPlan(
            field_head(site.name, tokens.array_depth) + '"' + raw.prefix,
            raw.sequences,
            tuple(tokens.cache.split(site).texts),
            refused,
            candidates=raw.candidates,
        )
    sequences = tuple(o.ids + ((tokens.close_id,) if o.is_string else ()) for o in tokens.options)
    return FieldPlan(tokens.literal_suffix, sequences, tuple(o.text for o in tokens.options), refused)


class RawField:
    """An all-string field as RLCD compiles it from the raw choices (see the module doc)."""

    __slots__ = ("candidates", "choices", "prefix", "sequences")

    def __init__(
        self,
        prefix: str,
        choices: tuple[str, ...],
        candidates: tuple[int, ...],
        sequences: tuple[tuple[int, ...], ...],
    ):
        self.prefix, self.choices, self.candidates, self.sequences = prefix, choices, candidates, sequences


def rlcd_raw(tokens: SiteTokens) -> RawField:
    """The raw prefix, choices, bare-remainder candidates and written sequences of an
    all-string field (cached per site tokens). Plain options (no JSON escape): SiteTokens'
    own prefix, scored ids (the remainder alone) and closed sequences."""
    key = ("rlcd-raw",)
    cached = tokens.memo.get(key)
    if cached is not None:
        return cached
    options = tuple(tokens.site.options)
    texts = tokens.cache.split(tokens.site).texts
    # (one option: RLCD hoists all of it, pcdlint nothing; no collision either way)
    if options == tuple(texts):
        raw = RawField(
            tokens.prefix,
            options,
            tuple(tokens.scored_tokens),
            tuple(tokens.closed_sequences),  # type: ignore[arg-type]  # (all strings)
        )
    else:  # an option JSON escapes: the prefix and remainders of the raw choices
        tokenizer = tokens.tokenizer
        prefix = os.path.commonprefix(list(options))
        rests = [o[len(prefix) :] for o in options]
        candidates = tuple(ids[0] if ids else tokens.close_id for ids in tokenizer.ids_many(rests))
        written = tokenizer.ids_many([json_text(r) + STRING_CLOSE for r in rests])
        raw = RawField(prefix, options, candidates, tuple(tuple(ids) for ids in written))
    tokens.memo[key] = raw
    return raw


def rlcd_plan_texts(site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None) -> list[str]:
    """What rlcd_plan encodes for a site beyond SiteTokens' own texts (not the `rest + '"'`
    that SiteTokens.closed_ids joins from the remainder's ids); `cache`: the run's."""
    cache = cache if cache is not None else RunCache()
    options = site.options
    if len(options) == 2 and all(isinstance(o, bool) for o in options) and options[0] != options[1]:
        return ["true", "false"]
    if not cache.split(site).literals:  # (all strings)
        closes = cache.join_flags(site, tokenizer)[0]
        if all(closes):  # (most fields: every remainder joins its quote, told in one pass)
            return []
        return [r + '"' for r, close in zip(cache.split(site).remainders, closes) if not close]
    return []


def all_strings(options: list) -> bool:
    """Whether every option is a string (one pass over their types where they are all `str`)."""
    return set(map(type, options)) <= {str} or all(isinstance(o, str) for o in options)


QUICK_CHUNK = 64  # options whose joins are read at once by rlcd_first_token_collides


def rlcd_first_token_collides(
    site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
) -> bool | None:
    """Whether two options of an all-string field share RLCD's candidate (the first token of
    the remainder alone, the quote's for an empty one), option by option, stopping at the
    first repeat: a renaming that collides in its first options is refused without
    tokenizing the rest. None for other fields, and for fields whose options JSON escape.
    `cache`: the run's RunCache, where the site's split is kept."""
    options = site.options
    if not options or not all_strings(options):
        return None
    split = (cache if cache is not None else RunCache()).split(site)
    texts, rests = split.texts, split.remainders
    if any(a is not b and a != b for a, b in zip(options, texts)):
        return None  # (rlcd_raw's raw prefix: build the plan)
    seen: set[int] = set()
    close = tokenizer.ids(STRING_CLOSE)[0]
    for start in range(0, len(rests), QUICK_CHUNK):
        chunk = rests[start : start + QUICK_CHUNK]
        for ids in tokenizer.ids_many(chunk):
            first = ids[0] if ids else close
            if first in seen:
                return True
            seen.add(first)
    return False


class RlcdPlanned(EngineProfile):
    """A profile that plans a field as RLCD's torch path does (gather, and the MLX fallback)."""

    def plan(self, tokens: SiteTokens) -> FieldPlan:
        return rlcd_plan(tokens)

    def quick_collision(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> bool | None:
        return rlcd_first_token_collides(site, tokenizer, cache)

    def plan_texts(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> list[str]:
        return rlcd_plan_texts(site, tokenizer, cache)


class Gather(RlcdPlanned):
    def losses(self, tokens: SiteTokens) -> list[Loss]:
        """EngineProfile.losses, asking `pick` only of the options that share a first token
        and are not its lowest index (the others are returned: tie_winner is themselves)."""
        plan = self.field_plan(tokens)
        key = ("losses", self.name)
        if plan.refused is not None or type(self).pick is not Gather.pick or key in tokens.memo:
            return super().losses(tokens)
        options = tokens.site.options
        out = []
        tied = plan.buckets.values() if plan.has_collision else ()
        for k in sorted(k for bucket in tied if len(bucket) > 1 for k in bucket[1:]):
            returned, reason, detail = self.pick(plan, tokens, k)
            out.append(lost(k, options[k], returned, options[returned], reason, detail))
        tokens.memo[key] = out
        return out

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        winner = tie_winner(plan, k)
        piece = tokens.tokenizer.piece(plan.first_tokens[k])
        return (
            winner,
            TIE,
            f"shares first token {piece!r} with {tokens.site.options[winner]!r}, which wins the tie",
        )


PROFILE = Gather(
    name="gather",
    summary="RLCD torch path: one batched pass, first-token gather, ties go to the lowest index",
    limits={"max_options": RLCD_MAX_OPTIONS, "fallback": None},
)


def profiles() -> list[EngineProfile]:
    """The profiles this module gives the engine table's rows (`scorer = "gather"`)."""
    return [PROFILE]
