"""eval through a served decision model: pcdlint's rows/s against a bare client loop, same run.

For concurrency 1, 2 and 4: ``pcdlint``'s decision eval (``run_decision_eval`` through
``SystemOneBackend`` and the one HTTP client, no cache) and a bare loop (a few lines on the same
HTTP library, httpx2, no pcdlint code) sending the same System One bodies with the same number
of requests in flight. The two alternate, bare first, and each is timed ``--repeat`` times; the
ratio is of medians. Target (issue 31): pcdlint >= 0.85x the bare loop at each concurrency. Also
pcdlint's own CPU per request (this process's CPU time over the requests it sent; the server
runs in another process).

The server is llm2jev serving SmolLM2-135M-Instruct (tests/served/llm2jev_server.py), started
here unless ``--base-url`` names one; the rows are fixtures/served/ticket_triage.jsonl (test data,
not a benchmark of the model).

Usage: python benchmarks/served_eval.py [--base-url URL] [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
REQUEST = REPO / "fixtures" / "served" / "ticket_triage.json"
ROWS = REPO / "fixtures" / "served" / "ticket_triage.jsonl"


def start_server() -> tuple[subprocess.Popen, str]:
    from auditor.decoder.model import converted_dir, default_gguf_path, load_model

    load_model(device="cpu", dtype="float32", progress=False)  # writes the HF conversion once
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "tests" / "served" / "llm2jev_server.py"),
            str(converted_dir(default_gguf_path())),
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                return process, url
        except OSError:
            if process.poll() is not None:
                raise SystemExit("the llm2jev server exited") from None
            time.sleep(0.5)
    raise SystemExit("the llm2jev server did not come up")


def bare_loop(url: str, bodies: list[dict], concurrency: int) -> float:
    """Seconds to POST every body with ``concurrency`` in flight: httpx2 and a thread pool only."""
    import httpx2

    with httpx2.Client(timeout=600, limits=httpx2.Limits(max_connections=concurrency)) as client:

        def post(body: dict) -> dict:
            response = client.post(url + "/v1/systemone", json=body)
            response.raise_for_status()
            return response.json()

        started = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            answers = list(pool.map(post, bodies))
        elapsed = time.perf_counter() - started
    assert all("answers" in a for a in answers)
    return elapsed


def pcdlint_eval(url: str, body: dict, rows: list, concurrency: int) -> tuple[float, float, int]:
    """Seconds, this process's CPU seconds, and requests for a decision eval of ``rows``."""
    from auditor.decoder.http import HttpClient
    from auditor.decoder.systemone import SystemOneBackend
    from auditor.eval.decisions import DecisionEvalOptions, run_decision_eval

    client = HttpClient(url, read_deadline=600, max_connections=concurrency)
    engine = SystemOneBackend(client, client.base_url)
    options = DecisionEvalOptions(concurrency=concurrency, cache_dir=None)
    cpu, started = time.process_time(), time.perf_counter()
    report = run_decision_eval(engine, body, rows, options, request_path=str(REQUEST), data_path=str(ROWS))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    client.close()
    assert not report["failed"], report["failed"]
    return elapsed, cpu, client.stats["requests"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base-url")
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from auditor.eval.decisions import load_decision_rows

    body = json.loads(REQUEST.read_text())
    rows = load_decision_rows(ROWS, body)[: args.rows]
    bodies = [{**body, "state": row.state} for row in rows]
    process, url = (None, args.base_url) if args.base_url else start_server()
    try:
        bare_loop(url, bodies[:2], 1)  # warm-up: the server's first forward
        print(f"{len(rows)} rows, {len(body['questions'])} questions a row, server {url}")
        print(
            f"{'concurrency':>11} {'bare rows/s':>12} {'pcdlint rows/s':>15} {'ratio':>6} {'pcdlint CPU/request':>20}"
        )
        for concurrency in (1, 2, 4):
            bare, ours, cpus = [], [], []
            for _ in range(args.repeat):
                bare.append(bare_loop(url, bodies, concurrency))
                elapsed, cpu, requests = pcdlint_eval(url, body, rows, concurrency)
                ours.append(elapsed)
                cpus.append(cpu / max(1, requests))
            bare_rate, our_rate = len(rows) / statistics.median(bare), len(rows) / statistics.median(ours)
            print(
                f"{concurrency:>11} {bare_rate:>12.2f} {our_rate:>15.2f} {our_rate / bare_rate:>6.2f} "
                f"{statistics.median(cpus) * 1000:>17.1f} ms"
            )
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
