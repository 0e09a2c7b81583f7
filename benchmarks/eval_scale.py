"""eval at scale (issue 48): rows/s of `pcdlint eval --backend systemone --no-cache` against a
bare client loop, whole processes, against a System One stand-in that answers in a fixed delay.

- The server is ``benchmarks/systemone_standin.py`` (a measuring instrument: it runs no model
  and answers after ``--delay-ms``); its capacity is measured first, with the delay at 0 and a
  light asyncio load generator, so that it is known not to be what saturates.
- The bare loop is a whole process too: httpx2 (the HTTP library the issue names) and a thread
  pool of C threads posting the same request bodies (each row's state spliced into the request,
  all encoded before its first request, inside the timed process) and parsing each answer as
  JSON; no pcdlint code. A second bare loop ("core") does the same one layer down, on httpcore2's
  connection pool: the layer pcdlint's client talks to directly (``auditor.decoder.http``), so
  pcdlint's ratio to it says how much of a gain is the layer skipped rather than pcdlint's own.
  "ratio" is pcdlint's rows/s over the httpx2 loop's, "to core" over the httpcore2 loop's.
- pcdlint: ``pcdlint eval REQUEST --data ROWS --backend systemone --base-url URL --no-cache
  --concurrency C -q`` (its start-up, the data checked before the first request, the report).
- They alternate (the bare loops first) ``--repeat`` times per concurrency; rows/s are medians, the
  ratio is of the medians; CPU per row is the process's user+system time over the rows. At 1 in
  flight a row takes the delay, so that line runs ``--rows-at-1`` rows (1,000: 20 s a process).
- ``--before PATH``: a second pcdlint (another checkout's, e.g. a script that runs the branch
  point's code) measured in the same rounds, after the bare loop and before this one.
- The stand-in's own CPU per row (its processes' user+system time over the pcdlint runs) is
  printed per line: on a 2-core machine it competes with the client for the cores.
- This checkout's ``auditor`` package is byte-compiled first (as ``pip install`` leaves it): with
  ``PYTHONDONTWRITEBYTECODE`` set and no bytecode, every pcdlint process would compile its
  modules again (about 0.3 s of CPU), a cost no installed copy pays.
- Peak RSS of pcdlint at each row count in ``--rss-rows`` (10,000 and 100,000 by default).

The machine is shared: the load average is printed with each line; compare ratios, not rates.

Usage: python benchmarks/eval_scale.py [--rows 10000] [--repeat 3] [--concurrency 1 16 64 256]
       [--delay-ms 20] [--rss-rows 10000 100000] [--pcdlint PATH] [--before PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REQUEST = REPO / "fixtures" / "served" / "ticket_triage.json"
ROWS = REPO / "fixtures" / "served" / "ticket_triage.jsonl"
STANDIN = REPO / "benchmarks" / "systemone_standin.py"

# what both bare loops do before their first request: every body encoded, each row's state spliced in
BODIES = r"""
import json, sys
from concurrent.futures import ThreadPoolExecutor
url, data, request, concurrency = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
body = json.load(open(request))
bodies = []
for line in open(data, encoding="utf-8"):
    row = json.loads(line)
    bodies.append(json.dumps({**body, "state": row["state"]}).encode())
"""

BARE = (
    BODIES
    + r"""
import httpx2
with httpx2.Client(timeout=600, limits=httpx2.Limits(max_connections=concurrency,
                   max_keepalive_connections=concurrency)) as client:
    headers = {"content-type": "application/json"}
    def post(content):
        response = client.post(url + "/v1/systemone", content=content, headers=headers)
        response.raise_for_status()
        return response.json()
    with ThreadPoolExecutor(concurrency) as pool:
        answers = list(pool.map(post, bodies))
assert all("answers" in a for a in answers)
"""
)

# the same loop one layer down: httpcore2, the connection layer httpx2 sends through and the one
# pcdlint's client (auditor.decoder.http) talks to directly, with one shared pool of C connections
BARE_CORE = (
    BODIES
    + r"""
import httpcore2
target = url + "/v1/systemone"
headers = [(b"content-type", b"application/json")]
with httpcore2.ConnectionPool(max_connections=concurrency, max_keepalive_connections=concurrency) as pool:
    def post(content):
        response = pool.request("POST", target, headers=headers, content=content)
        assert response.status == 200, response.status
        return json.loads(response.content)
    with ThreadPoolExecutor(concurrency) as executor:
        answers = list(executor.map(post, bodies))
assert all("answers" in a for a in answers)
"""
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_standin(delay_ms: float, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(STANDIN),
            str(REQUEST),
            str(port),
            "--delay-ms",
            str(delay_ms),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    return process, f"http://127.0.0.1:{port}"


async def _capacity(port: int, body: bytes, connections: int, seconds: float) -> float:
    request = (
        f"POST /v1/systemone HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    done = 0
    end = time.monotonic() + seconds

    async def one() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.monotonic() < end:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            done += 1
        writer.close()

    started = time.monotonic()
    await asyncio.gather(*(one() for _ in range(connections)))
    return done / (time.monotonic() - started)


def standin_capacity(workers: int) -> float:
    """Answers/s of the stand-in with no delay, 64 connections of a light asyncio client."""
    process, url = start_standin(0.0, workers)
    try:
        body = json.dumps({**json.loads(REQUEST.read_text()), "state": "x" * 200}).encode()
        return asyncio.run(_capacity(int(url.rsplit(":", 1)[1]), body, 64, 3.0))
    finally:
        process.terminate()
        process.wait(timeout=30)


def tree_cpu(pid: int) -> float:
    """User+system seconds of a process and its live descendants so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            todo += [int(c) for c in Path(f"/proc/{current}/task/{current}/children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total


def make_rows(count: int, directory: Path) -> Path:
    path = directory / f"rows{count}.jsonl"
    if path.exists():
        return path
    rows = [json.loads(line) for line in ROWS.read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            row = rows[index % len(rows)]
            handle.write(json.dumps({**row, "id": f"r{index}", "state": f"{row['state']} (#{index})"}) + "\n")
    return path


def timed(command: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak RSS KiB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss


def pcdlint_command(pcdlint: str, url: str, data: Path, concurrency: int) -> list[str]:
    return [
        pcdlint, "eval", str(REQUEST), "--data", str(data), "--backend", "systemone", "--base-url", url,
        "--no-cache", "--concurrency", str(concurrency), "-q",
    ]  # fmt: skip


def peak_rss(pcdlint: str, url: str, data: Path, concurrency: int) -> int:
    code = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *pcdlint_command(pcdlint, url, data, concurrency)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rows-at-1", type=int, default=1_000, help="rows at 1 in flight (20 ms each)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rss-rows", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--pcdlint", default=str(Path(sys.executable).parent / "pcdlint"))
    parser.add_argument("--before", help="a second pcdlint executable, measured in the same rounds")
    parser.add_argument("--skip-capacity", action="store_true")
    args = parser.parse_args()
    directory = Path(tempfile.gettempdir()) / "pcdlint-eval-scale"
    directory.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "auditor")], check=True)
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    if not args.skip_capacity:
        print(
            f"stand-in capacity (delay 0, {args.workers} workers): {standin_capacity(args.workers):,.0f} answers/s"
        )
    process, url = start_standin(args.delay_ms, args.workers)
    try:
        print(
            f"{args.rows} rows ({args.rows_at_1} at 1 in flight), delay {args.delay_ms:g} ms, server {url}, cpus {os.cpu_count()}"
        )
        before = f"{'before rows/s':>14} {'ratio':>6} {'before CPU/row':>15} " if args.before else ""
        print(f"{'in flight':>9} {'bare rows/s':>12} {'core rows/s':>12} {before}{'pcdlint rows/s':>15} {'ratio':>6} "
              f"{'to core':>8} {'bare CPU/row':>13} {'core CPU/row':>13} {'pcdlint CPU/row':>16} "
              f"{'stand-in CPU/row':>17}  load")  # fmt: skip
        for concurrency in args.concurrency:
            count = args.rows if concurrency > 1 else args.rows_at_1
            rows = make_rows(count, directory)
            walls: dict[str, list[float]] = {"bare": [], "core": [], "before": [], "pcdlint": []}
            cpus: dict[str, list[float]] = {"bare": [], "core": [], "before": [], "pcdlint": []}
            server = []
            for _ in range(args.repeat):
                runs = [
                    ("bare", [sys.executable, "-c", BARE, url, str(rows), str(REQUEST), str(concurrency)]),
                    (
                        "core",
                        [sys.executable, "-c", BARE_CORE, url, str(rows), str(REQUEST), str(concurrency)],
                    ),
                ]
                if args.before:
                    runs.append(("before", pcdlint_command(args.before, url, rows, concurrency)))
                runs.append(("pcdlint", pcdlint_command(args.pcdlint, url, rows, concurrency)))
                for name, command in runs:
                    served = tree_cpu(process.pid)
                    wall, cpu, _rss = timed(command)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
                    if name == "pcdlint":
                        server.append(tree_cpu(process.pid) - served)

            def rate(name: str) -> float:
                return count / statistics.median(walls[name])  # noqa: B023 (used at once)

            def per_row(values: list[float]) -> str:
                return f"{statistics.median(values) / count * 1000:.2f} ms"  # noqa: B023

            shown = (
                f"{rate('before'):>14.0f} {rate('before') / rate('bare'):>6.2f} {per_row(cpus['before']):>15} "
                if args.before
                else ""
            )
            load = os.getloadavg()[0]
            print(
                f"{concurrency:>9} {rate('bare'):>12.0f} {rate('core'):>12.0f} {shown}{rate('pcdlint'):>15.0f} "
                f"{rate('pcdlint') / rate('bare'):>6.2f} {rate('pcdlint') / rate('core'):>8.2f} "
                f"{per_row(cpus['bare']):>13} {per_row(cpus['core']):>13} "
                f"{per_row(cpus['pcdlint']):>16} {per_row(server):>17}  {load:.1f}  ({count} rows)",
                flush=True,
            )
        for count in args.rss_rows:
            rows = make_rows(count, directory)
            print(f"pcdlint peak RSS at {count:,} rows (64 in flight): {peak_rss(args.pcdlint, url, rows, 64) / 1024:.0f} MB",
                  flush=True)  # fmt: skip
    finally:
        process.terminate()
        process.wait(timeout=30)
        print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
