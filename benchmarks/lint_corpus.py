"""Lint speed against floors measured in the same process (ratios, not absolute targets).

1. Lint the whole shared corpus with qwen2.5 vs batch-encoding every option string of the corpus
   with the same tokenizer (the encode floor). Targets (issue 17): core rules PCD000-PCD004
   <= 2x the floor, all default rules with text output <= 3x, JSON with suggestions and the
   report written <= 5x, --no-cache (every file parsed, crawled and meta-validated again) <= 6x.
   Each ratio is a median of runs over the median of floor runs; then again with the floor
   measured beside each run (paired: the machine's speed moves by more than the differences).
2. Tokenizer load: cold (conversion into an empty cache) and warm (from the cache) vs a plain
   `Tokenizer.from_file` of the cached file. Target: warm <= 3x plain.
3. Start-up: `pcdlint check` on one file with a warm cache vs a bare Python process that loads the
   cached tokenizer.json with `tokenizers` and encodes the same options (medians of seven
   alternating pairs). Target: <= 1.3x. Both
   run as an installed pcdlint does: with compiled modules (PYTHONDONTWRITEBYTECODE is dropped
   for them, so the first run writes them; a wheel install compiles them when it installs).

Usage: python benchmarks/lint_corpus.py [CORPUS_DIR]   (default: ../shared/corpus)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


CPU: dict = {}  # key → the least CPU time of its runs (both cores, and the pool's workers, counted)
# Called before each timed run, outside its time: the harness's own resets (a run is not charged
# for freeing what the run before it left in the tokenizer's memo).
BEFORE_EACH: list = []


def cpu_time() -> float:
    """CPU seconds of this process and of its waited-for children (the lint pool's workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def best_of(n: int, func, key: str | None = None) -> float:
    """Least wall time of n runs; with `key`, also the least CPU time, in CPU[key] (on a
    machine shared with other jobs CPU time moves far less than wall time)."""
    times, cpu = [], []
    for _ in range(n):
        for reset in BEFORE_EACH:
            reset()
        start, start_cpu = time.perf_counter(), cpu_time()
        func()
        times.append(time.perf_counter() - start)
        cpu.append(cpu_time() - start_cpu)
    if key:
        CPU[key] = min(cpu + [CPU.get(key, float("inf"))])
    return min(times)


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "corpus"
    if not corpus.is_dir():
        sys.exit(f"corpus not found: {corpus}")
    cache = tempfile.mkdtemp(prefix="pcdlint-bench-cache-")
    os.environ["PCDLINT_CACHE_DIR"] = cache

    from tokenizers import Tokenizer

    from auditor.linter.engine import LintOptions, lint
    from auditor.pcd.scoring import json_text
    from auditor.tokenizers.loader import load_tokenizer

    # -- 2. tokenizer load
    start = time.perf_counter()
    tok = load_tokenizer("qwen2.5")
    cold = time.perf_counter() - start
    from auditor.tokenizers import cache as tokenizer_cache

    def load_warm():  # from the converted cache, as a new process does (no in-process memo)
        getattr(tokenizer_cache, "_PARSED", {}).clear()  # (absent before the memo: benchmark old commits)
        getattr(tokenizer_cache, "_CONVERTED", {}).clear()
        return load_tokenizer("qwen2.5")

    warm = best_of(5, load_warm)
    (entry,) = Path(cache).glob("qwen2-*.json")
    cached = tokenizer_cache.export_conversion(entry, Path(cache) / "plain" / "tokenizer.json")
    plain = best_of(5, lambda: Tokenizer.from_file(str(cached)))

    # -- 1. lint vs encode floor
    files = sorted(str(p) for p in corpus.rglob("*.json"))
    start = time.perf_counter()
    run = lint(files, [tok])  # cold: parses, crawls and meta-validates every file, fills the cache
    lint_cold = time.perf_counter() - start
    options = [json_text(o) for r in run.files for s in r.model.sites for o in s.options]
    # no help from strings encoded by an earlier run in this process: each run starts with the
    # tokenizer's memo emptied (before its time starts)
    BEFORE_EACH.append(tok.forget)

    def fresh_lint(options=None, **kwargs):
        return lint(files, [tok], options, **kwargs)

    lint_nocache = statistics.median(
        best_of(1, lambda: fresh_lint(use_cache=False), "nocache") for _ in range(3)
    )
    lint_time = statistics.median(best_of(1, fresh_lint, "json") for _ in range(3))
    # what `--format json` adds: the bytes of the run's JSON document, as the CLI writes them
    # (json_format.render_bytes; where absent, in an older commit, the text it wrote)
    from auditor.reporting import json_format

    report = getattr(json_format, "render_bytes", json_format.render)
    finished = fresh_lint()
    report_time = best_of(3, lambda: report(finished), "report")
    # what `pcdlint check` does for text output: no verified fix suggestions (JSON/HTML only)
    text_like = LintOptions(suggestions=False, details=False)  # what the CLI turns off for text
    lint_text = statistics.median(best_of(1, lambda: fresh_lint(options=text_like), "text") for _ in range(5))
    core = LintOptions(
        select=["PCD000", "PCD001", "PCD002", "PCD003", "PCD004"], suggestions=False, details=False
    )
    lint_core = statistics.median(best_of(1, lambda: fresh_lint(options=core), "core") for _ in range(5))
    # the same without the process pool (one core): what the pool buys on this machine
    serial_text = statistics.median(
        best_of(
            1,
            lambda: fresh_lint(options=LintOptions(suggestions=False, details=False, jobs=1)),
            "serial_text",
        )
        for _ in range(5)
    )
    serial_json = statistics.median(
        best_of(1, lambda: fresh_lint(options=LintOptions(jobs=1)), "serial_json") for _ in range(3)
    )
    floor = lambda: tok.hf.encode_batch(options, add_special_tokens=False)  # noqa: E731
    # the lint times above are medians of their runs: the floor's too (its least as well)
    floor_runs = [best_of(1, floor, "floor") for _ in range(5)]
    encode_time = statistics.median(floor_runs)

    # the same ratios with the floor measured beside each run (floor, run, floor, run, ...):
    # on a shared machine the floor itself moves by half within a minute, so a ratio of runs
    # minutes apart measures the machine as much as the lint
    def paired(run, rounds=5) -> tuple[float, float]:
        runs, floors = [], []
        for _ in range(rounds):
            floors.append(best_of(1, floor))
            runs.append(best_of(1, run))
        return statistics.median(runs), statistics.median(floors)

    paired_runs = {
        "core": paired(lambda: fresh_lint(options=core)),
        "text": paired(lambda: fresh_lint(options=text_like)),
        "json": paired(lambda: report(fresh_lint())),
        "nocache": paired(lambda: fresh_lint(use_cache=False)),
    }

    # -- 3. start-up of a one-file check with a warm cache
    one = corpus / "pcd-presets" / "support_triage.json"
    one_options = [
        json_text(o) for r in lint([str(one)], [tok]).files for s in r.model.sites for o in s.options
    ]
    # like an installed pcdlint: compiled modules (written by the first, unmeasured run)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["HF_HUB_OFFLINE"] = "1"
    check_command = [sys.executable, "-m", "auditor", "check", "-q", str(one)]
    subprocess.run(check_command, env=env, capture_output=True, cwd=REPO)
    bare_code = (
        "import sys; from tokenizers import Tokenizer; "
        f"t = Tokenizer.from_file({str(cached)!r}); "
        f"t.encode_batch({one_options!r}, add_special_tokens=False)"
    )
    # alternating (bare, check) pairs, as for the paired ratios above: each process takes over a
    # second, and the machine's speed moves by more than the difference between the two
    checks, bares = [], []
    for _ in range(7):
        bares.append(
            best_of(
                1, lambda: subprocess.run([sys.executable, "-c", bare_code], env=env, capture_output=True)
            )
        )
        checks.append(
            best_of(1, lambda: subprocess.run(check_command, env=env, capture_output=True, cwd=REPO))
        )
    check, bare = statistics.median(checks), statistics.median(bares)

    print(
        f"corpus: {len(files)} files, {sum(len(r.model.sites) for r in run.files)} fields, "
        f"{len(options)} options, {len(run.findings)} findings"
    )
    print(f"lint corpus, warm      {lint_time:8.3f} s   (analysis cache hit; suggestions, as for JSON)")
    print(f"lint corpus, text      {lint_text:8.3f} s   (warm, no suggestions: text/github/csv)")
    print(f"lint corpus, cold      {lint_cold:8.3f} s   (first run: parse, crawl, meta-schema)")
    print(f"lint corpus, no cache  {lint_nocache:8.3f} s   (--no-cache, imports already warm)")
    print(f"encode floor           {encode_time:8.3f} s   (median of 5; least {min(floor_runs):.3f} s)")
    print(f"lint corpus, core      {lint_core:8.3f} s   (PCD000-PCD004 only, warm, no suggestions)")
    print(f"JSON report            {report_time:8.3f} s   (the warm run's document: the bytes written)")
    print(f"lint corpus, text -j 1 {serial_text:8.3f} s   (no pool: one process, one core)")
    print(f"lint corpus, warm -j 1 {serial_json:8.3f} s   (no pool, suggestions)")
    print(f"  ratio lint/encode    {lint_time / encode_time:8.1f} x   warm, all rules, JSON (no report)")
    print(
        f"  ratio lint/encode    {(lint_time + report_time) / encode_time:8.1f} x   "
        f"warm, all rules, JSON report written (target <= 5)"
    )
    print(f"  ratio lint/encode    {lint_text / encode_time:8.1f} x   warm, all rules, text (target <= 3)")
    print(f"  ratio lint/encode    {lint_core / encode_time:8.1f} x   warm, core rules (target <= 2)")
    print(
        f"  ratio lint/encode    {lint_nocache / encode_time:8.1f} x   --no-cache, all rules, JSON (target <= 6)"
    )
    print("paired (the floor measured beside each run; medians of the runs and of their floors):")
    for key, label, target in (
        ("core", "warm, core rules", 2),
        ("text", "warm, all rules, text", 3),
        ("json", "warm, all rules, JSON report written", 5),
        ("nocache", "--no-cache, all rules, JSON", 6),
    ):
        run_time, floor_time = paired_runs[key]
        print(
            f"  ratio lint/encode    {run_time / floor_time:8.1f} x   {label} "
            f"({run_time:.3f} s / {floor_time:.3f} s; target <= {target})"
        )
    floor_cpu = CPU["floor"]
    print(
        f"encode floor, CPU      {floor_cpu:8.3f} s   (CPU time, both cores and the pool's workers counted)"
    )
    for key, label in (
        ("json", "warm, all rules, JSON"),
        ("text", "warm, all rules, text"),
        ("core", "warm, core rules"),
        ("nocache", "--no-cache, all rules, JSON"),
    ):
        print(f"  CPU ratio            {CPU[key] / floor_cpu:8.1f} x   {label}")
    print(
        f"  CPU ratio            {(CPU['json'] + CPU['report']) / floor_cpu:8.1f} x   "
        "warm, all rules, JSON report written"
    )
    print(f"tokenizer load cold    {cold:8.3f} s   (conversion into an empty cache)")
    print(f"tokenizer load warm    {warm:8.3f} s")
    print(f"plain from_file        {plain:8.3f} s")
    print(f"  ratio warm/plain     {warm / plain:8.2f} x   (target <= 3)")
    print(
        f"one-file check process {check:8.3f} s   ({one.name}, warm cache; median of 7, least {min(checks):.3f} s)"
    )
    print(
        f"bare tokenizers process{bare:8.3f} s   (median of 7, alternating with the check; least {min(bares):.3f} s)"
    )
    print(f"  ratio check/bare     {check / bare:8.2f} x   (target <= 1.3)")


if __name__ == "__main__":
    main()
