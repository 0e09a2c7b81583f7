"""openai/evals model-graded classification: the grader writes text, and `get_choice` maps it
to the first choice string it matches.

Read from `evals/elsuite/modelgraded/classify_utils.py`:

- `get_choice_strings`: a `choice_strings` string is iterated, one choice per character
  (`"ABCDE"`); every choice is asserted to hold no `string.punctuation` character, so a spec
  with `"Yes, but"` fails before anything is sampled (a refusal of the whole label set).
- `get_choice`: the generated text is stripped and split into lines (reversed for
  `cot_classify*`, whose answer comes last); each line is stripped, its punctuation removed,
  and the choices are tried in list order with `MATCH_FNS["starts_or_endswith"]` (the
  default `match_fn`): the first choice the line starts or ends with is the answer.

Simulated with an oracle grader certain of choice k, which writes choice k alone on its answer
line: choice k is lost to an earlier choice its text starts with (`"1"` before `"10"`, `"No"`
before `"Not sure"`) or ends with (`"sure"` before `"Not sure"`), and a choice that no cleaned
line can match (leading or trailing spaces, nothing but punctuation) is never returned. Tokens
play no part: the grader's text is matched, not scored.
"""

from __future__ import annotations

import string

from auditor.pcd.engines.base import (
    NO_MATCH,
    PREFIX_MATCH,
    PUNCTUATION,
    SUFFIX_MATCH,
    EngineProfile,
    FieldPlan,
)
from auditor.pcd.engines.harness_rows import harness_rows, label_texts
from auditor.pcd.scoring import SiteTokens


def _cleaned(line: str) -> str:
    """A line as get_choice reads it: stripped, punctuation removed."""
    return "".join(c for c in line.strip() if c not in string.punctuation)


class EvalsClassify(EngineProfile):
    def plan(self, tokens: SiteTokens) -> FieldPlan:
        prefix, texts = label_texts(tokens.site)
        sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many(texts)) if texts else ()
        marked = next((t for t in texts if any(c in string.punctuation for c in t)), None)
        refused = (
            f"choice {marked!r} holds punctuation, which get_choice_strings refuses before "
            "anything is sampled"
            if marked is not None
            else None
        )
        return FieldPlan(
            prefix, sequences, tuple(texts), refused, refused_reason=PUNCTUATION, scored_prefix=prefix
        )

    def pick(self, plan: FieldPlan, tokens: SiteTokens, k: int) -> tuple[int | None, str, str]:
        line = _cleaned(plan.texts[k])
        if not line:
            return None, NO_MATCH, "get_choice skips a line with nothing left once stripped of punctuation"
        for j, choice in enumerate(plan.texts):
            if line.startswith(choice) or line.endswith(choice):
                if j == k:
                    return k, "", ""
                how, reason = ("starts", PREFIX_MATCH) if line.startswith(choice) else ("ends", SUFFIX_MATCH)
                return (
                    j,
                    reason,
                    f"its answer line {line!r} {how} with {choice!r}, listed first, which get_choice returns",
                )
        return None, NO_MATCH, f"its answer line is read as {line!r}, which it neither starts nor ends with"


def profiles() -> list[EvalsClassify]:
    """One profile per harness row of this scorer."""
    return [
        EvalsClassify(name=row.name, summary=row.summary, first_token=False, limits=dict(row.extra))
        for row in harness_rows("evals_classify")
    ]
