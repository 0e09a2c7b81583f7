"""`gather` — the RLCD CUDA/torch path (the default profile).

Procedure (RLCD's documented `compile_parallel_metadata` + gather): a string field's common
prefix (`os.path.commonprefix`) is hoisted into the suffix `  "<field>": "<prefix>`, and each
option's candidate sequence is its remainder encoded together with the closing quote
(`encode(rest + '"')`). A boolean is scored after `  "<field>": ` (with the space) as
`encode("true")` / `encode("false")`. One batched pass gathers every option's first candidate
token; argmax breaks ties to the lowest index. No fallback, no budget: a tie is simply wrong.
Limits: 1..255 options (RLCD refuses more). Fields of other literals are scored as pcdlint
scores them (their literal after `":`, cut where the canonical tokenization cuts).
"""

from __future__ import annotations

from auditor.pcd.engines.base import TIE, EngineProfile, FieldPlan, is_boolean, lost, tie_winner
from auditor.pcd.scoring import (
    FieldLike,
    SiteTokens,
    closed_remainder_ids,
    field_head,
    join_flags,
    split_options,
)
from auditor.tokenizers.loader import LoadedTokenizer

RLCD_MAX_OPTIONS = 255


def rlcd_plan(tokens: SiteTokens) -> FieldPlan:
    """The suffix and candidate sequences RLCD compiles for one field."""
    site, tokenizer = tokens.site, tokens.tokenizer
    options = site.options
    refused = (f"RLCD refuses fields with more than {RLCD_MAX_OPTIONS} options ({len(options)} here)"
               if len(options) > RLCD_MAX_OPTIONS else None)
    if is_boolean(tokens):
        texts = tuple("true" if o else "false" for o in options)
        sequences = tuple(tuple(ids) for ids in tokenizer.ids_many(list(texts)))
        return FieldPlan(field_head(site.name, tokens.array_depth), sequences, texts, refused)
    if all_strings(options):
        # each option's `remainder + '"'` after the hoisted prefix
        sequences = tuple(tokens.closed_sequences)  # type: ignore[arg-type]  # (all strings)
        return FieldPlan(field_head(site.name, tokens.array_depth) + '"' + tokens.prefix, sequences,
                         tuple(split_options(site)[2]), refused)  # every option's JSON text
    sequences = tuple(o.ids + ((tokens.close_id,) if o.is_string else ()) for o in tokens.options)
    return FieldPlan(tokens.literal_suffix, sequences, tuple(o.text for o in tokens.options), refused)


def rlcd_plan_texts(site: FieldLike, tokenizer: LoadedTokenizer) -> list[str]:
    """What rlcd_plan encodes for a site beyond SiteTokens' own texts (not the `rest + '"'`
    that SiteTokens.closed_ids joins from the remainder's ids)."""
    options = site.options
    if len(options) == 2 and all(isinstance(o, bool) for o in options) and options[0] != options[1]:
        return ["true", "false"]
    if all_strings(options):
        rests = split_options(site)[4]
        return [r + '"' for r, close in zip(rests, join_flags(site, tokenizer)[0]) if not close]
    return []


def all_strings(options: list) -> bool:
    """Whether every option is a string (one pass over their types where they are all `str`)."""
    return set(map(type, options)) <= {str} or all(isinstance(o, str) for o in options)


QUICK_CHUNK = 64  # options whose joins are read at once by rlcd_first_token_collides


def rlcd_first_token_collides(site: FieldLike, tokenizer: LoadedTokenizer) -> bool | None:
    """Whether two options of an all-string field share the first token of rlcd_plan's
    sequences (closed_remainder_ids), option by option, stopping at the first repeat: a
    renaming that collides in its first options is refused without tokenizing the rest. None
    for other fields."""
    options = site.options
    if not options or not all_strings(options):
        return None
    rests = split_options(site)[4]
    seen: set[int] = set()
    for start in range(0, len(rests), QUICK_CHUNK):
        chunk = rests[start:start + QUICK_CHUNK]
        for rest, closes in zip(chunk, tokenizer.joins_quote(chunk)):
            first = closed_remainder_ids(tokenizer, rest, closes)[0]
            if first in seen:
                return True
            seen.add(first)
    return False


class Gather(EngineProfile):
    def plan(self, tokens):
        return rlcd_plan(tokens)

    def quick_collision(self, site, tokenizer):
        return rlcd_first_token_collides(site, tokenizer)

    def plan_texts(self, site, tokenizer):
        return rlcd_plan_texts(site, tokenizer)

    def losses(self, tokens):
        """EngineProfile.losses, asking `pick` only of the options that share a first token
        and are not its lowest index (the others are returned: tie_winner is themselves)."""
        plan = self.field_plan(tokens)
        key = ("losses", self.name)
        if plan.refused is not None or type(self).pick is not Gather.pick or key in tokens.memo:
            return super().losses(tokens)
        options = tokens.site.options
        out = []
        for k in sorted(k for bucket in plan.buckets.values() if len(bucket) > 1 for k in bucket[1:]):
            returned, reason, detail = self.pick(plan, tokens, k)
            out.append(lost(k, options[k], returned, options[returned], reason, detail))
        tokens.memo[key] = out
        return out

    def pick(self, plan, tokens, k):
        winner = tie_winner(plan, k)
        piece = tokens.tokenizer.piece(plan.first_tokens[k])
        return winner, TIE, f"shares first token {piece!r} with {tokens.site.options[winner]!r}, which wins the tie"


PROFILE = Gather(
    name="gather",
    summary="RLCD torch path: one batched pass, first-token gather, ties go to the lowest index",
    limits={"max_options": RLCD_MAX_OPTIONS, "fallback": None},
)
