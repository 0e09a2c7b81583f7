"""`openjev` — letter slots from a 16-letter alphabet.

Procedure (openjev's documented slot scoring): every field is remapped to letters `A`–`P`
in schema order (a legend in the prompt maps each letter to its option); the engine scores
each letter's first token after `  "<field>": "` (`encode(letter + '"')`), and argmax breaks
ties to the lowest index. It refuses a field with fewer than 2 or more than 16 options, so
none of such a field's options can be returned.
"""

from __future__ import annotations

from auditor.pcd.engines.base import TIE, EngineProfile, FieldPlan, tie_winner
from auditor.pcd.scoring import SiteTokens, field_head

OPENJEV_LETTERS = "ABCDEFGHIJKLMNOP"
MIN_OPTIONS, MAX_OPTIONS = 2, len(OPENJEV_LETTERS)


def letter_plan(tokens: SiteTokens, letters: str) -> FieldPlan:
    n = len(tokens.site.options)
    refused = None
    if n < MIN_OPTIONS:
        refused = f"openjev refuses fields with fewer than {MIN_OPTIONS} options ({n} here)"
    elif n > len(letters):
        refused = (f"openjev scores letters {letters[0]}–{letters[-1]} and refuses fields with more "
                   f"than {len(letters)} options ({n} here)")
    slots = tuple(letters[:n]) if refused is None else ()
    sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many([c + '"' for c in slots]))
    return FieldPlan(field_head(tokens.site.name, tokens.array_depth) + '"', sequences, slots, refused, slots)


class OpenJev(EngineProfile):
    def plan(self, tokens):
        return letter_plan(tokens, self.letters)

    def plan_texts(self, site, tokenizer):
        return [c + '"' for c in self.letters]

    def pick(self, plan, tokens, k):
        winner = tie_winner(plan, k)
        return winner, TIE, (f"its letter {plan.letters[k]!r} shares a token with "
                             f"{plan.letters[winner]!r} ({tokens.site.options[winner]!r}), which wins the tie")


PROFILE = OpenJev(
    name="openjev",
    summary="openjev: options scored as letters A–P after the quote; fields of <2 or >16 options refused",
    letters=OPENJEV_LETTERS,
    limits={"min_options": MIN_OPTIONS, "max_options": MAX_OPTIONS, "fallback": None},
)
