"""`constrained` — greedy token masks over the options' token trie (outlines, xgrammar,
llguidance).

Procedure: the decoder writes the value itself after `  "<field>": `, one token per forward
pass; at each step it masks every token that does not continue some option's text (quotes
included) and takes the argmax of what is left, until an option's closing quote. Simulated
with the oracle (certain of option k, writing option k's tokens `encode('"<option>"')`):
option k's next token is always allowed, so the walk ends on option k; no option is lost, and
the price is one pass per token of the longest option.
"""

from __future__ import annotations

from auditor.pcd.engines.base import EngineProfile, FieldLike, FieldPlan, rendered
from auditor.pcd.scoring import RunCache, SiteTokens, field_head
from auditor.tokenizers import LoadedTokenizer


def trie_plan(tokens: SiteTokens) -> FieldPlan:
    texts = tuple(rendered(o) for o in tokens.site.options)
    sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many(list(texts)))
    return FieldPlan(field_head(tokens.site.name, tokens.array_depth), sequences, texts)


def walk(plan: FieldPlan, wanted: tuple[int, ...]) -> int | None:
    """Greedy masked decoding when the model prefers `wanted`'s tokens: the option it ends on.

    The mask at each step holds the next tokens of every option still alive. After its last
    token the oracle writes what follows the value (the closing quote is already in a
    string's tokens; a literal is followed by `,` or a newline), which the grammar allows only
    where an option is complete — so `8` does not end the walk towards `84`. A preferred
    token outside the mask leaves the pick to the model, which the oracle does not define:
    the walk then returns None.
    """
    alive = list(range(len(plan.sequences)))
    for step, token in enumerate(wanted):
        allowed = {plan.sequences[i][step] for i in alive if len(plan.sequences[i]) > step}
        if token not in allowed:
            return None
        alive = [i for i in alive if len(plan.sequences[i]) > step and plan.sequences[i][step] == token]
    return next((i for i in alive if plan.sequences[i] == wanted), None)


class Constrained(EngineProfile):
    def plan(self, tokens: SiteTokens) -> FieldPlan:
        return trie_plan(tokens)

    def plan_texts(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> list[str]:
        return [rendered(o) for o in site.options]

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        # walk(plan, plan.sequences[k]) without the walk: option k's own tokens are always in
        # the mask, so it ends on the lowest index whose sequence equals option k's
        returned = plan.first_with[plan.sequences[k]]
        return returned, "mask", "the token mask leaves no path to it"

    def extra_passes(self, tokens: SiteTokens) -> int:
        plan = self.field_plan(tokens)
        return max(len(s) for s in plan.sequences) - 1


PROFILE = Constrained(
    name="constrained",
    summary="constrained decoding: greedy token masks over the options' token trie, one pass per token",
    first_token=False,
    limits={"fallback": "one pass per token of the longest option"},
)


def profiles() -> list[EngineProfile]:
    """The profiles this module gives the engine table's rows (`scorer = "constrained"`)."""
    return [PROFILE]
