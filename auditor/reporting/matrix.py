"""The tokenizer matrix: field × tokenizer table of finding codes, for several --tokenizer runs.

The same schema can be clean for one tokenizer and broken for another; one row per field with a
finding under any tokenizer makes that visible at a glance. pandas is imported only here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from auditor.linter.registry import confirming

if TYPE_CHECKING:
    from auditor.linter.engine import LintRun

CLEAN = "ok"


def collision_code() -> str:
    """The code of the rule that declares first-token collisions (`confirms="collision"`)."""
    collision = confirming("collision")
    return collision.code if collision else "collision"


def matrix_rows(run: LintRun) -> tuple[list[str], dict[tuple[str, str], dict[str, list[str]]]]:
    """Tokenizer ids, and (path, field) → tokenizer id → sorted codes of tokenizer-bound findings."""
    ids = [t.id for t in run.tokenizers]
    rows: dict[tuple[str, str], dict[str, list[str]]] = {}
    for finding in run.findings:
        if finding.tokenizer is None or not finding.field:
            continue  # tokenizer-independent findings are the same in every column
        cells = rows.setdefault((finding.path, finding.field), {i: [] for i in ids})
        if finding.code not in cells[finding.tokenizer]:
            cells[finding.tokenizer].append(finding.code)
    return ids, rows


def colliding_fields(run: LintRun) -> dict[str, int]:
    """Tokenizer id → number of fields with a first-token collision (the rule that declares it
    confirms "collision") under it."""
    code = collision_code()
    ids, rows = matrix_rows(run)
    return {i: sum(1 for cells in rows.values() if code in cells[i]) for i in ids}


def matrix_dict(run: LintRun) -> dict:
    """The matrix for JSON and HTML: one row per field with a tokenizer-bound finding."""
    ids, rows = matrix_rows(run)
    return {
        "tokenizers": ids,
        "colliding_fields": colliding_fields(run),
        "fields": [
            {
                "path": path,
                "field": field,
                "codes": {i: sorted(cells[i]) for i in ids},
                "differs": len({tuple(sorted(c)) for c in cells.values()}) > 1,
            }
            for (path, field), cells in rows.items()
        ],
    }


def matrix_table(run: LintRun) -> str:
    """The table as text; empty when fewer than two tokenizers ran or nothing differs by field."""
    if len(run.tokenizers) < 2:
        return ""
    ids, rows = matrix_rows(run)
    if not rows:
        return "tokenizer matrix: no tokenizer-dependent findings"
    import pandas as pd

    single_file = len({path for path, _ in rows}) == 1
    index = [field if single_file else f"{path} {field}" for path, field in rows]
    frame = pd.DataFrame(
        [[",".join(sorted(cells[i])) or CLEAN for i in ids] for cells in rows.values()],
        index=pd.Index(index, name="field"),
        columns=ids,
    )
    differ = sum(1 for cells in rows.values() if len({tuple(sorted(c)) for c in cells.values()}) > 1)
    with pd.option_context(
        "display.max_rows",
        None,
        "display.max_columns",
        None,
        "display.width",
        200,
        "display.max_colwidth",
        80,
    ):
        table = frame.to_string()
    collisions = ", ".join(f"{i} {n}" for i, n in colliding_fields(run).items())
    return (
        f"tokenizer matrix ({len(rows)} fields with findings, {differ} differ between "
        f"tokenizers):\n{table}\nfields with a first-token collision ({collision_code()}) per "
        f"tokenizer: {collisions}"
    )
