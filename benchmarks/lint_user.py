"""Lint speed as a user times it: whole `pcdlint check` processes against the true floor.

Every case runs `pcdlint check` as a whole process (warm analysis and encoding caches, default
rules, text output to /dev/null), and its lint cost is that process's wall time minus the same process on
one tiny file (start-up, imports, tokenizer load). The floor of a case is one
`encode_batch(options, add_special_tokens=False)` of every option of the case as JSON text, each
once (an option two fields offer is two strings: issue 34's floor, "the corpus's 20,951 option
strings"; the corpus's ratio over its distinct strings alone is printed too) by `Tokenizer.from_file` of the same cached qwen2.5 tokenizer.json, timed
inside a fresh process of its own (the first batch of a process, as the lint's is). Start-up is
the one-tiny-file check against a bare process that only loads that tokenizer.json.

The cases: the shared corpus (`pcd-presets*/*.json` + `json-schema/*.json`, 36 files); the same
with the encoding cache emptied before each of its runs (every text encoded, tiktoken's tables
built: the first run after an upgrade); one enum of 1k / 10k / 100k options; 1 / 100 / 1,000
small files of three fields each. Every process of a
round runs once, one after the other (bare, tiny, then each case and its floor), and each
figure is the least of its rounds, so a burst of load elsewhere hits one round, not one case.
Targets (issue 34): corpus lint <= 2x its floor, start-up <= 1.2x the bare process, the 100k
enum <= 1.5x its floor, per-file cost at 1,000 files <= 1.2x the cost at 100.

`--case WORD`: only the cases whose name holds WORD (repeatable; e.g. `--case corpus --case 100,000`;
a WORD no case holds, e.g. `--case none`, leaves start-up alone).

`--compare REV`: A/B in the same rounds. The working tree and git revision REV (e.g. `main`) are
each staged as a package of their own (auditor/, rules/ as auditor.rules, reports/templates as
auditor.templates) and run as `python -m auditor check` with PYTHONPATH set to it, one after
the other in every round; each case then also prints the working tree's lint seconds over
REV's, and start-up's too. The other figures stay those of the installed `pcdlint`.

Usage: python benchmarks/lint_user.py [--rounds N] [--quick] [--case WORD] [--compare REV]
                                      [CORPUS_DIR]
       (default: 5 rounds, ../shared/corpus; --quick: corpus, 10k enum and 100 files only)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from lint_scaling import options, schema  # noqa: E402  (the same generated enums and files)

CORPUS = "corpus (36 files)"
# the corpus's floor over its distinct option strings (a stricter floor than issue 34's)
DISTINCT = "corpus, distinct options"
# the corpus again, its encoding cache emptied before each run (auditor.tokenizers.encodings):
# what the first run after a pcdlint upgrade, or a run over files all edited, waits for
COLD = "corpus, encodings not cached"

# a fresh process: load the tokenizer, time one batch of the options (the floor of a case)
FLOOR = """import json, sys, time
from tokenizers import Tokenizer
tokenizer = Tokenizer.from_file(sys.argv[1])
texts = json.load(open(sys.argv[2]))
start, cpu = time.perf_counter(), time.process_time()
tokenizer.encode_batch(texts, add_special_tokens=False)
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def wall(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall s, CPU s of the process and its pool workers) of one child process, run outside
    the checkout: `python -m auditor` there would import the checkout's package first, ahead of
    a staged tree on PYTHONPATH (--compare)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        argv, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    error = child.stderr.read().decode() if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        sys.exit(f"{' '.join(argv[:5])} failed: {error[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def floor(tokenizer_json: Path, texts_file: Path, env: dict) -> tuple[float, float]:
    """(wall s, CPU s of all its threads) of the floor's one batch."""
    out = subprocess.run(
        [sys.executable, "-c", FLOOR, str(tokenizer_json), str(texts_file)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, cpu = out.stdout.split()
    return float(seconds), float(cpu)


def option_texts(paths: list[str]) -> list[str]:
    """Every option of these files as JSON text (what the model types), each once: an option
    that two fields (or files) both offer is two strings, as in issue 34's floor (the corpus's
    "20,951 option strings" then)."""
    from auditor.linter.engine import lint
    from auditor.pcd.scoring import json_text
    from auditor.tokenizers.loader import load_tokenizer

    run = lint(paths, [load_tokenizer("qwen2.5")])
    return [json_text(o) for r in run.files for s in r.model.sites for o in s.options]


def stage(work: Path, name: str, revision: str | None) -> Path:
    """The package of the working tree (revision None) or of a git revision, laid out as the
    wheel installs it, under work/name; run it with PYTHONPATH set to the returned folder."""
    source = work / f"{name}-source"
    if revision is None:
        source = REPO
    else:
        source.mkdir()
        archive = subprocess.run(
            ["git", "archive", revision, "auditor", "rules", "reports/templates"],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    root = work / name
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(source / "auditor", root / "auditor", ignore=skip)
    shutil.copytree(source / "rules", root / "auditor" / "rules", ignore=skip)
    shutil.copytree(source / "reports" / "templates", root / "auditor" / "templates", ignore=skip)
    return root


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    argv, args, rounds, only = sys.argv[1:], [], 5, []
    compare: str | None = None
    while argv:
        arg = argv.pop(0)
        if arg in ("-h", "--help"):
            print(__doc__)
            return
        if arg == "--rounds":
            rounds = int(argv.pop(0))
        elif arg == "--case":
            only.append(argv.pop(0))
        elif arg == "--compare":
            compare = argv.pop(0)
        elif arg.startswith("-") and arg != "--quick":
            sys.exit(f"unknown option {arg} (--help)")
        elif arg != "--quick":
            args.append(arg)
    quick = "--quick" in sys.argv
    corpus = Path(args[0]) if args else REPO.parent / "shared" / "corpus"
    corpus_files = sorted(
        str(p) for pattern in ("pcd-presets*/*.json", "json-schema/*.json") for p in corpus.glob(pattern)
    )
    if not corpus_files:
        sys.exit(f"no corpus files under {corpus}")
    work = Path(tempfile.mkdtemp(prefix="pcdlint-user-"))
    # like an installed pcdlint: compiled modules (written by the warm-up runs); a cache of its own
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HF_HUB_OFFLINE="1", PCDLINT_CACHE_DIR=str(work / "cache"))
    os.environ["PCDLINT_CACHE_DIR"] = env["PCDLINT_CACHE_DIR"]
    script = Path(sys.executable).with_name("pcdlint")
    check = [str(script)] if script.is_file() else [sys.executable, "-m", "auditor"]
    check.append("check")
    # --compare: the working tree (A) and the revision (B), each its own staged package
    trees: dict[str, tuple[list[str], dict]] = {}
    if compare is not None:
        for label, revision in (("A", None), ("B", compare)):
            root = stage(work, f"tree-{label}", revision)
            tree_env = {**env, "PYTHONPATH": str(root)}
            found = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import auditor, auditor.rules; print(auditor.__file__, *auditor.rules.__path__)",
                ],
                env=tree_env,
                cwd=tempfile.gettempdir(),
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            if not all(Path(f).is_relative_to(root) for f in found):  # (the A/B would compare nothing)
                sys.exit(f"tree {label} imports {found}, not its staged package under {root}")
            trees[label] = ([sys.executable, "-m", "auditor", "check"], tree_env)

    def cold(environment: dict) -> dict:
        """`environment` with a cache of its own whose encoding cache is emptied now (its
        analysis cache and tokenizers stay warm): for the COLD case, the others' entries kept."""
        own = work / "cache-cold"
        shutil.rmtree(own / "encodings", ignore_errors=True)
        return {**environment, "PCDLINT_CACHE_DIR": str(own)}

    tiny = work / "tiny.json"
    tiny.write_text(schema({"answer": ["yes", "no"]}))
    cases: dict[str, list[str]] = {CORPUS: corpus_files, COLD: corpus_files}
    for n in (10_000,) if quick else (1_000, 10_000, 100_000):
        path = work / f"enum_{n}.json"
        path.write_text(schema({"label": options(n)}))
        cases[f"one enum, {n:,} options"] = [str(path)]
    file_counts = (100,) if quick else (1, 100, 1_000)
    for count in file_counts:
        folder = work / f"files_{count}"
        folder.mkdir()
        for i in range(count):
            fields = {f"field_{k}": options(3 + (i * 7 + k) % 10, seed=i * 10 + k) for k in range(3)}
            (folder / f"schema_{i:04d}.json").write_text(schema(fields))
        cases[f"{count:,} files (3 fields each)"] = [str(p) for p in sorted(folder.iterdir())]

    if only:
        cases = {name: paths for name, paths in cases.items() if any(word in name for word in only)}
    # warm-up: converts qwen2.5 into the cache, fills the analysis cache, writes compiled modules
    wall([*check, str(tiny)], env)
    for command, tree_env in trees.values():
        wall([*command, str(tiny)], tree_env)
    texts: dict[str, Path] = {}
    wall([*check, str(tiny)], cold(env))
    for name, paths in cases.items():
        wall([*check, *paths], cold(env) if name == COLD else env)
        for command, tree_env in trees.values():
            wall([*command, *paths], cold(tree_env) if name == COLD else tree_env)
        texts[name] = work / f"options_{len(texts)}.json"
        texts[name].write_text(json.dumps(option_texts(paths)))
    if CORPUS in cases:  # the corpus's other floor: each distinct option string once
        texts[DISTINCT] = work / "options_distinct.json"
        texts[DISTINCT].write_text(json.dumps(list(dict.fromkeys(json.loads(texts[CORPUS].read_text())))))
    from auditor.cachedir import cache_dir
    from auditor.tokenizers.cache import export_conversion
    from auditor.tokenizers.loader import load_tokenizer

    # the floor's tokenizer.json: the converted qwen2.5 (a check of ASCII options never needs it)
    load_tokenizer("qwen2.5").hf.get_vocab_size()
    (entry,) = sorted(cache_dir().glob("qwen2-*.json"))[-1:]
    tokenizer_json = export_conversion(entry, work / "tokenizer.json")  # (the entry's payload)
    bare = [
        sys.executable,
        "-c",
        f"from tokenizers import Tokenizer; Tokenizer.from_file({str(tokenizer_json)!r})",
    ]

    before = load()
    print(f"{len(corpus_files)} corpus files; {rounds} interleaved rounds; load average before: {before}")
    best: dict[str, float] = {}
    per_round: list[dict[str, float]] = []

    def keep(key: str, value: float, row: dict) -> None:
        row[key] = value
        best[key] = min(value, best.get(key, value))

    for _ in range(rounds):
        row: dict[str, float] = {}
        keep("bare", wall(bare, env)[0], row)
        seconds, cpu = wall([*check, str(tiny)], env)
        keep("tiny", seconds, row)
        keep("tiny cpu", cpu, row)
        for label, (command, tree_env) in trees.items():
            seconds, cpu = wall([*command, str(tiny)], tree_env)
            keep(f"tiny {label}", seconds, row)
            keep(f"tiny {label} cpu", cpu, row)
        for name, paths in cases.items():
            for label, (command, tree_env) in trees.items():
                seconds, cpu = wall([*command, *paths], cold(tree_env) if name == COLD else tree_env)
                keep(f"{name} {label}", seconds, row)
                keep(f"{name} {label} cpu", cpu, row)
            seconds, cpu = wall([*check, *paths], cold(env) if name == COLD else env)
            keep(name, seconds, row)
            keep(name + " cpu", cpu, row)
            seconds, cpu = floor(tokenizer_json, texts[name], env)
            keep(name + " floor", seconds, row)
            keep(name + " floor cpu", cpu, row)
            if name == CORPUS:
                seconds, cpu = floor(tokenizer_json, texts[DISTINCT], env)
                keep(DISTINCT + " floor", seconds, row)
                keep(DISTINCT + " floor cpu", cpu, row)
        per_round.append(row)

    def ratio(name: str, row: dict, cpu: str = "") -> float:
        """Lint cost over the floor: wall (cpu="") or CPU (cpu=" cpu") of the check beyond the
        one-tiny-file check, over the floor's batch."""
        return (row[name + cpu] - row["tiny" + cpu]) / row[name + " floor" + cpu]

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    print(f"bare process (from_file)   {best['bare']:7.3f} s")
    print(
        f"check, one tiny file       {best['tiny']:7.3f} s   start-up {best['tiny'] / best['bare']:.2f}x the bare "
        f"process (median of rounds {median([r['tiny'] / r['bare'] for r in per_round]):.2f}x; target <= 1.2)"
    )
    print("ratio: (check - tiny check) / floor, of the least of the rounds; median: of the rounds' ratios;")
    print("CPU ratio: the same of CPU times (the check's workers and the floor's threads counted)")
    print(
        f"{'case':39} {'options':>8} {'check s':>8} {'lint s':>7} {'floor s':>8} {'ratio':>6} {'median':>6} "
        f"{'CPU ratio':>9}"
    )
    for name in cases:
        count = len(json.loads(texts[name].read_text()))
        print(
            f"{name:39} {count:8,} {best[name]:8.3f} {best[name] - best['tiny']:7.3f} {best[name + ' floor']:8.4f} "
            f"{ratio(name, best):6.2f} {median([ratio(name, r) for r in per_round]):6.2f} "
            f"{ratio(name, best, ' cpu'):9.2f}"
        )
    if CORPUS in cases:

        def distinct(row: dict, cpu: str = "") -> float:
            return (row[CORPUS + cpu] - row["tiny" + cpu]) / row[DISTINCT + " floor" + cpu]

        count = len(json.loads(texts[DISTINCT].read_text()))
        print(
            f"{'corpus over its distinct options':39} {count:8,} {'':8} {'':7} {best[DISTINCT + ' floor']:8.4f} "
            f"{distinct(best):6.2f} {median([distinct(r) for r in per_round]):6.2f} {distinct(best, ' cpu'):9.2f}"
        )
    if trees:
        print(f"A/B: the working tree (A) against {compare} (B), each run as `python -m auditor check`")
        print(
            "lint: beyond each tree's own tiny check; A/B: A's over B's, of the least of the rounds, and the"
        )
        print("median of the rounds' own; CPU: the same of CPU times (the process and its workers)")
        print(
            f"{'case':39} {'A s':>7} {'B s':>7} {'A lint':>7} {'B lint':>7} {'A/B':>5} {'median':>6} "
            f"{'CPU A/B':>7} {'median':>6}"
        )

        def lint_ab(name: str, row: dict, cpu: str = "") -> float:
            return (row[f"{name} A{cpu}"] - row[f"tiny A{cpu}"]) / (
                row[f"{name} B{cpu}"] - row[f"tiny B{cpu}"]
            )

        def whole_ab(name: str, row: dict, cpu: str = "") -> float:
            return row[f"{name} A{cpu}"] / row[f"{name} B{cpu}"]

        print(
            f"{'check, one tiny file (whole process)':39} {best['tiny A']:7.3f} {best['tiny B']:7.3f} {'':7} {'':7} "
            f"{whole_ab('tiny', best):5.2f} {median([whole_ab('tiny', r) for r in per_round]):6.2f} "
            f"{whole_ab('tiny', best, ' cpu'):7.2f} {median([whole_ab('tiny', r, ' cpu') for r in per_round]):6.2f}"
        )
        for name in cases:
            a, b = best[f"{name} A"] - best["tiny A"], best[f"{name} B"] - best["tiny B"]
            print(
                f"{name:39} {best[f'{name} A']:7.3f} {best[f'{name} B']:7.3f} {a:7.3f} {b:7.3f} "
                f"{a / b:5.2f} {median([lint_ab(name, r) for r in per_round]):6.2f} "
                f"{lint_ab(name, best, ' cpu'):7.2f} {median([lint_ab(name, r, ' cpu') for r in per_round]):6.2f}"
            )
    headlines: list[tuple[str, float, str, float]] = [
        ("start-up, check of one tiny file", best["tiny"] / best["bare"], "x the bare process", 1.2)
    ]
    if CORPUS in cases:
        headlines.append(("corpus lint (36 files)", ratio(CORPUS, best), "x its floor", 2.0))
    if "one enum, 100,000 options" in cases:
        headlines.append(
            ("one enum, 100,000 options", ratio("one enum, 100,000 options", best), "x its floor", 1.5)
        )
    if all(f"{n:,} files (3 fields each)" in cases for n in (100, 1_000)):
        per_100, per_1000 = (
            (best[f"{n:,} files (3 fields each)"] - best["tiny"]) / n * 1000 for n in (100, 1_000)
        )
        print(
            f"per file beyond start-up: 100 files {per_100:.2f} ms, 1,000 files {per_1000:.2f} ms "
            f"(ratio {per_1000 / per_100:.2f}; target <= 1.2)"
        )
        headlines.append(("per-file cost, 1,000 files / 100 files", per_1000 / per_100, "", 1.2))
    print(
        f"HEADLINES (issue 34; least of {rounds} interleaved rounds; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before {before}, after {load()})"
    )
    for what, value, unit, target in headlines:
        verdict = "met" if value <= target else "NOT met"
        print(f"  {what:40} {value:5.2f}{unit:19} target <= {target:<4} {verdict}")
    if CORPUS in cases:  # (no target: issue 34's floor is every option, each once)
        print(
            f"  {'corpus lint, over its distinct options':40} {distinct(best):5.2f}x that floor        (no target)"
        )
    if COLD in cases:  # (no target: issue 34's are for warm caches)
        print(
            f"  {'corpus lint, encodings not cached':40} {ratio(COLD, best):5.2f}x its floor         (no target)"
        )


if __name__ == "__main__":
    main()
