"""No network unless --allow-download (issue 13): every socket connect fails and is recorded.

Each command runs in a subprocess whose `sitecustomize` makes socket connects raise and logs
every attempt. HF_HUB_OFFLINE is *unset* in the child, so what keeps the hub quiet is
pcdlint's own policy (auditor.netpolicy), not the test environment. The --allow-download row
proves the trap works: there a connect attempt must be logged, and the failure is one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support import seed_cache

TRAP = """
import os, socket
_log = os.environ["PCDLINT_TEST_CONNECT_LOG"]
def _refuse(self, address, *args, **kwargs):
    with open(_log, "a") as handle:
        handle.write(repr(address) + "\\n")
    raise OSError(101, "network is unreachable (test trap)")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
def _no_dns(host, *args, **kwargs):  # a name lookup is the first step of any request
    _refuse(None, host)
socket.getaddrinfo = _no_dns
"""
SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"enum": ["CAT_001", "CAT_002", "CAT_103"]},
        "remote": {"$ref": "https://example.com/schemas/remote.json#/$defs/x"},
        "other": {"$ref": "http://127.0.0.1:9/other.json"},
    },
}


@pytest.fixture
def trapped(tmp_path):
    trap_dir = tmp_path / "trap"
    trap_dir.mkdir()
    (trap_dir / "sitecustomize.py").write_text(TRAP)
    log = tmp_path / "connects.log"
    schema = tmp_path / "remote_refs.json"
    schema.write_text(json.dumps(SCHEMA))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "GITHUB_ACTIONS")
    }
    env.update(
        PYTHONPATH=os.pathsep.join([str(trap_dir), env.get("PYTHONPATH", "")]),
        PCDLINT_TEST_CONNECT_LOG=str(log),
        PCDLINT_CACHE_DIR=str(seed_cache(tmp_path / "cache")),
        HF_HOME=str(tmp_path / "hf-home"),
    )

    def run(*args):
        result = subprocess.run(
            [sys.executable, "-m", "auditor", *map(str, args)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        attempts = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return result, attempts

    return run, schema


def test_the_trap_is_installed(trapped):
    run, _ = trapped
    result = subprocess.run(
        [sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9))"],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    assert result.returncode == 0 or "Connection refused" in result.stderr  # unpatched: a real attempt
    done, attempts = run("rules")
    assert done.returncode == 0 and attempts == []


def test_check_with_remote_refs_never_connects(trapped):
    run, schema = trapped
    result, attempts = run("check", schema)
    assert attempts == [], attempts
    assert result.returncode == 1, result.stderr
    assert "remote $ref 'https://example.com/schemas/remote.json#/$defs/x' not followed" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("check", "-t", "pcdlint-test-org/no-such-tokenizer"),
        pytest.param(
            ("check", "--verify", "--model", "pcdlint-test-org/no-such-model"), marks=pytest.mark.slow
        ),
        pytest.param(("verify", "--model", "pcdlint-test-org/no-such-model"), marks=pytest.mark.slow),
        pytest.param(
            (
                "verify",
                "--backend",
                "openai",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--tokenizer",
                "pcdlint-test-org/no-such-tokenizer",
            ),
            marks=pytest.mark.slow,
        ),
        pytest.param(
            (
                "verify",
                "--backend",
                "openai",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "pcdlint-test-org/no-such-model",
            ),
            marks=pytest.mark.slow,
        ),
    ],
    ids=[
        "check-hub-tokenizer",
        "check-verify-hub-model",
        "verify-hub-model",
        "server-hub-tokenizer",
        "server-hub-model",
    ],
)  # slow: they import torch
def test_hub_ids_without_allow_download_never_connect(trapped, args):
    if "--model" in args:
        pytest.importorskip("torch")
    run, schema = trapped
    result, attempts = run(*args, schema)
    assert attempts == [], attempts
    assert result.returncode == 2, result.stderr
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "not in the local Hugging Face cache" in errors[0], result.stderr


@pytest.mark.slow  # huggingface_hub retries for ~25 s before giving up
def test_allow_download_tries_and_fails_in_one_line(trapped):
    run, schema = trapped
    result, attempts = run("check", "-t", "pcdlint-test-org/no-such-tokenizer", "--allow-download", schema)
    assert attempts, "with --allow-download a request is expected (proves the trap sees it)"
    assert result.returncode == 2
    errors = result.stderr.strip().splitlines()
    assert (
        len(errors) == 1 and "could not download tokenizer 'pcdlint-test-org/no-such-tokenizer'" in errors[0]
    )
