"""Human-readable output, grouped by field, errors first.

One header line per field (`path:line:col: field [tokenizer] PCD001 error, PCD002 warning`),
then one indented line per finding (`line:col CODE severity: message`). Info findings only
with `show_info`, cost lines only with `cost`; `statistics` prints counts per rule instead of
the findings. The last line says what to do next.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from auditor.linter.engine import LintRun
from auditor.linter.registry import SEVERITIES, load_rules
from auditor.reporting import formatter
from auditor.reporting.fields import FieldGroup, field_groups, verdict
from auditor.reporting.matrix import matrix_table

SEVERITY_COLOURS = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;34m"}
RESET = "\033[0m"


def _paint(severity: str, color: bool) -> str:
    return f"{SEVERITY_COLOURS.get(severity, '')}{severity}{RESET}" if color else severity


def group_lines(group: FieldGroup, color: bool = False) -> list[str]:
    where = f"{group.path}:{group.span.line}:{group.span.column}"
    if color:
        where = f"\033[1m{where}{RESET}"
    tok = f" [{group.tokenizer}]" if group.tokenizer else ""
    codes = ", ".join(f"{code} {_paint(severity, color)}" for code, severity in group.codes)
    lines = [f"{where}: {group.label}{tok} {codes}"]
    for finding in group.findings:
        lines.append(
            f"    {finding.line}:{finding.column} {finding.code} "
            f"{_paint(finding.severity, color)}: {finding.message}"
        )
    return lines


def summary_line(run: LintRun, show_info: bool = True) -> str:
    findings = run.findings
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    sites = sum(len(r.model.sites) for r in run.files)
    tokenizers = ", ".join(t.id for t in run.tokenizers)
    parts = ", ".join(
        f"{n} {s}{'s' if n != 1 and s != 'info' else ''}"
        + (" hidden" if s == "info" and not show_info else "")
        for s, n in counts.items()
        if n
    )
    found = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}" + (f" ({parts})" if parts else "")
    tail = f"; {len(run.suppressed)} suppressed" if run.suppressed else ""
    return (
        f"{found} in {len(run.files)} file{'s' if len(run.files) != 1 else ''}, "
        f"{sites} field{'s' if sites != 1 else ''}; tokenizers: {tokenizers}{tail}"
    )


def unrecognized_line(run: LintRun) -> str:
    """`2 files had no schema: a.json, b.json` — files read but not linted are never silent."""
    paths = [r.model.path for r in run.unrecognized]
    shown = ", ".join(paths[:20]) + (f" and {len(paths) - 20} more" if len(paths) > 20 else "")
    return f"{len(paths)} file{'s' if len(paths) != 1 else ''} had no schema: {shown}"


def statistics_lines(run: LintRun) -> list[str]:
    """Counts per rule, like `ruff --statistics`: count, code, name, severities."""
    rules = load_rules()
    by_code: dict[str, Counter] = {}
    for finding in run.findings:
        by_code.setdefault(finding.code, Counter())[finding.severity] += 1
    lines = []
    for code, counts in sorted(by_code.items(), key=lambda item: (-sum(item[1].values()), item[0])):
        name = rules[code].name if code in rules else ""
        split = ", ".join(f"{counts[s]} {s}" for s in reversed(SEVERITIES) if counts[s])
        lines.append(f"{sum(counts.values()):>6}  {code}  {name:<28} {split}")
    return lines


@formatter("text", "findings grouped by field, errors first, then a summary and the next step")
def render(
    run: LintRun,
    quiet: bool = False,
    color: bool = False,
    show_info: bool = False,
    cost: bool = False,
    statistics: bool = False,
    failed: bool = False,
    **_options: Any,
) -> str:
    lines: list[str] = []
    if statistics:
        lines.extend(statistics_lines(run))
    else:
        for group in field_groups(run, show_info):
            lines.extend(group_lines(group, color))
    if not quiet:
        for result in run.files:
            for note in result.model.notes:
                lines.append(f"{result.model.path}: note: {note}")
            for ref in result.model.remote_refs:
                lines.append(f"{result.model.path}: note: remote $ref '{ref}' not followed")
        lines.extend(f"note: {note}" for note in run.notes)  # (the decision engine assumed)
        if cost:
            lines.extend(cost_lines(run))
        lines.append(summary_line(run, show_info))
        if run.unrecognized:
            lines.append(unrecognized_line(run))
        if run.quiet_code:
            count = len(run.quiet_code)
            lines.append(f"{count} code file{'s' if count != 1 else ''} held no decision request")
        if run.errors:
            lines.append(errors_line(run))
        if failed:  # (a run that exits 2 has no verdict: the errors above are why)
            return "\n".join(lines) + "\n"
        table = matrix_table(run)
        if table:
            lines.append(table)
        lines.append(verdict(run, show_info).next_step())
    return "\n".join(lines) + ("\n" if lines else "")


def errors_line(run: LintRun) -> str:
    """`1 file in error (not read): a.yaml` — the files a run could not read, named once more
    at the end (each error is on stderr)."""
    paths = [error.path for error in run.errors]
    shown = ", ".join(paths[:20]) + (f" and {len(paths) - 20} more" if len(paths) > 20 else "")
    return f"{len(paths)} file{'s' if len(paths) != 1 else ''} in error (not read): {shown}"


def cost_lines(run: LintRun) -> list[str]:
    """One line per file, tokenizer and engine profile (and run totals for several files)."""
    lines = []
    for tokenizer_id, cost in (run.cost or {}).items():
        for path, c in cost["files"].items():
            for engine, e in c.get("engines", {"": c}).items():
                pcd = e["pcd"]
                worst = f", worst field {pcd['worst_field']}" if pcd["worst_field"] else ""
                lines.append(
                    f"cost [{tokenizer_id}] {path}: PCD {pcd['passes']} passes under {pcd.get('engine', engine)}"
                    f" (1 prefill + 1 suffix pass + {pcd['fallback_steps']} fallback{worst}) vs naive "
                    f"{c['naive']['passes_longest']} (longest options) / {c['naive']['passes_mean']} (mean)"
                    f" passes over {c['fields']} fields"
                )
        r = cost["run"]
        if r["files"] > 1:
            for engine, t in r.get("engines", {"": r}).items():
                lines.append(
                    f"cost [{tokenizer_id}] run: PCD {t['pcd_passes_total']} passes in total "
                    f"under {engine or r.get('engine')} (worst file {t['pcd_passes_worst']}) vs "
                    f"naive {r['naive_passes_longest_total']} (longest) / "
                    f"{r['naive_passes_mean_total']} (mean)"
                )
    return lines
