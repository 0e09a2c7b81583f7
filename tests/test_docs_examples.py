"""The console examples of the README and the docs site are run, so they cannot drift.

A ```console block preceded by the line `<!-- example: run -->` is checked: each `$ command`
runs through bash in a scratch directory that holds a copy of the repository's fixtures/ and
this venv as .venv/ (so `.venv/bin/pcdlint` and plain `pcdlint` both work), one shell for the
whole block (a file a command writes is there for the next), and its stdout and stderr together
must be the lines printed under it, with the scratch directory's path written `/repo`. An
expected line that ends in ` …` matches any line that starts with the text before it, and a line
`…` alone any run of lines; a block of `<!-- example: run, config=FILE -->` first writes the
nearest ```toml block above it to FILE in the scratch directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

MARK = re.compile(
    r"<!-- example: run(?:, config=(?P<config>[\w.\-]+))? -->\n```console\n(?P<body>.*?)```", re.DOTALL
)
STEP = "__pcdlint_example_rc="
TOML = re.compile(r"```toml\n(.*?)```", re.DOTALL)


def examples() -> list[tuple[str, str, str | None, str | None]]:
    found = []
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for n, match in enumerate(MARK.finditer(text)):
            config = None
            if match["config"]:
                tomls = TOML.findall(text, 0, match.start())
                config = tomls[-1] if tomls else None
            name = f"{page.relative_to(REPO)}#{n + 1}"
            found.append((name, match["body"], match["config"], config))
    return found


def steps(body: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def matches(expected: list[str], got: list[str]) -> bool:
    """Line by line; an expected line ` …`-terminated matches by prefix, a line `…` alone matches
    any run of lines (none included)."""
    if not expected:
        return not got
    want, rest = expected[0], expected[1:]
    if want == "…":
        return any(matches(rest, got[i:]) for i in range(len(got) + 1))
    if not got:
        return False
    line = got[0]
    same = line.startswith(want[:-2]) if want.endswith(" …") else want == line
    return same and matches(rest, got[1:])


EXAMPLES = examples()


def test_the_readme_and_docs_have_checked_examples():
    names = [name for name, *_ in EXAMPLES]
    assert any(n.startswith("README.md") for n in names), names


@pytest.mark.parametrize(("name", "body", "config_name", "config"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_console_example(name, body, config_name, config, tmp_path):
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures")
    venv_bin = Path(sys.executable).parent
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bin").symlink_to(venv_bin)
    if config_name:
        assert config is not None, f"{name}: no ```toml block above it"
        (tmp_path / config_name).write_text(config, encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "GITHUB_ACTIONS": "",
        "PCDLINT_CACHE_DIR": str(tmp_path / ".cache"),
        "COLUMNS": "200",
    }
    script, checks = [], []
    for command, expected in steps(body):
        if command.strip() == "echo $?":  # the exit code of the step before
            checks.append(("rc", command, expected))
            continue
        script.append(f'{command} 2>&1; echo "{STEP}$?"')
        checks.append(("out", command, expected))
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600
    )
    outputs = re.split(rf"^{STEP}(\d+)\n", proc.stdout, flags=re.MULTILINE)
    runs = list(zip(outputs[0::2], outputs[1::2]))  # (output, rc) per executed step
    assert len(runs) == sum(kind == "out" for kind, *_ in checks), proc.stdout + proc.stderr
    rc = None
    for kind, command, expected in checks:
        if kind == "rc":
            assert expected == [str(rc)], f"{name}: exit code of the step before: {rc}, not {expected}"
            continue
        output, rc = runs.pop(0)
        got = output.replace(str(tmp_path), "/repo").splitlines()
        assert matches(expected, got), (
            f"{name}: $ {command}\n--- expected\n" + "\n".join(expected) + "\n--- got\n" + "\n".join(got)
        )
