"""The pre-commit hook, for real: `pre-commit run` with a `.pre-commit-config.yaml` that names a
snapshot of this checkout (`repo:` its path, `rev:` its commit) installs pcdlint into a fresh
hook environment and runs it on a bad and a clean schema in a temporary git repository.

The test snapshots this checkout's working tree (tracked and untracked, not ignored) into a
temporary repository and commits it, so it works on a clean CI clone and on a working copy alike.
pre-commit keys its hook environments by repo and rev: the second run reuses the first's, as a
user's second commit does.
The hook environment installs pcdlint's dependencies with pip (PyPI or the configured index).
"""

from __future__ import annotations

import os
import re
import shlex
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
    # the installed console script (the repository is never on sys.path), and `--` last: the
    # staged file names pre-commit appends are never read as options
    assert hook["entry"] == "pcdlint check --allow-unrecognized --"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["json", "yaml", "python", "javascript", "ts", "tsx"]
    assert hook["require_serial"] is True
    assert hook["minimum_pre_commit_version"] == "2.9.0"


def _hook_entry(*files: Path, entry: str | None = None) -> subprocess.CompletedProcess:
    """Run the hook's entry as pre-commit does: the entry (the installed console script), then
    the files. `entry` overrides it as a user's `.pre-commit-config.yaml` may."""
    hooks = yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8"))
    command = shlex.split(entry or hooks[0]["entry"])
    assert command[0] == "pcdlint"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    script = Path(sys.executable).parent / "pcdlint"
    return subprocess.run(
        [str(script), *command[1:], *(f.name for f in files)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=files[0].parent,
    )


def test_hook_default_lists_other_json_files_and_still_fails_bad_schemas(tmp_path):
    """The decision: in a repo whose other JSON files are not schemas, the hook keeps working."""
    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")
    package = tmp_path / "package.json"
    package.write_text('{"name": "app", "version": "1.0.0", "dependencies": {}}\n', encoding="utf-8")
    workflow = tmp_path / "ci.yml"
    workflow.write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n", encoding="utf-8")
    (tmp_path / "bad.json").write_text(BAD, encoding="utf-8")
    (tmp_path / "clean.json").write_text(CLEAN, encoding="utf-8")
    only_others = _hook_entry(package, workflow)
    assert only_others.returncode == 0, only_others.stderr
    assert "2 files had no schema: package.json, ci.yml" in only_others.stdout
    clean = _hook_entry(tmp_path / "clean.json", package)
    assert clean.returncode == 0 and "1 file had no schema: package.json" in clean.stdout
    bad = _hook_entry(tmp_path / "bad.json", package)
    assert bad.returncode == 1 and "PCD001" in bad.stdout
    strict = _hook_entry(tmp_path / "clean.json", package, entry="pcdlint check --no-allow-unrecognized --")
    assert strict.returncode == 2 and "no schema found in package.json" in strict.stderr


def test_hook_reads_file_names_as_files_never_as_options(tmp_path):
    """A file named like an option is linted as a file: the findings still fail the hook, no
    baseline or report is written, and the unstaged package.json is left as it was."""
    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")
    package = tmp_path / "package.json"
    package.write_text('{"name": "app"}\n', encoding="utf-8")
    baseline = tmp_path / "--write-baseline=x.json"
    html = tmp_path / "--output-html=package.json"
    for planted in (baseline, html):
        planted.write_text(BAD, encoding="utf-8")
    done = _hook_entry(baseline, html)
    assert done.returncode == 1, done.stderr
    assert "--write-baseline=x.json:1:" in done.stdout and "--output-html=package.json:1:" in done.stdout
    assert not (tmp_path / "x.json").exists()
    assert package.read_text(encoding="utf-8") == '{"name": "app"}\n'


def test_hook_runs_nothing_from_the_linted_repository(tmp_path):
    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")
    (tmp_path / "bad.json").write_text(BAD, encoding="utf-8")
    for name in ("click.py", "csv.py", "fnmatch.py", "orjson.py", "tomllib.py", "auditor/__init__.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("open('PWNED', 'w').close()\n", encoding="utf-8")
    done = _hook_entry(tmp_path / "bad.json")
    assert done.returncode == 1 and "PCD001" in done.stdout, done.stderr
    assert not (tmp_path / "PWNED").exists()


def _git(*args: str, cwd: Path, env: dict) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
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
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        PRE_COMMIT_HOME=str(base / "home"),
        HF_HUB_OFFLINE="1",
    )
    probe = subprocess.run(
        ["git", "rev-parse", "--is-inside-work-tree"], cwd=REPO, env=env, capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip("this checkout is not a git working tree; the snapshot needs one")
    hook_repo = _snapshot(base / "pcdlint", env)
    project = base / "project"
    project.mkdir()
    (project / "bad.json").write_text(BAD, encoding="utf-8")
    (project / "clean.json").write_text(CLEAN, encoding="utf-8")
    (project / ".pcdlint.toml").write_text("", encoding="utf-8")  # no config from above tmp
    rev = _git("rev-parse", "HEAD", cwd=hook_repo, env=env).strip()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: pcdlint\n", encoding="utf-8"
    )
    _git("init", "-q", cwd=project, env=env)
    _git("add", "-A", cwd=project, env=env)
    return hook_repo, project, env


def _run_hook(hook_env, *files: str) -> subprocess.CompletedProcess:
    _hook_repo, project, env = hook_env
    options = list(files) if files == ("--all-files",) else ["--files", *files]
    command = [sys.executable, "-m", "pre_commit", "run", "pcdlint", "--verbose", *options]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)


def test_hook_fails_on_bad_schema(hook_env):
    done = _run_hook(hook_env, "bad.json")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Failed" in output
    assert "bad.json:1:" in output and "category [qwen2.5] PCD001 error" in output, output
    assert "PCD001 error: 3 options collapse" in output and "Run pcdlint suggest bad.json" in output


def test_hook_takes_options_from_the_config_and_file_names_as_files(hook_env):
    """Real pre-commit: options come from the project's config ([tool.pcdlint] fail-on and a
    rule's severity),
    and a staged file named like an option is linted, not obeyed (the planted name, were it an
    option, would write a baseline and exit 0)."""
    _hook_repo, project, env = hook_env
    (project / "pyproject.toml").write_text(
        '[tool.pcdlint]\nfail-on = "warning"\n[tool.pcdlint.rules.PCD001]\nseverity = "warning"\n',
        encoding="utf-8",
    )
    (project / ".pcdlint.toml").unlink()
    planted = project / "--write-baseline=x.json"
    planted.write_text(BAD, encoding="utf-8")
    try:
        _git("add", "-A", cwd=project, env=env)
        done = _run_hook(hook_env, "--all-files")  # (pre-commit's own --files would parse the name)
        output = done.stdout + done.stderr
        assert done.returncode == 1, output
        assert "--write-baseline=x.json:1:" in output and "[qwen2.5] PCD001 warning" in output, output
        assert not (project / "x.json").exists()
    finally:
        planted.unlink()
        (project / "pyproject.toml").unlink()
        (project / ".pcdlint.toml").write_text("", encoding="utf-8")
        _git("add", "-A", cwd=project, env=env)


def test_hook_passes_on_clean_schema(hook_env):
    done = _run_hook(hook_env, "clean.json")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Passed" in output
    assert "PCD0" not in output


DOC = REPO / "docs" / "ci.md"
CONFIG_BLOCK = re.compile(r"```yaml\n# \.pre-commit-config\.yaml\n(?P<body>.*?)```", re.DOTALL)
FILE_BLOCK = re.compile(r"<!-- file: (?P<names>[^>]*?) -->\n```json\n(?P<body>.*?)```", re.DOTALL)
EXAMPLE = re.compile(r"<!-- example: pre-commit -->\n```console\n(?P<body>.*?)```", re.DOTALL)


def test_the_documented_pre_commit_example_runs_as_written(hook_env, tmp_path):
    """docs/ci.md's `.pre-commit-config.yaml`, its schema files and its console session, through
    a real `pre-commit run`: the config as printed there except `repo:`/`rev:` (the local
    snapshot, no network here), every `$` line run in order, the output and exit codes as shown."""
    from test_docs_examples import STEP, matches, steps

    hook_repo, _project, env = hook_env
    text = DOC.read_text(encoding="utf-8")
    config = CONFIG_BLOCK.search(text)
    files = FILE_BLOCK.search(text)
    example = EXAMPLE.search(text)
    assert config and files and example, "docs/ci.md lost its pre-commit example"
    rev = _git("rev-parse", "HEAD", cwd=hook_repo, env=env).strip()
    local = re.sub(r"(?m)^(\s*- repo:).*$", rf"\1 {hook_repo}", config["body"], count=1)
    local = re.sub(r"(?m)^(\s*rev:).*$", rf"\1 {rev}", local, count=1)
    assert local != config["body"] and "files: ^schemas/" in local
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(local, encoding="utf-8")
    (project / ".pcdlint.toml").write_text("", encoding="utf-8")  # no config from above tmp
    for name in files["names"].split(","):
        target = project / name.strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files["body"], encoding="utf-8")
    _git("init", "-q", cwd=project, env=env)
    _git("add", ".pre-commit-config.yaml", ".pcdlint.toml", cwd=project, env=env)
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    rc = None
    for command, expected in steps(example["body"]):
        if command.strip() == "echo $?":
            assert expected == [str(rc)], f"exit code of the step before: {rc}, not {expected}"
            continue
        done = subprocess.run(
            ["bash", "-c", f'{command} 2>&1; echo "{STEP}$?"'],
            cwd=project,
            env={**env, "PATH": path, "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=900,
        )
        output, _, code = done.stdout.rpartition(STEP)
        rc = int(code)
        got = output.rstrip("\n").splitlines()
        while expected and not expected[-1]:  # the blank line before the next `$`
            expected = expected[:-1]
        assert matches(expected, got), (
            f"$ {command}\n--- expected\n" + "\n".join(expected) + "\n--- got\n" + "\n".join(got)
        )


def test_hook_reads_python_and_typescript_requests_without_running_them(hook_env):
    """Issue 45: a staged .py or .ts file's decision request is linted (read, never run); a
    staged code file with no request is only counted."""
    _hook_repo, project, env = hook_env
    code = REPO / "fixtures" / "decisions" / "code"
    for name in ("triage.py", "triage.ts"):
        shutil.copy(code / name, project / name)
    (project / "util.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    _git("add", "triage.py", "triage.ts", "util.py", cwd=project, env=env)
    done = _run_hook(hook_env, "triage.py", "triage.ts", "util.py")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output  # (the collisions are warnings; fail-on is error)
    assert "triage.py:14:9: question team › choice PCD101 warning" in output, output
    assert "triage.ts:8:5: question team › choice PCD101 warning" in output, output
    assert "1 code file held no decision request" in output, output
    assert not (project / "IMPORTED.txt").exists()
