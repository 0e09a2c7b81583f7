"""`openjev` — letter slots from a 16-letter alphabet.

Procedure (openjev's slot scoring): every field is remapped to letters `A`–`P` in schema
order (a legend in the prompt maps each letter to its option); the engine scores each
letter's first token after `  "<field>": "` (`encode(letter + '"')`), and argmax breaks ties
to the lowest index. Before scoring, openjev's `validate_row` (read in
crocodiledundalk/openjev, src/openjev_phase1/core.py, commit 5be3cd6; TheoLeeCJ/openjev
src/semif_phase1/core.py, commit c8d6dfb, has the same checks two lines up: 11, 32-33, 35-37,
39-40) refuses a request — none of the field's options can be returned — clause by clause, in
this order:

- core.py:13, 34-35: fewer than 2 or more than 16 options ("options must contain 2-16
  entries"; reason `option-cap`);
- core.py:37-39: an option id that is not a string ("Each option needs string id and
  description fields"; reason `non-string-id`): a schema's option is the id, so a boolean,
  number or null option refuses its field;
- core.py:41-42: two equal ids ("Option IDs must be unique"; reason `duplicate-id`): an enum
  listing `"yes"` twice refuses its field.
"""

from __future__ import annotations

from auditor.pcd.engines.base import (
    DUPLICATE_ID,
    NON_STRING_ID,
    OPTION_CAP,
    TIE,
    EngineProfile,
    FieldLike,
    FieldPlan,
    tie_winner,
)
from auditor.pcd.scoring import RunCache, SiteTokens, field_head
from auditor.tokenizers import LoadedTokenizer

OPENJEV_LETTERS = "ABCDEFGHIJKLMNOP"
MIN_OPTIONS, MAX_OPTIONS = 2, len(OPENJEV_LETTERS)


def letter_plan(tokens: SiteTokens, letters: str) -> FieldPlan:
    options = tokens.site.options
    n = len(options)
    refused, why = None, OPTION_CAP
    if n < MIN_OPTIONS:
        refused = f"openjev refuses fields with fewer than {MIN_OPTIONS} options ({n} here)"
    elif n > len(letters):
        refused = (
            f"openjev scores letters {letters[0]}–{letters[-1]} and refuses fields with more "
            f"than {len(letters)} options ({n} here)"
        )
    elif not all(isinstance(o, str) for o in options):
        other = next(o for o in options if not isinstance(o, str))
        refused, why = f"openjev refuses option ids that are not strings ({other!r} here)", NON_STRING_ID
    elif len(set(options)) < n:
        twice = next(o for i, o in enumerate(options) if o in options[:i])
        refused, why = (
            f"openjev refuses a field whose option ids repeat ({twice!r} twice): Option IDs must be unique",
            DUPLICATE_ID,
        )
    slots = tuple(letters[:n]) if refused is None else ()
    sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many([c + '"' for c in slots]))
    return FieldPlan(
        field_head(tokens.site.name, tokens.array_depth) + '"',
        sequences,
        slots,
        refused,
        slots,
        refused_reason=why,
    )


class OpenJev(EngineProfile):
    def plan(self, tokens: SiteTokens) -> FieldPlan:
        return letter_plan(tokens, self.letters)

    def plan_texts(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> list[str]:
        return [c + '"' for c in self.letters]

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        winner = tie_winner(plan, k)
        return (
            winner,
            TIE,
            (
                f"its letter {plan.letters[k]!r} shares a token with "
                f"{plan.letters[winner]!r} ({tokens.site.options[winner]!r}), which wins the tie"
            ),
        )


PROFILE = OpenJev(
    name="openjev",
    summary="openjev: options scored as letters A–P after the quote; fields of <2 or >16 options refused",
    letters=OPENJEV_LETTERS,
    limits={"min_options": MIN_OPTIONS, "max_options": MAX_OPTIONS, "fallback": None},
)


def profiles() -> list[EngineProfile]:
    """The profiles this module gives the engine table's rows (`scorer = "openjev"`)."""
    return [PROFILE]
