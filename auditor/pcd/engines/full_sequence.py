"""`full-sequence` — teacher-forced scoring of whole options (SGLang `select` style).

Procedure: after `  "<field>": "` (strings) or `  "<field>": ` (literals) every option's own
tokens (`encode(option)`, no closing quote: a choice is scored as a free continuation) are
teacher-forced in one more batched pass; the option with the largest sum of token
log-probabilities wins, ties to the lowest index. Simulated with the oracle, which gives each
of option k's tokens probability 1 − ε (a softmax never gives exactly 1): an option whose
tokens are a strict prefix of option k's has fewer negative terms and always outscores it, so
option k is never returned (`DELIVER` beats `DELIVER_WITH_WARNING` whatever the order).
"""

from __future__ import annotations

from auditor.pcd.engines.base import SEQUENCE_PREFIX, EngineProfile, FieldPlan
from auditor.pcd.scoring import SiteTokens, field_head, json_text


def sequence_plan(tokens: SiteTokens) -> FieldPlan:
    options = tokens.site.options
    texts = tuple(json_text(o) for o in options)
    sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many(list(texts)))
    strings = all(isinstance(o, str) for o in options)
    return FieldPlan(field_head(tokens.site.name, tokens.array_depth) + ('"' if strings else ""), sequences, texts)


class FullSequence(EngineProfile):
    def plan(self, tokens):
        return sequence_plan(tokens)

    def plan_texts(self, site, tokenizer):
        return [json_text(o) for o in site.options]

    def pick(self, plan, tokens, k):
        wanted = plan.sequences[k]
        # every other option scores -inf at its first token that differs from the oracle's;
        # those that are token prefixes of option k score len × log(1 − ε): the shortest wins
        # (an empty option scores 0, the most there is: it is a prefix of every option)
        # (the shortest token prefix of option k's that is an option, lowest index first)
        first_with = plan.first_with
        best = next(first_with[wanted[:n]] for n in range(len(wanted) + 1) if wanted[:n] in first_with)
        return best, SEQUENCE_PREFIX, (f"its tokens start with all of {plan.texts[best]!r}'s, "
                                       "whose shorter sum of log-probs always scores higher")

    def extra_passes(self, tokens):
        plan = self.field_plan(tokens)
        return 1 if any(len(s) > 1 for s in plan.sequences) else 0


PROFILE = FullSequence(
    name="full-sequence",
    summary="full-sequence scoring: teacher-forced sum of log-probs of every option, one more batched pass",
    first_token=False,
    limits={"fallback": "one teacher-forced batched pass"},
)
