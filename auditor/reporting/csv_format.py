"""CSV output: one row per finding (spreadsheets, pandas, diffing tokenizers)."""

from __future__ import annotations

import csv
import io
from typing import Any

from auditor.linter.engine import LintRun
from auditor.reporting import formatter

COLUMNS = (
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "code",
    "name",
    "severity",
    "tokenizer",
    "field",
    "pointer",
    "message",
    "fingerprint",
)


@formatter("csv", "one row per finding, with a header row")
def render(run: LintRun, **_options: Any) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for finding in run.findings:
        row = finding.to_dict()
        row["tokenizer"] = row["tokenizer"] or ""
        writer.writerow(row)
    return out.getvalue()
