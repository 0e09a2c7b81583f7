"""eval at scale on the schema path (issue 48): the memory of `pcdlint eval SCHEMA --data ROWS`
at 10,000 and 100,000 rows.

The rows are the support-triage fixture's first four tickets (each padded to about 1 KB), cycled,
each with its own id and its labels: a run holds as many rows as a set of that many distinct
tickets would, but its score cache, warmed on the four contexts first, answers every row, so no
model prefill runs (the in-process SmolLM2 takes a prefill per row: 100,000 rows would be
hours). What is measured is what the run keeps per row: reading and checking, the cache lookup,
the per-field tallies, the predictions spilled to disk and the JSON report written from them.

Each row count runs in a fresh process that loads the model, then runs the `pcdlint eval`
command in that process (``--no-letters -q -f json -o FILE``) and prints:

- the process's peak RSS (the model load is most of it, ~600 MB here, so it masks the rows);
- the growth: how far the resident memory went above what it was before the command (the peak
  reset through /proc/self/clear_refs after the model loaded), the part that is the rows';
- the command's wall and CPU seconds and CPU per row.

Linux only. Usage: python benchmarks/eval_schema_scale.py [--rows 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "fixtures" / "eval" / "support_triage_eval.json"
sys.path.insert(0, str(REPO / "tests"))
from support import TRIAGE_CONTEXTS as CONTEXTS  # noqa: E402
from support import padded_triage_rows  # noqa: E402

CHILD = r"""
import gc, json, resource, sys, time
from pathlib import Path
from click.testing import CliRunner
from auditor.cli.main import cli
from auditor.decoder import load_model

schema, data, cache, report, limit = sys.argv[1:6]
load_model(device="cpu", dtype="float32", progress=False)

def status(name):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])

args = ["eval", schema, "--data", data, "--no-letters", "--device", "cpu", "--dtype", "float32",
        "--cache-dir", cache, "-q", "-f", "json", "-o", report] + (["--limit", limit] if limit != "0" else [])
gc.collect()
before = status("VmRSS")
Path("/proc/self/clear_refs").write_text("5")
started, cpu = time.perf_counter(), time.process_time()
result = CliRunner().invoke(cli, args)
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
assert result.exit_code == 0, result.output
print(json.dumps({"before_kib": before, "growth_kib": status("VmHWM") - before,
                  "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "wall": wall, "cpu": cpu}))
"""


def run(data: Path, cache: Path, report: Path, limit: int = 0) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(SCHEMA), str(data), str(cache), str(report), str(limit)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"eval failed ({done.returncode}): {done.stderr[-600:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pcdlint-schema-scale-") as tmp:
        directory = Path(tmp)
        cache = directory / "cache"
        files = {count: padded_triage_rows(directory / f"rows{count}.jsonl", count) for count in args.rows}
        run(files[args.rows[0]], cache, directory / "warm.json", limit=CONTEXTS)  # the contexts scored
        print(
            f"{'rows':>9} {'file MB':>8} {'peak RSS MB':>12} {'growth MB':>10} {'wall s':>7} {'CPU ms/row':>11}  load"
        )
        for count, path in files.items():
            got = run(path, cache, directory / f"report{count}.json")
            report = json.loads((directory / f"report{count}.json").read_text())
            assert report["rows"] == count and report["cache"]["scored"] == 0, report["cache"]
            print(
                f"{count:>9,} {path.stat().st_size / 1e6:>8.1f} {got['peak_kib'] / 1024:>12.0f} "
                f"{got['growth_kib'] / 1024:>10.1f} {got['wall']:>7.1f} {1000 * got['cpu'] / count:>11.2f}  "
                f"{os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
