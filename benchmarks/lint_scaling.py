"""How linting scales: one enum of 1k / 10k / 100k options, and 1 / 100 / 1,000 small files.

Each case runs `pcdlint check -q` as a whole process on generated schemas (warm tokenizer cache;
the analysis cache is warmed by a first run) and prints wall time, CPU time (the process and its
pool workers) and peak RSS of that process (os.wait4). For the one-enum cases and the one-file
case the same work is compared with a bare process that loads the cached tokenizer.json and
batch-encodes the options (the encode floor). Targets (issue 17): 100k options within 3x of
the floor, peak RSS under 400 MB; one file (start-up) within 1.3x of the bare process; time
per file flat from 100 to 1,000 files; the 1,000 files with the pool (both cores) against
`--jobs 1`. Ratios, not absolute times: the machine may be shared.

Usage: python benchmarks/lint_scaling.py [--quick]   (--quick: 1k/10k and 1/100 only)
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gu", "xi", "be"]


def options(n: int, seed: int = 17) -> list[str]:
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 5)))
        out[f"{word}_{rng.choice(['alpha', 'beta', 'core', 'edge'])}" if rng.random() < 0.3 else word] = None
    return list(out)


def schema(field_options: dict[str, list]) -> str:
    return json.dumps(
        {
            "type": "object",
            "properties": {name: {"type": "string", "enum": opts} for name, opts in field_options.items()},
        },
        indent=1,
    )


def measure(argv: list[str], env: dict, best: int = 1) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one child process (and its workers); the best of `best`."""
    runs = []
    for _ in range(best):
        start = time.perf_counter()
        child = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            sys.exit(f"{argv[:4]} failed: {child.stderr.read().decode()[-2000:]}")
        child.stderr.close()
        runs.append((wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return min(runs)


def bare_floor(cached: Path, texts: list[str], work: Path, env: dict, best: int = 1):
    """A bare process: load the cached tokenizer.json, batch-encode the option texts."""
    path = work / f"options_{len(texts)}.json"
    path.write_text(json.dumps(texts))
    bare = (
        "import json, sys; from tokenizers import Tokenizer; "
        f"t = Tokenizer.from_file({str(cached)!r}); "
        f"t.encode_batch(json.load(open({str(path)!r})), add_special_tokens=False)"
    )
    return measure([sys.executable, "-c", bare], env, best)


def option_texts(values: list) -> list[str]:
    from auditor.pcd.scoring import json_text

    return [json_text(v) for v in values]


def main() -> None:
    quick = "--quick" in sys.argv
    # like an installed pcdlint: compiled modules are written on the first (warm-up) run
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HF_HUB_OFFLINE"] = "1"
    work = Path(tempfile.mkdtemp(prefix="pcdlint-scaling-"))
    env.setdefault("PCDLINT_CACHE_DIR", str(work / "cache"))
    check = [sys.executable, "-m", "auditor", "check", "-q"]
    subprocess.run([*check, str(REPO / "fixtures" / "schemas")], env=env, capture_output=True)
    from auditor.tokenizers.loader import cache_dir

    os.environ.update(env)
    from auditor.tokenizers.cache import export_conversion

    (entry,) = sorted(cache_dir().glob("qwen2-*.json"))[-1:]
    cached = export_conversion(entry, work / "tokenizer.json")  # (the entry's payload)
    print(f"{'case':30} {'wall s':>7} {'CPU s':>7} {'RSS MB':>7}   {'floor CPU s':>11} {'ratio':>6}")
    for n in (1_000, 10_000) if quick else (1_000, 10_000, 100_000):
        opts = options(n)
        path = work / f"enum_{n}.json"
        path.write_text(schema({"label": opts}))
        measure([*check, str(path)], env)  # warm the analysis cache
        wall, cpu, rss = measure([*check, str(path)], env)
        fwall, fcpu, frss = bare_floor(cached, option_texts(opts), work, env)
        print(
            f"one enum, {n:>7,} options      {wall:7.2f} {cpu:7.2f} {rss:7.0f}   {fcpu:11.2f} {cpu / fcpu:6.2f}"
            f"   (bare process: {fwall:.2f} s wall, {frss:.0f} MB; targets 100k: ratio <= 3, RSS < 400)"
        )
    per_file = []
    for count in (1, 100) if quick else (1, 100, 1_000):
        folder = work / f"files_{count}"
        folder.mkdir()
        rng = random.Random(count)
        values = []
        for i in range(count):
            fields = {f"field_{k}": options(rng.randint(3, 12), seed=i * 10 + k) for k in range(3)}
            values.extend(v for opts in fields.values() for v in opts)
            (folder / f"schema_{i:04d}.json").write_text(schema(fields))
        target = [str(folder / "schema_0000.json")] if count == 1 else [str(folder)]
        measure([*check, *target], env)
        if count == 1:  # seven alternating (bare, check) pairs, medians: the machine's speed
            # moves between two runs by more than the difference measured
            pairs = [
                (bare_floor(cached, option_texts(values), work, env), measure([*check, *target], env))
                for _ in range(7)
            ]
            fwall, fcpu, _ = (statistics.median(b[k] for b, _ in pairs) for k in range(3))
            wall, cpu, rss = (statistics.median(c[k] for _, c in pairs) for k in range(3))
        else:
            wall, cpu, rss = measure([*check, *target], env)
        per_file.append((count, wall, cpu))
        line = f"{count:>5,} files (3 fields each)    {wall:7.2f} {cpu:7.2f} {rss:7.0f}   "
        if count == 1:
            line += (
                f"{fcpu:11.2f} {cpu / fcpu:6.2f}   (start-up: wall {wall / fwall:.2f}x the bare process, "
                "medians of 7 pairs; target <= 1.3)"
            )
        else:
            line += f"{'':11} {'':6}   ({(wall - per_file[0][1]) / (count - 1) * 1000:.1f} ms wall per file beyond start-up)"
        print(line)
        if count == 1_000:
            swall, scpu, srss = measure([*check, "--jobs", "1", *target], env)
            print(
                f"{count:>5,} files, --jobs 1 (serial) {swall:7.2f} {scpu:7.2f} {srss:7.0f}   "
                f"{'':11} {'':6}   (pool wall = {wall / swall:.2f}x serial)"
            )
    if len(per_file) >= 3:
        (_, w1, _), (_, w100, _), (_, w1000, _) = per_file
        a, b = (w100 - w1) / 99 * 1000, (w1000 - w1) / 999 * 1000
        print(
            f"wall per file beyond start-up: 100 files {a:.1f} ms, 1,000 files {b:.1f} ms "
            f"(ratio {b / a:.2f}; target: flat, <= ~1)"
        )


if __name__ == "__main__":
    main()
