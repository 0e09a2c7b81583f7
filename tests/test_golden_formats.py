"""Golden outputs of `pcdlint check` on the bundled fixtures in the text, github and csv formats.

Reviewed as diffs, like ruff's snapshots: a change of wording, order or location shows up here.
After an intended change, regenerate with `PCDLINT_UPDATE_GOLDEN=1 pytest tests/test_golden_formats.py`
and review `git diff tests/golden/`.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support import REPO

GOLDEN = REPO / "tests" / "golden"
FORMATS = ("text", "github", "csv")
INPUTS = ["fixtures/schemas", "fixtures/inputs/openai_function_tool.json"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_output_matches_its_golden_file(fmt, tmp_path):
    env = {**os.environ, "GITHUB_ACTIONS": "", "NO_COLOR": "1", "PCDLINT_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "auditor", "check", "-f", fmt, *INPUTS],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr  # the fixtures are meant to have findings
    golden = GOLDEN / f"check_fixtures.{fmt}.txt"
    if os.environ.get("PCDLINT_UPDATE_GOLDEN") == "1":
        golden.write_text(proc.stdout, encoding="utf-8")
    assert proc.stdout == golden.read_text(encoding="utf-8")
