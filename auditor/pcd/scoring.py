"""The scoring model of shipped PCD/RLCD engines, computed from a tokenizer: one import for its
parts, each in a module of its own.

- auditor.pcd.texts: an option's JSON text, the field head and suffix, the option split
  (hoisted prefix, remainders), PCD003's option windows;
- auditor.pcd.joins: where a tokenizer cuts a field text at its parts (join flags);
- auditor.pcd.runcache: RunCache, every value derived from a site for one run;
- auditor.pcd.tokens: SiteTokens, one site's tokenization under one tokenizer;
- auditor.pcd.letters: letter slots.
"""

from __future__ import annotations

from auditor.pcd.joins import JoinFlags, closed_remainder_ids, option_join_flags, plain_cuts
from auditor.pcd.letters import (
    SLOT_LETTERS,
    SlotTable,
    _in_context,
    _letter_failures_alone,
    letter_probe_texts,
    letter_slots,
)
from auditor.pcd.runcache import (
    TEXT_GROUPS,
    RunCache,
    SiteEntry,
    field_joins,
    join_flags,
    prefetch,
    site_texts,
    window_sites,
)
from auditor.pcd.texts import (
    LITERAL_CLOSE,
    PREFILL_END,
    STRING_CLOSE,
    FieldLike,
    OptionSplit,
    canonical_text,
    field_head,
    field_texts,
    json_text,
    literal_texts,
    option_windows,
    rendered,
    split_options,
)
from auditor.pcd.tokens import CanonicalText, ScoredOption, SiteTokens, scored_ids

__all__ = [
    "LITERAL_CLOSE",
    "PREFILL_END",
    "SLOT_LETTERS",
    "STRING_CLOSE",
    "TEXT_GROUPS",
    "CanonicalText",
    "FieldLike",
    "JoinFlags",
    "OptionSplit",
    "RunCache",
    "ScoredOption",
    "SiteEntry",
    "SiteTokens",
    "SlotTable",
    "_in_context",
    "_letter_failures_alone",
    "canonical_text",
    "closed_remainder_ids",
    "field_head",
    "field_joins",
    "field_texts",
    "join_flags",
    "json_text",
    "letter_probe_texts",
    "letter_slots",
    "literal_texts",
    "option_join_flags",
    "option_windows",
    "plain_cuts",
    "prefetch",
    "rendered",
    "scored_ids",
    "site_texts",
    "split_options",
    "window_sites",
]
