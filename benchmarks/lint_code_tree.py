"""Walking a repository-sized tree of code files (issue 45): how much a `pcdlint check` of a
source tree costs over reading its files, and what the pre-filter and the default excludes save.

A generated tree: N Python and TypeScript modules of ordinary code (functions, classes, string
tables; a fifth of them mention `questions` in a docstring, so the pre-filter lets them through
to the parser), one in fifty building a decision request, and a `node_modules` folder with as
many files again (never entered). Interleaved, whole processes (best of `--best`):

- `read floor`: a bare Python process that walks the same folders and reads every file's bytes
  (what any tool that looks at the files must do);
- `parse all`: the same walk, parsing every code file (ast / tree-sitter) with no pre-filter;
- `pcdlint check -q --no-cache`: the lint of the tree (every file read, pre-filtered, the
  requests parsed and linted);
- `pcdlint check -q` warm: the analysis cache filled by the run before;
- `pcdlint check -q` of the tree's one first request file: pcdlint's own start-up.

Ratios, not absolute times: the machine may be shared. Usage:
python benchmarks/lint_code_tree.py [--files N] [--best K]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PLAIN_PY = '''"""Helpers for {name}{mention}."""

import math


class {cls}:
    def __init__(self, values):
        self.values = list(values)

    def total(self):
        return sum(self.values) * math.pi


LABELS = {labels}


def lookup(key):
    return LABELS.get(key, "unknown")
'''
PLAIN_TS = """// {name}{mention}
export const LABELS: Record<string, string> = {labels};

export function lookup(key: string): string {{
  return LABELS[key] ?? "unknown";
}}

export class {cls} {{
  constructor(private values: number[]) {{}}
  total(): number {{
    return this.values.reduce((a, b) => a + b, 0);
  }}
}}
"""
REQUEST_PY = """from typesafe_sdk import Choice, Noul, TypeSafeClient

QUESTIONS = {{
    "team": Choice(instructions="Which team handles ticket {n}?", criteria={labels}),
    "urgent": Noul(instructions="Does it need an answer today?"),
}}


def ask(ticket):
    return TypeSafeClient().system_one(state=ticket, questions=QUESTIONS)
"""

WALK = """
import os, sys, re
EXCLUDES = {"node_modules", ".venv", "venv", "build", "dist", "site-packages", "__pycache__"}
CODE = (".py", ".ts")
parse = sys.argv[2] == "parse"
if parse:
    import ast
    import tree_sitter_typescript, tree_sitter
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_typescript.language_typescript()))
n = 0
for root, dirs, names in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d not in EXCLUDES and not d.startswith(".")]
    for name in names:
        if name.endswith(CODE):
            raw = open(os.path.join(root, name), "rb").read()
            n += len(raw)
            if parse:
                ast.parse(raw) if name.endswith(".py") else parser.parse(raw)
print(n)
"""


def build(root: Path, files: int, seed: int = 45) -> None:
    rng = random.Random(seed)
    for index in range(files):
        folder = root / "src" / f"pkg{index % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        labels = {f"k{rng.randrange(10**6)}": f"label {i}" for i in range(rng.randint(3, 30))}
        mention = " (answers questions from the UI)" if index % 5 == 0 else ""
        if index % 50 == 0:
            (folder / f"decide_{index}.py").write_text(
                REQUEST_PY.format(n=index, labels=labels), encoding="utf-8"
            )
        elif index % 2:
            text = PLAIN_TS.format(name=f"m{index}", mention=mention, labels=labels, cls=f"C{index}")
            (folder / f"m{index}.ts").write_text(text.replace("'", '"'), encoding="utf-8")
        else:
            text = PLAIN_PY.format(name=f"m{index}", mention=mention, labels=labels, cls=f"C{index}")
            (folder / f"m{index}.py").write_text(text, encoding="utf-8")
        dependency = root / "node_modules" / f"dep{index % 60}"
        dependency.mkdir(parents=True, exist_ok=True)
        (dependency / f"index{index}.ts").write_text(
            PLAIN_TS.format(name="dep", mention=" questions", labels="{}", cls=f"D{index}"), encoding="utf-8"
        )


def run(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr[-400:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--best", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        root = Path(work) / "repo"
        build(root, args.files)
        cache = Path(work) / "cache"
        env = {**os.environ, "PCDLINT_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
        pcdlint = [sys.executable, "-m", "auditor", "check", "-q", str(root)]
        cases = {
            "read floor": [sys.executable, "-c", WALK, str(root), "read"],
            "parse all": [sys.executable, "-c", WALK, str(root), "parse"],
            "pcdlint cold": [*pcdlint[:-1], "--no-cache", str(root)],
            "pcdlint warm": pcdlint,
            # start-up: the same process on the tree's one first request file (warm)
            "pcdlint 1 file": [*pcdlint[:-1], str(root / "src" / "pkg0" / "decide_0.py")],
        }
        run(pcdlint, env)  # the tokenizer's and the analysis caches, once
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.best):  # interleaved: each round runs every case once
            for name, argv in cases.items():
                times[name].append(run(argv, env))
        best = {name: min(values) for name, values in times.items()}
        code = sum(1 for p in (root / "src").rglob("*") if p.suffix in (".py", ".ts"))
        print(
            f"{code} code files under src/ (+{args.files} in node_modules/, never entered); load {os.getloadavg()[0]:.1f}"
        )
        for name, seconds in best.items():
            print(
                f"{name:<14} {seconds:7.2f} s   {seconds / best['read floor']:5.2f}x the read floor"
                f"   {seconds / best['pcdlint 1 file']:5.2f}x pcdlint on one file"
            )


if __name__ == "__main__":
    main()
