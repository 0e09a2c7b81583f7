"""lm-evaluation-harness `multiple_choice`: every choice scored as a whole continuation.

Read from `lm_eval/api/task.py`: `construct_requests` asks for the log-likelihood of
`f"{target_delimiter}{choice}"` after the prompt, one request per choice (`target_delimiter`
defaults to `" "`, `lm_eval/config/task.py`); `process_results` takes `np.argmax(lls)` for
`acc` (and `f1`, `mcc`) and `np.argmax(lls / completion_len)` with `completion_len =
len(choice)` for `acc_norm`; `np.argmax` gives a tie to the first choice.

These are the full-sequence variants `sum` and `byte-norm` (auditor/pcd/engines/full_sequence.py)
over a different text: the delimiter and the choice as written, encoded alone (the prompt is
the task's and unknown here), not a JSON string. With the oracle certain of choice k, the
rivals are the choices whose tokens are a token prefix of choice k's: under `acc` the
shorter one always wins (`" no"` over `" no way"`), under `acc_norm` the one with fewer tokens
per character of the choice.
"""

from __future__ import annotations

from auditor.pcd.engines.base import FieldPlan
from auditor.pcd.engines.full_sequence import VARIANTS, FullSequence
from auditor.pcd.engines.harness_rows import harness_rows, label_texts
from auditor.pcd.scoring import FieldLike, RunCache, SiteTokens
from auditor.tokenizers.loader import LoadedTokenizer


class LmEvalSequence(FullSequence):
    def plan(self, tokens: SiteTokens) -> FieldPlan:
        prefix, texts = label_texts(tokens.site)
        scored = [prefix + text for text in texts]
        sequences = tuple(tuple(ids) for ids in tokens.tokenizer.ids_many(scored)) if scored else ()
        # texts: the choices without the delimiter (acc_norm divides by len(choice))
        return FieldPlan(prefix, sequences, tuple(texts), scored_prefix=prefix)

    def plan_texts(
        self, site: FieldLike, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> list[str]:
        prefix, texts = label_texts(site)
        return [prefix + text for text in texts]


def profiles() -> list[LmEvalSequence]:
    """One profile per harness row of this scorer, with the row's variant."""
    out = []
    for row in harness_rows("lm_eval_sequence"):
        profile = LmEvalSequence(
            name=row.name,
            summary=row.summary,
            first_token=False,
            limits={"fallback": "one teacher-forced batched pass", **row.extra},
        )
        profile.variant = VARIANTS[str(row.extra["variant"])]
        out.append(profile)
    return out
