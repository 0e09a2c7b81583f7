"""`pcdlint eval` on the command line: bad input is one line and exit 2 (before any model loads);
a small real run writes every report and the calibration file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import REPO

SCHEMA = REPO / "fixtures" / "eval" / "support_triage_eval.json"
DATA = REPO / "fixtures" / "eval" / "support_triage.jsonl"


def pcdlint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)},
    )


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            '{"context": "x", "labels": {"assigned_tier": "TIER_3"}}\n',
            "label \"TIER_3\" for field 'assigned_tier' is not one of its options",
        ),
        (
            '{"context": "x", "labels": {"refund_requested": "yes"}}\n',
            "label \"yes\" for field 'refund_requested' is not one of its options (true, false)",
        ),
        ("context,colour\nx,red\n", "label for unknown field 'colour'"),
    ],
)
def test_bad_labels_exit_2_with_one_line(tmp_path, rows, message):
    data = tmp_path / ("rows.csv" if rows.startswith("context,") else "rows.jsonl")
    data.write_text(rows)
    done = pcdlint("eval", str(SCHEMA), "--data", str(data))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr


def test_missing_files_exit_2(tmp_path):
    done = pcdlint("eval", str(tmp_path / "nope.json"), "--data", str(DATA))
    assert done.returncode == 2 and done.stderr.startswith("pcdlint: error:") and done.stderr.count("\n") == 1
    done = pcdlint("eval", str(SCHEMA), "--data", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 2 and "cannot read file" in done.stderr


@pytest.mark.model
def test_small_run_writes_reports_and_calibration(eval_model, tmp_path):
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            str(SCHEMA),
            "--data",
            str(DATA),
            "--limit",
            "2",
            "--no-letters",
            "--device",
            "cpu",
            "--dtype",
            "float32",
            "--cache-dir",
            str(tmp_path / "cache"),
            "-f",
            "json",
            "-o",
            str(out),
            "--output-html",
            str(tmp_path / "r.html"),
            "--write-calibration",
            str(tmp_path / "calib.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["version"] == 1 and report["rows"] == 2 and report["cache"]["scored"] == 2
    calib = json.loads((tmp_path / "calib.json").read_text())
    assert calib["kind"] == "pcdlint-temperature-calibration"
    assert set(calib["fields"]) == {"assigned_tier", "product_area", "sentiment", "refund_requested"}
    assert calib["fields"]["assigned_tier"]["first_token"]["temperature"] > 0
    assert "<svg" in (tmp_path / "r.html").read_text()
    again = CliRunner().invoke(
        cli,
        [
            "eval",
            str(SCHEMA),
            "--data",
            str(DATA),
            "--limit",
            "2",
            "--no-letters",
            "--device",
            "cpu",
            "--dtype",
            "float32",
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
    )
    assert again.exit_code == 0 and "cache: 2 hit(s), 0 scored" in again.output
