"""The one PCD scoring model, shared by the linter's rules and the decoder's prompt builder.

JSON text of an option, the field suffix, the hoisted prefix, the scored split, the canonical
cut, letter slots, the engine profiles (`auditor.pcd.engines`), the decision engines' renderers
(`auditor.pcd.readouts`) and the cost model. Pure computation over a tokenizer: no I/O.
"""

from auditor.pcd.buckets import collision_groups, first_token_buckets
from auditor.pcd.chat import ChatTemplateError
from auditor.pcd.engines import (
    DEFAULT_ENGINE,
    ENGINES,
    OPTION_CAP,
    REFUSALS,
    TIE,
    EngineProfile,
    FieldPlan,
    Loss,
    get_engine,
)
from auditor.pcd.readouts import (
    LETTERS,
    LabelReport,
    QuestionShown,
    check_labels,
    decision_question,
    describe_failures,
    question_labels,
    question_shown,
    request_state,
    site_question,
    two_letter_options,
)
from auditor.pcd.requests import (
    bad_characters,
    distinct_names,
    field_problems,
    name_key,
    refusal,
    renaming,
    split_passes,
    stringified,
)
from auditor.pcd.scoring import (
    PREFILL_END,
    SLOT_LETTERS,
    CanonicalText,
    ScoredOption,
    SiteTokens,
    SlotTable,
    field_head,
    json_text,
    letter_slots,
    option_windows,
    scored_ids,
    window_sites,
)

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "LETTERS",
    "OPTION_CAP",
    "PREFILL_END",
    "REFUSALS",
    "SLOT_LETTERS",
    "TIE",
    "CanonicalText",
    "ChatTemplateError",
    "EngineProfile",
    "FieldPlan",
    "LabelReport",
    "Loss",
    "QuestionShown",
    "ScoredOption",
    "SiteTokens",
    "SlotTable",
    "bad_characters",
    "check_labels",
    "collision_groups",
    "decision_question",
    "describe_failures",
    "distinct_names",
    "field_head",
    "field_problems",
    "first_token_buckets",
    "get_engine",
    "json_text",
    "letter_slots",
    "name_key",
    "option_windows",
    "question_labels",
    "question_shown",
    "refusal",
    "renaming",
    "request_state",
    "scored_ids",
    "site_question",
    "split_passes",
    "stringified",
    "two_letter_options",
    "window_sites",
]
