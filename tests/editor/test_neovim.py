"""A real editor: Debian's Neovim (0.7.2), headless, its built-in LSP client started on
`pcdlint server` (vim.lsp.start_client: 0.7 has no vim.lsp.start), and the diagnostics it holds
for a fixture file read back. CI installs neovim (.ci/run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.linter.pages import rule_help_uri
from support import FIXTURES

pytest.importorskip("pygls")
NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="neovim not installed (CI installs it)")
SCRIPT = Path(__file__).with_name("nvim_lsp.lua")


def test_neovim_holds_the_findings(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    schema = project / "risk_triage.json"
    shutil.copy(FIXTURES / "schemas" / "risk_triage.json", schema)
    out = tmp_path / "diagnostics.json"
    env = dict(
        os.environ,
        PCDLINT_NVIM_ROOT=str(project),
        PCDLINT_NVIM_FILE=str(schema),
        PCDLINT_NVIM_OUT=str(out),
        PCDLINT_NVIM_CMD=json.dumps([sys.executable, "-m", "auditor", "server"]),
        HF_HUB_OFFLINE="1",
    )
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-c", f"luafile {SCRIPT}"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert out.is_file(), done.stdout + done.stderr
    held = json.loads(out.read_text(encoding="utf-8"))
    assert held["found"], held
    expected = json.loads(
        subprocess.run(
            [sys.executable, "-m", "auditor", "check", "-f", "json", "--show-info", str(schema)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        ).stdout
    )["findings"]
    # what Neovim holds is what check finds: code, 0-based line and column, severity
    severities = {"error": 1, "warning": 2, "info": 4}  # vim.diagnostic.severity: ERROR, WARN, HINT
    got = sorted((d["code"], d["lnum"], d["col"], d["severity"]) for d in held["diagnostics"])
    want = sorted((f["code"], f["line"] - 1, f["column"] - 1, severities[f["severity"]]) for f in expected)
    assert got == want and any(code == "PCD001" for code, *_ in got)
    assert all(d["source"] == "pcdlint" for d in held["diagnostics"])
    assert {d["href"] for d in held["diagnostics"] if d["code"] == "PCD001"} == {rule_help_uri("PCD001")}
