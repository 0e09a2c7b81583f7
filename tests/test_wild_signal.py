"""Issue 32: on files nobody here wrote, say only what is true and changes a decision.

Failed runs say only that they failed; selectors that read like mistyped codes are refused; the
next step names a command that works for the input; open fields stay open; a multi-token warning
that restates a collision folds into it; dialects are checked against their own rules.
"""

from __future__ import annotations

import json
import shutil

import pytest

from auditor.exitcodes import EXIT_FINDINGS, EXIT_USAGE
from support import FIXTURES, run_cli

WILD = FIXTURES / "wild"
REASSURING = ("0 findings", "decided wrongly", "No field")


def codes(done) -> list[str]:
    return [f["code"] for f in json.loads(done.stdout)["findings"]]


# --------------------------------------------------------------------------- failed runs


@pytest.mark.parametrize("make", ["missing", "broken", "empty-dir"])
def test_a_failed_run_prints_no_verdict(tmp_path, make):
    target = tmp_path / "x.json"
    if make == "broken":
        target.write_text("{bad")
    elif make == "empty-dir":
        target = tmp_path / "empty"
        target.mkdir()
    done = run_cli("check", str(target))
    assert done.returncode == EXIT_USAGE
    assert not any(word in done.stdout for word in REASSURING), done.stdout
    assert done.stderr.strip()


def test_a_partly_failed_run_shows_findings_but_no_summary(tmp_path):
    (tmp_path / "bad.json").write_text("{bad")
    done = run_cli("check", str(tmp_path / "bad.json"), str(FIXTURES / "schemas" / "risk_triage.json"))
    assert done.returncode == EXIT_USAGE
    assert "PCD001 error" in done.stdout
    assert not any(word in done.stdout for word in ("findings in", "decided wrongly", "Run pcdlint"))


@pytest.mark.parametrize(
    ("selector", "hint"),
    [("PCD01", "'PCD01*' for PCD010-PCD013"), ("PCD0", "'PCD0*' for PCD000-"), ("PCD7", "PCD007")],
)
def test_a_short_code_prefix_needs_a_star(selector, hint):
    done = run_cli("check", "--select", selector, str(FIXTURES / "schemas" / "risk_triage.json"))
    assert done.returncode == EXIT_USAGE
    assert f"'{selector}' matches no rule; did you mean" in done.stderr and hint in done.stderr


def test_a_starred_prefix_selects_its_rules():
    path = str(FIXTURES / "schemas" / "risk_triage.json")
    low = set(codes(run_cli("check", "-f", "json", "--select", "PCD00*", path)))
    high = set(codes(run_cli("check", "-f", "json", "--select", "PCD01*", path)))
    assert "PCD001" in low and low <= {f"PCD00{i}" for i in range(10)}
    assert high and all(code.startswith("PCD01") for code in high)


def test_the_next_step_of_a_python_model_names_the_model(tmp_path):
    shutil.copytree(FIXTURES / "python" / "app", tmp_path / "app")
    done = run_cli("check", "app.models:Ticket", cwd=tmp_path)
    assert done.returncode == EXIT_FINDINGS
    assert done.stdout.rstrip().endswith("Run pcdlint suggest app.models:Ticket to see verified fixes.")
    suggested = run_cli("suggest", "app.models:Ticket", cwd=tmp_path)
    assert suggested.returncode in (0, 1) and "letter-slots" in suggested.stdout
    written = run_cli("suggest", "app.models:Ticket", "--write", str(tmp_path / "fixed.py"), cwd=tmp_path)
    assert written.returncode == EXIT_USAGE
    assert "cannot patch Python source" in written.stderr and not (tmp_path / "fixed.py").exists()
