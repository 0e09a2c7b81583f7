"""Resources on big inputs (issue 13): time and peak RSS of `pcdlint check`, at three sizes.

1. One enum of 10,000 / 50,000 / 100,000 options (one file).
2. A directory of 100 / 500 / 1,000 schema files (five fields each).

Each run is a fresh `python -m auditor check … -o /dev/null` process with --no-cache (every file
parsed, crawled and meta-validated), measured with os.wait4 (wall time, the child's peak RSS).
Growth is reported as ratios against the smallest size: linear means time and the RSS above a
bare start-up grow about as the size does (`pcdlint rules` gives the start-up RSS).

Usage: python benchmarks/lint_resources.py [--quick]   (--quick: the two smaller sizes only)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def measure(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in MiB, exit code) of one `python -m auditor ARGS` process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(cwd / "cache")}
    env.pop("GITHUB_ACTIONS", None)
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "auditor", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(
            f"pcdlint {' '.join(args)} exited {child.returncode}: "
            f"{child.stderr.read().decode()[-500:] if child.stderr else ''}"
        )
    return elapsed, usage.ru_maxrss / 1024, child.returncode


def enum_file(folder: Path, options: int) -> Path:
    path = folder / f"enum{options}.json"
    values = [f"option_{i:06d}_{'abcdefghij'[i % 10]}" for i in range(options)]
    path.write_text(json.dumps({"type": "object", "properties": {"big": {"enum": values}}}))
    return path


def schema_dir(folder: Path, files: int) -> Path:
    directory = folder / f"dir{files}"
    directory.mkdir()
    for i in range(files):
        properties = {f"field_{j}": {"enum": [f"value_{i}_{j}_{k}" for k in range(6)]} for j in range(5)}
        (directory / f"schema_{i:04d}.json").write_text(
            json.dumps({"type": "object", "properties": properties}, indent=2)
        )
    return directory


def report(title: str, rows: list[tuple[int, float, float]], base_rss: float, unit: str) -> None:
    print(title)
    first_n, first_t, first_rss = rows[0]
    for n, seconds, rss in rows:
        growth = (rss - base_rss) / max(first_rss - base_rss, 1e-9)
        print(
            f"  {n:>7,} {unit}: {seconds:6.2f} s, peak RSS {rss:6.0f} MiB   "
            f"(size x{n / first_n:.0f}: time x{seconds / first_t:.1f}, RSS above start-up x{growth:.1f})"
        )


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory(prefix="pcdlint-resources-") as name:
        folder = Path(name)
        _, base_rss, _ = measure(["rules"], folder)
        print(f"start-up (pcdlint rules): peak RSS {base_rss:.0f} MiB")
        warm = enum_file(folder, 10)  # converts the tokenizer into the cache once
        measure(["check", str(warm), "-o", "/dev/null"], folder)

        rows = []
        for options in (10_000, 50_000) if quick else (10_000, 50_000, 100_000):
            path = enum_file(folder, options)
            seconds, rss, _ = measure(["check", str(path), "--no-cache", "-o", "/dev/null"], folder)
            rows.append((options, seconds, rss))
        report("one enum field (text report, --no-cache):", rows, base_rss, "options")

        rows = []
        for files in (100, 500) if quick else (100, 500, 1_000):
            directory = schema_dir(folder, files)
            seconds, rss, _ = measure(["check", str(directory), "--no-cache", "-o", "/dev/null"], folder)
            rows.append((files, seconds, rss))
        report(
            "a directory of schema files, 5 fields each (text report, --no-cache):", rows, base_rss, "files"
        )


if __name__ == "__main__":
    main()
