"""The pre-commit hook, for real: `pre-commit try-repo` installs pcdlint from this checkout into a
fresh hook environment and runs it on a bad and a clean schema in a temporary git repository.

try-repo on a local path uses HEAD plus staged and modified tracked files, never untracked ones;
so the test snapshots this checkout's working tree (tracked and untracked, not ignored) into a
temporary repository and commits it. That works on a clean CI clone and on a working copy alike.
The hook environment installs pcdlint's dependencies with pip (PyPI or the configured index).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import REPO

pytestmark = pytest.mark.hook

HOOKS_FILE = REPO / ".pre-commit-hooks.yaml"
BAD = '{"type": "object", "properties": {"category": {"enum": ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]}}}\n'
CLEAN = '{"type": "object", "properties": {"risk": {"enum": ["low", "high"]}}}\n'


def test_hook_definition():
    hooks = yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["pcdlint"]
    hook = hooks[0]
    assert hook["entry"] == "pcdlint check"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["json", "yaml"]
    assert hook["require_serial"] is True
    assert hook["minimum_pre_commit_version"] == "2.9.0"


def _git(*args: str, cwd: Path, env: dict) -> str:
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout


def _snapshot(target: Path, env: dict) -> Path:
    """Commit this checkout's working tree (what a clean clone or a working copy holds)."""
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO, env=env)
    target.mkdir()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git("init", "-q", cwd=target, env=env)
    _git("add", "-A", cwd=target, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=target, env=env)
    return target


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory):
    pytest.importorskip("pre_commit", reason="pre-commit is installed by the `test` extra")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    base = tmp_path_factory.mktemp("precommit")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid", PRE_COMMIT_HOME=str(base / "home"),
               HF_HUB_OFFLINE="1")
    probe = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=REPO, env=env,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("this checkout is not a git working tree; try-repo needs one")
    hook_repo = _snapshot(base / "pcdlint", env)
    project = base / "project"
    project.mkdir()
    (project / "bad.json").write_text(BAD, encoding="utf-8")
    (project / "clean.json").write_text(CLEAN, encoding="utf-8")
    (project / ".pcdlint.toml").write_text("", encoding="utf-8")  # no config from above tmp
    _git("init", "-q", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)
    return hook_repo, project, env


def _try_repo(hook_env, *files: str) -> subprocess.CompletedProcess:
    hook_repo, project, env = hook_env
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "pcdlint",
               "--verbose", "--files", *files]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)


def test_try_repo_fails_on_bad_schema(hook_env):
    done = _try_repo(hook_env, "bad.json")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Failed" in output
    assert "bad.json:1:" in output and "PCD001 error [qwen2.5] category:" in output, output


def test_try_repo_passes_on_clean_schema(hook_env):
    done = _try_repo(hook_env, "clean.json")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Passed" in output
    assert "PCD0" not in output
