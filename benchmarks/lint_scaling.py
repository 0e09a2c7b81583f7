"""How linting scales: one enum of 1k / 10k / 100k options, and 1 / 100 / 1,000 small files.

Each case runs `pcdlint check -q` as a whole process on generated schemas (warm tokenizer cache;
the analysis cache is warmed by a first run) and prints wall time, CPU time and peak RSS of that
process (os.wait4). For the one-enum cases the same process work is compared with a bare process
that loads the cached tokenizer.json and batch-encodes the options (the encode floor): target
100k options within 3x of it, peak RSS under 400 MB; time per file flat from 100 to 1,000 files.
Ratios, not absolute times: the machine may be shared.

Usage: python benchmarks/lint_scaling.py [--quick]   (--quick: 1k/10k and 1/100 only)
"""

from __future__ import annotations

import json
import os
import random
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
    return json.dumps({"type": "object", "properties": {
        name: {"type": "string", "enum": opts} for name, opts in field_options.items()}}, indent=1)


def measure(argv: list[str], env: dict) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one child process."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{argv[:4]} failed: {child.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    quick = "--quick" in sys.argv
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    work = Path(tempfile.mkdtemp(prefix="pcdlint-scaling-"))
    env.setdefault("PCDLINT_CACHE_DIR", str(work / "cache"))
    check = [sys.executable, "-m", "auditor", "check", "-q"]
    subprocess.run([*check, str(REPO / "fixtures" / "schemas")], env=env, capture_output=True)
    from auditor.tokenizers.loader import cache_dir

    os.environ.update(env)
    (cached,) = sorted(cache_dir().glob("qwen2-*.json"))[-1:]
    print(f"{'case':28} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}   {'floor CPU s':>11} {'ratio':>6}")
    for n in (1_000, 10_000) if quick else (1_000, 10_000, 100_000):
        opts = options(n)
        path = work / f"enum_{n}.json"
        path.write_text(schema({"label": opts}))
        measure([*check, str(path)], env)  # warm the analysis cache
        wall, cpu, rss = measure([*check, str(path)], env)
        texts = work / f"options_{n}.json"
        texts.write_text(json.dumps(opts))
        bare = ("import json, sys; from tokenizers import Tokenizer; "
                f"t = Tokenizer.from_file({str(cached)!r}); "
                f"t.encode_batch(json.load(open({str(texts)!r})), add_special_tokens=False)")
        fwall, fcpu, frss = measure([sys.executable, "-c", bare], env)
        print(f"one enum, {n:>7,} options    {wall:8.2f} {cpu:8.2f} {rss:8.0f}   {fcpu:11.2f} {cpu / fcpu:6.2f}"
              f"   (bare process: {fwall:.2f} s wall, {frss:.0f} MB)")
    per_file = []
    for count in (1, 100) if quick else (1, 100, 1_000):
        folder = work / f"files_{count}"
        folder.mkdir()
        rng = random.Random(count)
        for i in range(count):
            fields = {f"field_{k}": options(rng.randint(3, 12), seed=i * 10 + k) for k in range(3)}
            (folder / f"schema_{i:04d}.json").write_text(schema(fields))
        measure([*check, str(folder)], env)
        wall, cpu, rss = measure([*check, str(folder)], env)
        per_file.append((count, wall, cpu))
        print(f"{count:>5,} files (3 fields each)  {wall:8.2f} {cpu:8.2f} {rss:8.0f}   "
              f"{'':11} {'':6}   ({cpu / count * 1000:.1f} ms CPU per file)")
    if len(per_file) >= 3:
        (_, _, c100), (_, _, c1000) = per_file[1], per_file[2]
        base = per_file[0][2]  # start-up, paid once
        print(f"CPU per file beyond start-up: 100 files {(c100 - base) / 99 * 1000:.1f} ms, "
              f"1,000 files {(c1000 - base) / 999 * 1000:.1f} ms")


if __name__ == "__main__":
    main()
