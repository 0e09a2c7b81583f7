"""Human-readable lines: `path:line:col: CODE severity [tokenizer] field: message`."""

from __future__ import annotations

from auditor.lint.engine import LintRun
from auditor.reporting import formatter
from auditor.reporting.matrix import matrix_table

SEVERITY_COLOURS = {"error": "\033[1;31m", "warning": "\033[1;33m", "info": "\033[1;34m"}
RESET = "\033[0m"


def finding_line(finding, color: bool = False) -> str:
    where = f"{finding.path}:{finding.line}:{finding.column}"
    tok = f" [{finding.tokenizer}]" if finding.tokenizer else ""
    field = f" {finding.field}:" if finding.field else ""
    severity = finding.severity
    if color:
        where = f"\033[1m{where}{RESET}"
        severity = f"{SEVERITY_COLOURS.get(severity, '')}{severity}{RESET}"
    return f"{where}: {finding.code} {severity}{tok}{field} {finding.message}"


def summary_line(run: LintRun) -> str:
    findings = run.findings
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    sites = sum(len(r.model.sites) for r in run.files)
    tokenizers = ", ".join(t.id for t in run.tokenizers)
    parts = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts.items() if n)
    found = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}" + (f" ({parts})" if parts else "")
    tail = f"; {len(run.suppressed)} suppressed" if run.suppressed else ""
    return (f"{found} in {len(run.files)} file{'s' if len(run.files) != 1 else ''}, "
            f"{sites} fields; tokenizers: {tokenizers}{tail}")


@formatter("text", "one line per finding, then a summary")
def render(run: LintRun, quiet: bool = False, color: bool = False, **_options) -> str:
    lines = [finding_line(f, color) for f in run.findings]
    if not quiet:
        for result in run.files:
            for ref in result.model.remote_refs:
                lines.append(f"{result.model.path}: note: remote $ref '{ref}' not followed")
            if result.model.format == "unknown":
                lines.append(f"{result.model.path}: note: not a JSON Schema or PCD preset; skipped")
        lines.extend(cost_lines(run))
        lines.append(summary_line(run))
        table = matrix_table(run)
        if table:
            lines.append(table)
    return "\n".join(lines) + ("\n" if lines else "")


def cost_lines(run) -> list[str]:
    lines = []
    for tokenizer_id, cost in (run.cost or {}).items():
        for path, c in cost["files"].items():
            pcd = c["pcd"]
            worst = f", worst field {pcd['worst_field']}" if pcd["worst_field"] else ""
            lines.append(
                f"cost [{tokenizer_id}] {path}: PCD {pcd['passes']} passes (1 prefill + 1 suffix pass"
                f" + {pcd['fallback_steps']} fallback{worst}) vs naive {c['naive']['passes_longest']}"
                f" (longest options) / {c['naive']['passes_mean']} (mean) passes over {c['fields']} fields")
        r = cost["run"]
        if r["files"] > 1:
            lines.append(f"cost [{tokenizer_id}] run: PCD {r['pcd_passes_total']} passes in total "
                         f"(worst file {r['pcd_passes_worst']}) vs naive {r['naive_passes_longest_total']} "
                         f"(longest) / {r['naive_passes_mean_total']} (mean)")
    return lines
