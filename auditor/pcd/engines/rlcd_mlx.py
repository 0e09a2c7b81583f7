"""`rlcd-mlx` — the RLCD MLX path.

Procedure, as `run_parallel_generation` runs it (read in the public port
stephanj/parallelConstraintDecoding, python/core/engine_mlx.py; line numbers of commit
c98cd00): the same field compilation as `gather` (schema.py: suffix `  "<field>": "<prefix>`,
candidates the first token of each remainder alone, booleans after `": `). A field without a
collision is decided by the gather (engine_mlx.py:364-369). A field with a collision falls back
to greedy decoding, clause by clause:

- budget (engine_mlx.py:386): at most 4 greedy tokens after the suffix;
- stop characters (engine_mlx.py:388-392): a token whose text holds `"`, a newline or `,`
  ends the loop *before* it is kept — so the token that carries the closing quote is dropped
  with whatever it merged (`b"`), and an option with a `,` (`"a, b"`), a newline, or a quote
  in its escaped spelling (`\\"`) is cut at that token;
- strip (engine_mlx.py:399): the text is the hoisted prefix plus the kept tokens decoded,
  with every `"` removed and `.strip()`ped — so `" b"` becomes `b` and matches nothing;
- prefix match (engine_mlx.py:401-404): the first choice `c` in schema order with
  `text.startswith(c) or c.startswith(text)` (`DELIVER` before `DELIVER_WITH_WARNING`; an
  empty text matches the first choice);
- digit fallback (engine_mlx.py:405-410): when nothing matches, the first run of digits in
  the text, read as an index, picks `choices[index]` when in range (`v1` picks the second);
- first-choice fallback (engine_mlx.py:411-412): otherwise `choices[0]` — so an option at
  index 0 whose text matches nothing (a Japanese or emoji option cut mid-character by the
  budget) *is* returned.

Simulated with the oracle, certain of option k: it writes option k's tokens
(`encode(rest + '"')`, the plan's sequences) and the clauses above run on them. A loss is
named after the clause that decided it: the fallback that returned another option when
nothing matched (`digit-fallback`, `first-choice-fallback`); `prefix-match` when the option's
whole text would still lose to an earlier option's prefix; else the clause that spoiled the
text the prefix match read (`stop-char`, `budget`, `strip`).
"""

from __future__ import annotations

import re

from auditor.pcd.engines.base import (
    BUDGET,
    DIGIT_FALLBACK,
    FIRST_CHOICE,
    PREFIX_MATCH,
    STOP_CHAR,
    STRIP,
    EngineProfile,
    FieldPlan,
)
from auditor.pcd.engines.gather import (
    RLCD_MAX_OPTIONS,
    RlcdPlanned,
    all_strings,
    rlcd_raw,
    tie_winner,
)
from auditor.pcd.scoring import SiteTokens, json_text

GREEDY_BUDGET = 4
STOP_CHARS = ('"', "\n", ",")
DIGITS = re.compile(r"\d+")


class Greedy:
    """What the greedy fallback makes of one written sequence: the text and which clause cut it."""

    __slots__ = ("budget_hit", "kept", "stopped", "text")

    def __init__(self, kept: str, stopped: bool, text: str, budget_hit: bool):
        self.kept, self.stopped, self.text, self.budget_hit = kept, stopped, text, budget_hit


def greedy(tokens: SiteTokens, sequence: tuple[int, ...], prefix: str, budget: int = GREEDY_BUDGET) -> Greedy:
    """The loop of engine_mlx.py:386-399 on the oracle's `sequence`."""
    decode = tokens.tokenizer.decode
    kept: list[int] = []
    stopped = False
    for token in sequence[:budget]:
        if any(char in decode([token]) for char in STOP_CHARS):
            stopped = True
            break
        kept.append(token)
    written = decode(kept)
    text = (prefix + written).replace('"', "").strip()
    return Greedy(written, stopped, text, not stopped and len(kept) == budget)


def match(choices: tuple[str, ...], text: str) -> tuple[int, str]:
    """engine_mlx.py:400-412: (returned index, the clause that returned it)."""
    for index, choice in enumerate(choices):
        if text.startswith(choice) or choice.startswith(text):
            return index, PREFIX_MATCH
    digits = DIGITS.findall(text)
    if digits and int(digits[0]) < len(choices):
        return int(digits[0]), DIGIT_FALLBACK
    return 0, FIRST_CHOICE


class RlcdMlx(RlcdPlanned):
    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        if not plan.has_collision:
            return tie_winner(plan, k), "tie", "gather"
        options = tokens.site.options
        if all_strings(options):
            raw = rlcd_raw(tokens)
            prefix, choices, meant = raw.prefix, raw.choices, raw.choices[k]
        else:  # (RLCD takes strings only: literals as their JSON text, nothing hoisted)
            prefix, choices = "", tuple(json_text(o) for o in options)
            meant = choices[k]
        run = greedy(tokens, plan.sequences[k], prefix)
        returned, how = match(choices, run.text)
        if returned == k:
            return k, "", ""
        said = f"{GREEDY_BUDGET} greedy tokens give {run.text!r}"
        if how != PREFIX_MATCH:  # a fallback chose it: nothing matched the text
            rule = "its digits pick" if how == DIGIT_FALLBACK else "the fallback to the first choice picks"
            return returned, how, f"{said}, which matches no option; {rule} {choices[returned]!r}"
        picked = f"prefix match picks {choices[returned]!r}"
        if match(choices, meant)[0] != k:  # lost even were all of it read: the prefix rule
            cut = f"; {said}" if run.text != meant else ""
            return returned, PREFIX_MATCH, picked + cut
        full = (prefix + json_text(meant)).strip()
        if run.stopped and (prefix + run.kept).strip() != full:
            return (
                returned,
                STOP_CHAR,
                (
                    f"greedy decoding stops at a token holding '\"', a newline or "
                    f"',' and gives {run.text!r}; {picked}"
                ),
            )
        if run.budget_hit and (prefix + run.kept).strip() != full:
            return returned, BUDGET, f"{said}; {picked}"
        return returned, STRIP, f"quotes removed and .strip() give {run.text!r}; {picked}"

    def extra_passes(self, tokens: SiteTokens) -> int:
        plan = self.field_plan(tokens)
        if not plan.has_collision or plan.refused:
            return 0
        return min(GREEDY_BUDGET, max(len(s) for s in plan.sequences))


PROFILE = RlcdMlx(
    name="rlcd-mlx",
    summary=(
        "RLCD MLX path: gather, and on a collision up to 4 greedy tokens (stopping at '\"', newline, ','; "
        "stripped), matched by prefix in schema order, else by the text's digits, else the first choice"
    ),
    limits={"max_options": RLCD_MAX_OPTIONS, "fallback": f"greedy, {GREEDY_BUDGET} tokens"},
)


def profiles() -> list[EngineProfile]:
    """The profiles this module gives the engine table's rows (`scorer = "rlcd_mlx"`)."""
    return [PROFILE]
