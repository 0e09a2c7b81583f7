"""`pcdlint eval SCHEMA` on many rows (issue 48): memory flat in the number of rows.

The schema path reads its rows as a stream, keeps per field a compact tally of each labeled row
(its gold index, its split side, each method's log-scores and pick: a few hundred bytes) and
spills the predictions to disk; the in-memory runner before it held every row, its scores and
its prediction. Measured on the real path: the `pcdlint eval` command with the in-process SmolLM2
backend (the session's model), its score cache warmed on the set's four distinct contexts first,
so the runs measured score nothing (a model prefill per row would take minutes) and each of
their rows goes through all the rest: read, checked, scored from the cache, tallied, predicted,
written to the JSON report. The instrument is the test process's peak resident memory over each
command, above what was resident before it (a fresh process's peak would be the model load's,
which masks the rows, and a fresh process per run costs a model load each).
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import REPO, TRIAGE_CONTEXTS, padded_triage_rows

SCHEMA = REPO / "fixtures" / "eval" / "support_triage_eval.json"
ROWS = 2_000  # and ten times as many

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(sys.platform != "linux", reason="peak resident memory read from /proc/self"),
]


def status_kib(name: str) -> int:
    """A line of /proc/self/status in KiB (VmRSS: resident now, VmHWM: its peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {name} in /proc/self/status")


def peak_growth_kib(data: Path, cache: Path, report: Path, *extra: str) -> int:
    """How far above the resident memory before it one `pcdlint eval` command's peak resident
    memory went (the peak reset first through /proc/self/clear_refs); it must exit 0."""
    args = [
        "eval", str(SCHEMA), "--data", str(data), "--no-letters", "--device", "cpu", "--dtype", "float32",
        "--cache-dir", str(cache), "-q", "-f", "json", "-o", str(report), *extra,
    ]  # fmt: skip
    gc.collect()
    before = status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return status_kib("VmHWM") - before


def test_schema_eval_memory_does_not_grow_with_the_rows(eval_model, tmp_path):
    small = padded_triage_rows(tmp_path / "small.jsonl", ROWS)
    large = padded_triage_rows(tmp_path / "large.jsonl", 10 * ROWS)
    cache = tmp_path / "cache"
    peak_growth_kib(
        small, cache, tmp_path / "warm.json", "--limit", str(TRIAGE_CONTEXTS)
    )  # the contexts scored
    small_kib = peak_growth_kib(small, cache, tmp_path / "small.json")
    large_kib = peak_growth_kib(large, cache, tmp_path / "large.json")
    # 18,000 more rows: the in-memory runner's peak grew by 75 MB (each row's text, scores and
    # prediction held), the streamed one's by 8 MB (its tallies, a few hundred bytes a row)
    assert large_kib - small_kib < 25_000, (small_kib, large_kib)
    report = json.loads((tmp_path / "large.json").read_text())
    assert report["rows"] == 10 * ROWS and report["cache"] == {
        **report["cache"],
        "hits": 10 * ROWS,
        "scored": 0,
    }
    assert len(report["predictions"]) == 10 * ROWS and report["fields"][0]["labeled"] == 10 * ROWS
