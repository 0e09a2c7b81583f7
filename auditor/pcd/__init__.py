"""The one PCD scoring model, shared by the linter's rules and the decoder's prompt builder.

JSON text of an option, the field suffix, the hoisted prefix, the scored split, the canonical
cut, letter slots and the cost model. Pure computation over a tokenizer: no I/O.
"""

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
)

__all__ = [
    "PREFILL_END",
    "SLOT_LETTERS",
    "CanonicalText",
    "ScoredOption",
    "SiteTokens",
    "SlotTable",
    "field_head",
    "json_text",
    "letter_slots",
]
