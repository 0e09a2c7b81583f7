"""`--max-warnings N` (and config `max-warnings`): exit 1 when more than N warning findings remain
after suppressions and the baseline; errors still fail by --fail-on; --exit-zero wins."""

from __future__ import annotations

import json

import pytest

from support import run_cli

# two PCD007 warnings (names equal after case folding), nothing at error
WARNINGS = {
    "type": "object",
    "properties": {
        "a": {"enum": ["Yes", "yes", "No"]},
        "b": {"enum": ["Low", "low", "High"]},
    },
}
# one PCD001 error
ERROR = {"type": "object", "properties": {"c": {"enum": ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]}}}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "warn.json").write_text(json.dumps(WARNINGS), encoding="utf-8")
    (tmp_path / "error.json").write_text(json.dumps(ERROR), encoding="utf-8")
    return tmp_path


def _warnings(project) -> int:
    done = run_cli("check", "-f", "json", "warn.json", cwd=project)
    return sum(f["severity"] == "warning" for f in json.loads(done.stdout)["findings"])


@pytest.mark.parametrize(("limit", "code"), [(None, 0), ("2", 0), ("1", 1), ("0", 1)])
def test_exit_by_the_warning_count(project, limit, code):
    assert _warnings(project) == 2
    args = ["check", "warn.json"] + (["--max-warnings", limit] if limit else [])
    done = run_cli(*args, cwd=project)
    assert done.returncode == code, done.stderr
    if code:
        assert f"2 warnings, more than --max-warnings {limit}" in done.stderr


def test_errors_still_fail_by_fail_on(project):
    assert run_cli("check", "error.json", "--max-warnings", "100", cwd=project).returncode == 1
    # under --fail-on warning a warning is a failure whatever the budget
    assert (
        run_cli("check", "warn.json", "--fail-on", "warning", "--max-warnings", "5", cwd=project).returncode
        == 1
    )


def test_exit_zero_wins(project):
    assert run_cli("check", "warn.json", "--max-warnings", "0", "--exit-zero", cwd=project).returncode == 0


def test_config_key_and_flag_over_it(project):
    (project / ".pcdlint.toml").write_text("max-warnings = 1\n", encoding="utf-8")
    assert run_cli("check", "warn.json", cwd=project).returncode == 1
    assert run_cli("check", "warn.json", "--max-warnings", "2", cwd=project).returncode == 0
    shown = run_cli("check", "--show-config", cwd=project).stdout
    assert "max-warnings = 1  #" in shown


def test_config_zero_applies_and_flag_zero_overrides(project):
    (project / ".pcdlint.toml").write_text("max-warnings = 5\n", encoding="utf-8")
    assert run_cli("check", "warn.json", cwd=project).returncode == 0
    assert run_cli("check", "warn.json", "--max-warnings", "0", cwd=project).returncode == 1


@pytest.mark.parametrize("value", ["-1", "true", '"3"', "1.5"])
def test_bad_config_value_is_a_usage_error(project, value):
    (project / ".pcdlint.toml").write_text(f"max-warnings = {value}\n", encoding="utf-8")
    done = run_cli("check", "warn.json", cwd=project)
    assert done.returncode == 2
    assert "max-warnings" in done.stderr and "Traceback" not in done.stderr


def test_suppressed_and_baselined_warnings_do_not_count(project):
    schema = json.loads(json.dumps(WARNINGS))
    schema["properties"]["a"]["x-pcdlint-ignore"] = ["PCD007"]
    (project / "warn.json").write_text(json.dumps(schema), encoding="utf-8")
    assert run_cli("check", "warn.json", "--max-warnings", "1", cwd=project).returncode == 0
    assert run_cli("check", "warn.json", "--write-baseline", "base.json", cwd=project).returncode == 0
    assert run_cli("check", "warn.json", "--max-warnings", "0", cwd=project).returncode == 1
    done = run_cli("check", "warn.json", "--baseline", "base.json", "--max-warnings", "0", cwd=project)
    assert done.returncode == 0, done.stderr
