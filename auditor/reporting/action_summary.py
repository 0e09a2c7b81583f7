"""The GitHub Action's job summary: the fields of a pcdlint SARIF report that have errors.

Findings are grouped by field (file, field pointer, tokenizer), as in the text output: a table
of the fields with errors (what will be decided wrongly), then the fields with warnings
collapsed, then counts per rule.

`python -I -m auditor.reporting.action_summary [--exit-code N] [--fail-on SEVERITY] [REPORT.sarif]`
prints Markdown for `$GITHUB_STEP_SUMMARY` (`-I`: the workspace is never on sys.path); without a
report (pcdlint exited 2 and wrote none) it says so. It reads standard SARIF 2.1.0 (results with ruleId, level,
message and a physical location), so it only depends on the report, not on pcdlint internals.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from auditor.reporting.escape import markdown_code, markdown_text

MAX_ROWS = 50
LEVEL_TO_SEVERITY = {"error": "error", "warning": "warning", "note": "info", "none": "info"}
SEVERITY_ORDER = ("error", "warning", "info")


def _cell(text: str) -> str:
    """Schema text in a table cell: literal, never HTML, a link or an image."""
    return markdown_text(text)


def _sarif_plain(text) -> str:
    """SARIF message text with its embedded-link escapes (`\\[`, `\\]`, `\\\\`) undone."""
    return re.sub(r"\\([\\\[\]])", r"\1", str(text))


def _rows(sarif: dict) -> list[dict]:
    rows = []
    for run in sarif.get("runs", []):
        rules = run.get("tool", {}).get("driver", {}).get("rules", [])
        names = {r.get("id"): r.get("name", "") for r in rules if isinstance(r, dict)}
        for result in run.get("results", []):
            location = (result.get("locations") or [{}])[0].get("physicalLocation", {})
            region = location.get("region", {})
            properties = result.get("properties", {})
            rule_id = result.get("ruleId", "")
            rows.append(
                {
                    "severity": LEVEL_TO_SEVERITY.get(result.get("level", "warning"), "warning"),
                    "code": rule_id,
                    "rule": f"{rule_id} {names.get(rule_id, '')}".strip(),
                    "path": location.get("artifactLocation", {}).get("uri", ""),
                    "line": region.get("startLine", 1),
                    "column": region.get("startColumn", 1),
                    "tokenizer": properties.get("tokenizer") or "",
                    "field": properties.get("field") or "",
                    "site": properties.get("fieldPointer") or properties.get("pointer") or "",
                    "message": _sarif_plain(result.get("message", {}).get("text", "")),
                }
            )
    rows.sort(key=lambda r: (SEVERITY_ORDER.index(r["severity"]), r["path"], r["line"], r["column"]))
    return rows


def _fields(rows: list[dict]) -> list[dict]:
    """One entry per (file, field, tokenizer), worst severity first; its rows worst first."""
    groups: dict[tuple, dict] = {}
    for row in rows:  # rows are sorted worst first, so a group's first row is its worst
        key = (row["path"], row["site"] if row["field"] else f"{row['site']}#{row['code']}", row["tokenizer"])
        group = groups.setdefault(key, {"severity": row["severity"], "first": row, "rows": []})
        group["rows"].append(row)
    return list(groups.values())


def _field_table(groups: list[dict]) -> list[str]:
    lines = ["| Field | Location | Tokenizer | Findings | What goes wrong |", "|---|---|---|---|---|"]
    for group in groups[:MAX_ROWS]:
        first = group["first"]
        codes = ", ".join(dict.fromkeys(f"{r['code']} {r['severity']}" for r in group["rows"]))
        where = markdown_code(f"{first['path']}:{first['line']}:{first['column']}")
        lines.append(
            f"| {_cell(first['field'] or '(file)')} | {where} | {_cell(first['tokenizer'])} | "
            f"{_cell(codes)} | {_cell(first['message'].removeprefix(first['field'] + ': '))} |"
        )
    if len(groups) > MAX_ROWS:
        lines.append(f"\n… and {len(groups) - MAX_ROWS} more; see the SARIF report or the annotations.")
    return lines


def render(
    sarif: dict | None, exit_code: int | None = None, fail_on: str = "error", max_warnings: int | None = None
) -> str:
    lines = ["## pcdlint", ""]
    if sarif is None:
        lines.append(
            f"pcdlint did not produce a report (exit code {exit_code}): a usage or input "
            "error; see the step log."
        )
        return "\n".join(lines) + "\n"
    rows = _rows(sarif)
    counts = Counter(r["severity"] for r in rows)
    failed = f"findings at or above `{fail_on}`"
    at_fail_on = SEVERITY_ORDER[: SEVERITY_ORDER.index(fail_on) + 1] if fail_on in SEVERITY_ORDER else ()
    if (
        max_warnings is not None
        and counts["warning"] > max_warnings
        and not any(counts[s] for s in at_fail_on)
    ):
        failed = (
            f"{counts['warning']} warning{'s' if counts['warning'] != 1 else ''}, "
            f"more than max-warnings {max_warnings}"
        )
    parts = ", ".join(f"{counts[s]} {s}" for s in SEVERITY_ORDER if counts[s])
    verdict = (
        {
            0: "passed",
            1: f"failed ({failed})",
            2: "failed (usage or input error)",
        }.get(exit_code, "")
        if exit_code is not None
        else ""
    )
    head = f"**{len(rows)} finding{'s' if len(rows) != 1 else ''}**" + (f" ({parts})" if parts else "")
    lines.append(head + (f" — {verdict}" if verdict else ""))
    if not rows:
        return "\n".join(lines) + "\n"
    groups = _fields(rows)
    errors = [g for g in groups if g["severity"] == "error"]
    warnings = [g for g in groups if g["severity"] == "warning"]
    if errors:
        lines += ["", f"### {len(errors)} field{'s' if len(errors) != 1 else ''} with errors", ""]
        lines += _field_table(errors)
        lines += ["", "Run `pcdlint suggest FILE` to see verified fixes."]
    else:
        lines += ["", "No field has an error."]
    if warnings:
        lines += [
            "",
            f"<details><summary>{len(warnings)} field{'s' if len(warnings) != 1 else ''} "
            "with warnings</summary>",
            "",
        ]
        lines += _field_table(warnings)
        lines += ["", "</details>"]
    lines += ["", "| Rule | Findings |", "|---|---:|"]
    for rule, count in sorted(Counter(r["rule"] for r in rows).items()):
        lines.append(f"| {_cell(rule)} | {count} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m auditor.reporting.action_summary")
    parser.add_argument("sarif", nargs="?")
    parser.add_argument("--exit-code", type=int)
    parser.add_argument("--fail-on", default="error")
    parser.add_argument("--max-warnings", type=int, default=None)
    args = parser.parse_args(argv)
    sarif = None
    path = Path(args.sarif) if args.sarif else None
    if path is not None and path.is_file():
        try:
            sarif = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            print(f"pcdlint: error: {path}: cannot read SARIF ({exc})", file=sys.stderr)
            return 2
    sys.stdout.write(
        render(sarif, args.exit_code, args.fail_on, args.max_warnings)
        .encode("utf-8", "backslashreplace")
        .decode("utf-8")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
