"""The composite GitHub Action: action.yml's shape, and its lint step (action/run.sh) run locally
the way the runner runs it, with GITHUB_ACTIONS, GITHUB_STEP_SUMMARY and GITHUB_OUTPUT set."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from auditor.reporting.action_summary import MAX_ROWS, render
from support import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
BAD = '{"type": "object", "properties": {"category": {"enum": ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]}}}\n'
CLEAN = '{"type": "object", "properties": {"risk": {"enum": ["low", "high"]}}}\n'


def _sarif_available() -> bool:
    from auditor.reporting import formatters

    return "sarif" in formatters()


needs_sarif = pytest.mark.skipif(
    not _sarif_available(),
    reason="the action runs `pcdlint check --format github --output-sarif`; "
           "the sarif/github formatters (reports issue) are not in this branch yet")


def _step(uses_prefix: str | None = None, step_id: str | None = None) -> dict:
    for step in STEPS:
        if uses_prefix and step.get("uses", "").startswith(uses_prefix):
            return step
        if step_id and step.get("id") == step_id:
            return step
    raise AssertionError(f"no step {uses_prefix or step_id}")


def test_inputs_and_defaults():
    inputs = ACTION["inputs"]
    assert {"paths", "tokenizers", "fail-on", "sarif-file", "upload-sarif", "category"} <= set(inputs)
    assert inputs["upload-sarif"]["default"] == "true"
    assert inputs["fail-on"]["default"] == "error"
    assert all(spec.get("description") for spec in inputs.values())
    assert ACTION["runs"]["using"] == "composite"


def test_no_expression_inside_run_scripts():
    """Inputs reach scripts through env:, never `${{ }}` in run: (script injection)."""
    scripts = [step["run"] for step in STEPS if "run" in step]
    assert scripts
    assert not any("${{" in script for script in scripts)


def test_lint_step_passes_every_input_through_env():
    step = _step(step_id="pcdlint")
    assert step["run"].strip() == 'bash "$GITHUB_ACTION_PATH/action/run.sh"'
    assert (REPO / "action" / "run.sh").is_file()
    env = step["env"]
    for name, value in {"PCDLINT_PATHS": "paths", "PCDLINT_TOKENIZERS": "tokenizers",
                        "PCDLINT_FAIL_ON": "fail-on", "PCDLINT_SARIF_FILE": "sarif-file"}.items():
        assert env[name] == f"${{{{ inputs.{value} }}}}"
    install = next(s for s in STEPS if "pip install" in s.get("run", ""))
    assert install["env"]["PCDLINT_SOURCE"] == "${{ github.action_path }}"


def test_caches_converted_tokenizers_and_hf_home():
    cached = _step("actions/cache@")["with"]["path"].splitlines()
    env = _step(step_id="pcdlint")["env"]
    assert env["PCDLINT_CACHE_DIR"] in cached and env["HF_HOME"] in cached


def test_uploads_sarif_written_by_the_lint_step():
    upload = _step("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.pcdlint.outputs.sarif-file }}"
    assert upload["with"]["category"] == "${{ inputs.category }}"
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    run_script = (REPO / "action" / "run.sh").read_text(encoding="utf-8")
    assert '--output-sarif "$sarif_file"' in run_script and "--format github" in run_script


def _run_step(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess, str, str]:
    (tmp_path / "bad.json").write_text(BAD, encoding="utf-8")
    (tmp_path / "clean.json").write_text(CLEAN, encoding="utf-8")
    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = dict(os.environ, GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(summary),
               GITHUB_OUTPUT=str(outputs), HF_HUB_OFFLINE="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PCDLINT_PYTHON=sys.executable, **inputs)
    done = subprocess.run(["bash", str(REPO / "action" / "run.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    read = lambda p: p.read_text(encoding="utf-8") if p.exists() else ""  # noqa: E731
    return done, read(summary), read(outputs)


@needs_sarif
def test_step_annotates_and_summarises_findings(tmp_path):
    done, summary, outputs = _run_step(tmp_path, PCDLINT_PATHS="bad.json clean.json",
                                       PCDLINT_SARIF_FILE="out/pcdlint.sarif")
    assert done.returncode == 1, done.stderr
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any("bad.json" in line and "PCD001" in line for line in annotations), done.stdout
    assert (tmp_path / "out" / "pcdlint.sarif").is_file()
    assert "exit-code=1" in outputs.splitlines() and "sarif-file=out/pcdlint.sarif" in outputs.splitlines()
    assert "failed (findings at or above `error`)" in summary
    assert re.search(r"^\| error \| PCD001 first-token-collision \| `bad\.json:1:\d+` \| qwen2\.5 \|",
                     summary, re.MULTILINE), summary
    assert "clean.json" not in summary


@needs_sarif
def test_step_passes_on_clean_files(tmp_path):
    done, summary, outputs = _run_step(tmp_path, PCDLINT_PATHS="clean.json",
                                       PCDLINT_TOKENIZERS="qwen2.5, smollm2")
    assert done.returncode == 0, done.stderr
    assert "::error" not in done.stdout
    assert "exit-code=0" in outputs.splitlines()
    assert "**0 findings** — passed" in summary


@needs_sarif
def test_step_reports_usage_error(tmp_path):
    done, summary, outputs = _run_step(tmp_path, PCDLINT_PATHS="clean.json",
                                       PCDLINT_TOKENIZERS="no-such-tokenizer")
    assert done.returncode == 2
    assert "exit-code=2" in outputs.splitlines()
    assert "did not produce a report (exit code 2)" in summary


def test_inputs_are_not_evaluated_by_the_shell(tmp_path):
    done, _, outputs = _run_step(tmp_path, PCDLINT_PATHS="$(touch pwned) `touch pwned2` *.json",
                                 PCDLINT_TOKENIZERS="qwen2.5;touch pwned3")
    assert done.returncode == 2
    assert not any((tmp_path / name).exists() for name in ("pwned", "pwned2", "pwned3"))
    assert "exit-code=2" in outputs.splitlines()


def test_summary_escapes_and_caps_rows():
    results = [{"ruleId": "PCD002", "level": "warning", "message": {"text": f"a | b\nc {i}"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": "s.json"},
                                                    "region": {"startLine": i + 1, "startColumn": 3}}}],
                "properties": {"tokenizer": "qwen2.5"}} for i in range(MAX_ROWS + 5)]
    sarif = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "pcdlint", "rules": [
        {"id": "PCD002", "name": "multi-token-option"}]}}, "results": results}]}
    text = render(sarif, exit_code=0, fail_on="error")
    assert f"**{MAX_ROWS + 5} findings** ({MAX_ROWS + 5} warning) — passed" in text
    assert "| PCD002 multi-token-option | 55 |" in text
    assert "| warning | PCD002 multi-token-option | `s.json:1:3` | qwen2.5 | a \\| b c 0 |" in text
    assert text.count("| warning |") == MAX_ROWS
    assert "… and 5 more" in text
