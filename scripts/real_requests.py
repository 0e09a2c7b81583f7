"""Run the decision-design rules (PCD2xx) on the real requests of tests/data/decision-requests/
and compare their findings with the committed judgements (judgements.toml).

    python scripts/real_requests.py                 # the copied files
    python scripts/real_requests.py --extra DIR     # and local copies of the listed-only ones
    python scripts/real_requests.py --list          # every finding, judged or not

Prints per rule: findings, judged right / wrong, precision, and the recall of what reading the
files made us expect; exits 1 when a finding has no judgement or a judged one no longer fires.
tests/decisions/test_real_requests.py runs the same comparison on the copied files.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "decision-requests"
JUDGEMENTS = DATA / "judgements.toml"
SELECT = ("PCD2*",)


@dataclass(frozen=True)
class Key:
    file: str
    code: str
    pointer: str
    engine: str = ""  # "": no engine named; else the file's own engine (judgements' [[engine]])


def current(paths: list[Path], engines: dict[str, str]) -> dict[Key, str]:
    """Key → message of every PCD2xx finding on these files with no engine named (qwen2.5), and
    of the per-engine ones under the engine each file's repository sends it to (`engines`)."""
    import auditor
    from auditor.linter import load_rules

    per_engine = {code for code, r in load_rules().items() if r.per_engine and code.startswith("PCD2")}
    found: dict[Key, str] = {}
    for path in paths:
        for finding in auditor.lint(str(path), select=list(SELECT)).findings:
            found[Key(path.name, finding.code, finding.pointer)] = finding.message
        engine = engines.get(path.name)
        if engine:
            for finding in auditor.lint(str(path), select=sorted(per_engine), engine=engine).findings:
                found[Key(path.name, finding.code, finding.pointer, engine)] = finding.message
    return found


def request_files(extra: Path | None = None) -> list[Path]:
    """The copied request files (those sources.toml lists that are here), and every file of
    `extra` (local copies of the listed-only ones, or a folder of code files)."""
    listed = {f["file"] for f in tomllib.loads((DATA / "sources.toml").read_text(encoding="utf-8"))["file"]}
    files = [p for p in sorted(DATA.iterdir()) if p.name in listed]
    if extra is not None:
        files += [p for p in sorted(extra.iterdir()) if p.is_file() and not p.name.startswith(".")]
    return files


def judgements(path: Path = JUDGEMENTS) -> dict:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {
        "findings": {
            Key(j["file"], j["code"], j["pointer"], j.get("engine", "")): j for j in data.get("finding", [])
        },
        "expected": [
            Key(e["file"], e["code"], e["pointer"], e.get("engine", "")) for e in data.get("expected", [])
        ],
        "engines": {e["file"]: e["engine"] for e in data.get("engine", [])},
    }


def counts(judged: dict) -> dict[str, dict]:
    """Per rule code: findings judged, right, wrong, and expected / expected found."""
    out: dict[str, dict] = {}
    for key, entry in judged["findings"].items():
        row = out.setdefault(key.code, {"findings": 0, "right": 0, "wrong": 0, "expected": 0, "found": 0})
        row["findings"] += 1
        row["right" if entry["verdict"] == "right" else "wrong"] += 1
    fired = set(judged["findings"])
    for key in judged["expected"]:
        row = out.setdefault(key.code, {"findings": 0, "right": 0, "wrong": 0, "expected": 0, "found": 0})
        row["expected"] += 1
        row["found"] += key in fired
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--extra", type=Path, help="a folder holding local copies of the listed-only files")
    parser.add_argument("--list", action="store_true", help="print every finding with its judgement")
    args = parser.parse_args(argv)
    files = request_files(args.extra)
    judged = judgements()
    found = current(files, judged["engines"])
    names = {p.name for p in files}
    unjudged = [k for k in found if k not in judged["findings"]]
    gone = [k for k, j in judged["findings"].items() if k.file in names and k not in found]
    if args.list:
        for key, message in sorted(found.items(), key=lambda kv: (kv[0].file, kv[0].code, kv[0].pointer)):
            verdict = judged["findings"].get(key, {}).get("verdict", "UNJUDGED")
            under = f" [{key.engine}]" if key.engine else ""
            print(f"{verdict:9} {key.code} {key.file} {key.pointer}{under}\n          {message}")
    print(f"{len(files)} files read, {len(found)} findings")
    print(f"{'rule':8} {'findings':>8} {'right':>6} {'wrong':>6} {'precision':>9} {'recall':>12}")
    for code, row in counts(judged).items():
        precision = f"{row['right'] / row['findings']:.0%}" if row["findings"] else "-"
        recall = f"{row['found']}/{row['expected']}" if row["expected"] else "-"
        print(f"{code:8} {row['findings']:8} {row['right']:6} {row['wrong']:6} {precision:>9} {recall:>12}")
    for key in unjudged:
        print(f"UNJUDGED {key}: {found[key]}", file=sys.stderr)
    for key in gone:
        print(f"NO LONGER FOUND {key}", file=sys.stderr)
    return 1 if unjudged or gone else 0


if __name__ == "__main__":
    sys.exit(main())
