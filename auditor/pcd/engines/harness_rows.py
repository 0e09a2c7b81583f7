"""The engine table's harness rows (kind "harness"), for the profiles that model them."""

from __future__ import annotations

from auditor.pcd.engines.table import ENGINE_ROWS, EngineRow
from auditor.pcd.scoring import FieldLike
from auditor.schema.evalconfigs import label_set_scoring


def harness_rows(scorer: str) -> list[EngineRow]:
    """The harness rows whose `scorer` is this profile module."""
    return [row for row in ENGINE_ROWS.values() if row.kind == "harness" and row.scorer == scorer]


def label_texts(site: FieldLike) -> tuple[str, list[str]]:
    """(the text the harness puts before each label, the labels as text) of a label-set site;
    ("", the options as text) of any other."""
    scoring = label_set_scoring(site)
    return (scoring.prefix if scoring is not None else ""), [str(o) for o in site.options]
