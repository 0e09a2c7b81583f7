"""`rlcd-mlx` — the RLCD MLX path.

Procedure: the same field compilation as `gather` (suffix `  "<field>": "<prefix>`, booleans
after `": `). A field without a first-token collision is decided by the gather. A field with a
collision falls back to greedy decoding: up to 4 tokens are generated after the suffix, and
the engine returns the first option `c` in schema order with
`generated.startswith(c) or c.startswith(generated)` (generated = the hoisted prefix plus the
decoded tokens, cut at the closing quote). Simulated with the oracle: when option k's sequence
fits in 4 tokens the generated text is all of option k, and an earlier option that is a prefix
of it wins (`DELIVER` before `DELIVER_WITH_WARNING`); when it does not fit, the budget runs out
and the first option that starts with the truncated text wins.
"""

from __future__ import annotations

from auditor.pcd.engines.base import BUDGET, PREFIX_MATCH, EngineProfile
from auditor.pcd.engines.gather import (
    RLCD_MAX_OPTIONS,
    rlcd_first_token_collides,
    rlcd_plan,
    rlcd_plan_texts,
    tie_winner,
)
from auditor.pcd.scoring import SiteTokens

GREEDY_BUDGET = 4


def _until_close(text: str) -> tuple[str, bool]:
    """The value text before its closing (unescaped) quote, and whether the quote came."""
    escaped = False
    for at, char in enumerate(text):
        if char == '"' and not escaped:
            return text[:at], True
        escaped = char == "\\" and not escaped
    return text, False


def generated_text(tokens: SiteTokens, sequence: tuple[int, ...], budget: int = GREEDY_BUDGET) -> tuple[str, bool]:
    """What greedy decoding of `sequence` produces within the budget: (text, complete)."""
    decoded = tokens.tokenizer.decode(list(sequence[:budget]))
    prefix = tokens.prefix if all(isinstance(o, str) for o in tokens.site.options) else ""
    if all(isinstance(o, str) for o in tokens.site.options):
        text, closed = _until_close(decoded)
        return prefix + text, closed
    return decoded.strip(), len(sequence) <= budget


def _first_match(texts: tuple[str, ...], generated: str) -> int | None:
    """RLCD-MLX's matching rule: the first option in schema order that is a prefix of the
    generated text, or that the generated text is a prefix of."""
    return next((i for i, text in enumerate(texts)
                 if generated.startswith(text) or text.startswith(generated)), None)


class RlcdMlx(EngineProfile):
    def plan(self, tokens):
        return rlcd_plan(tokens)

    def quick_collision(self, site, tokenizer):
        return rlcd_first_token_collides(site, tokenizer)

    def plan_texts(self, site, tokenizer):
        return rlcd_plan_texts(site, tokenizer)

    def pick(self, plan, tokens, k):
        if not plan.has_collision:
            return tie_winner(plan, k), "tie", "gather"
        generated, _ = generated_text(tokens, plan.sequences[k])
        truncated = generated != plan.texts[k]
        returned = _first_match(plan.texts, generated)
        if returned == k:
            return k, "", ""
        if returned is None:
            return None, BUDGET, f"{GREEDY_BUDGET} greedy tokens give {generated!r}, which matches no option"
        # lost even had the whole option been generated: the prefix rule; else the budget
        if _first_match(plan.texts, plan.texts[k]) != k:
            budget = f"; {GREEDY_BUDGET} greedy tokens give {generated!r}" if truncated else ""
            return returned, PREFIX_MATCH, f"prefix match picks {plan.texts[returned]!r}{budget}"
        return returned, BUDGET, (f"{GREEDY_BUDGET} greedy tokens give {generated!r}; "
                                  f"prefix match picks {plan.texts[returned]!r}")

    def extra_passes(self, tokens):
        plan = self.field_plan(tokens)
        if not plan.has_collision or plan.refused:
            return 0
        return min(GREEDY_BUDGET, max(len(s) for s in plan.sequences))


PROFILE = RlcdMlx(
    name="rlcd-mlx",
    summary="RLCD MLX path: gather, and on a collision up to 4 greedy tokens matched by prefix in schema order",
    limits={"max_options": RLCD_MAX_OPTIONS, "fallback": f"greedy, {GREEDY_BUDGET} tokens"},
)
