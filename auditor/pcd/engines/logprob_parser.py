"""alpaca_eval `logprob_parser`: each label looked up by its exact text among one reply
token's top log-probs.

Read from `alpaca_eval/completion_parsers.py`: `logprob_parser` takes the `top_logprobs` of
one reply token (each batch item's first with `log_prob_index: "batch"`, the given position
otherwise: `-1`, the last, after a chain of thought) and keeps the entries whose `token` is in
`denominator_tokens + [numerator_token]`; a label missing there scores `-inf`, and none
present makes the answer NaN.

So a label is found only when it is one token as the model writes it at that position (the
reply's start: no leading space). Simulated with the oracle certain of label k, which writes
label k's tokens: a label of several tokens is never in the top log-probs (its first token's
text is not the label); where its first token is another label's token, that label takes its
probability (a first-token collision); labels of one token each are told apart.
"""

from __future__ import annotations

from auditor.pcd.engines.base import NOT_ONE_TOKEN, TIE, EngineProfile, FieldPlan, tie_winner
from auditor.pcd.engines.harness_rows import harness_rows, label_texts
from auditor.pcd.scoring import SiteTokens


class LogprobParser(EngineProfile):
    def plan(self, tokens: SiteTokens) -> FieldPlan:
        prefix, texts = label_texts(tokens.site)
        scored = [prefix + text for text in texts]
        sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many(scored)) if scored else ()
        # what the parser can read for each label: its token where it is one; where it is not,
        # its first token only when that is another label's one token (which takes the label's
        # probability); else nothing any other label reads (a distinct negative id)
        singles = {s[0] for s in sequences if len(s) == 1}
        candidates = tuple(
            s[0] if s and (len(s) == 1 or s[0] in singles) else -2 - k for k, s in enumerate(sequences)
        )
        return FieldPlan(prefix, sequences, tuple(texts), candidates=candidates, scored_prefix=prefix)

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        sequence = plan.sequences[k]
        if len(sequence) == 1:
            winner = tie_winner(plan, k)  # (a label listed twice: one entry of the parser's map)
            if winner == k:
                return k, "", ""
            return winner, TIE, f"it is listed before as {plan.texts[winner]!r}"
        pieces = ", ".join(repr(tokens.tokenizer.piece(t)) for t in sequence)
        if plan.first_tokens[k] >= 0:  # its first token is another label's only token
            winner = next(i for i in plan.buckets[plan.first_tokens[k]] if len(plan.sequences[i]) == 1)
            return (
                winner,
                TIE,
                f"it is {len(sequence)} tokens ({pieces}); its first is {plan.texts[winner]!r}",
            )
        return (
            None,
            NOT_ONE_TOKEN,
            f"it is {len(sequence)} tokens ({pieces}), so no reply token's text equals it and "
            "the parser never finds its log-prob",
        )


def profiles() -> list[LogprobParser]:
    """One profile per harness row of this scorer."""
    return [
        LogprobParser(name=row.name, summary=row.summary, first_token=True, limits=dict(row.extra))
        for row in harness_rows("logprob_parser")
    ]
