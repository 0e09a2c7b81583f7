"""JSON output, version 1: a documented contract (see README, "JSON output")."""

from __future__ import annotations

from auditor import __version__
from auditor.lint.engine import LintRun
from auditor.reporting import formatter
from auditor.reporting.json_text import dumps_strict, dumps_strict_bytes
from auditor.reporting.matrix import matrix_dict

JSON_FORMAT_VERSION = 1


def run_to_dict(run: LintRun) -> dict:
    findings = run.findings
    by_code: dict[str, int] = {}
    by_severity: dict[str, int] = {}
    for finding in findings:
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
        by_severity[finding.severity] = by_severity.get(finding.severity, 0) + 1
    return {
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "pcdlint", "version": __version__},
        "tokenizers": [t.describe() for t in run.tokenizers],
        "engines": [e.describe() for e in run.engines],
        "files": [result.to_dict() for result in run.files],
        "findings": [f.to_dict() for f in findings],
        "errors": [str(e) for e in run.errors],
        "matrix": matrix_dict(run),
        "skipped": [str(e) for e in run.skipped],
        "summary": {
            "files": len(run.files),
            "sites": sum(len(r.model.sites) for r in run.files),
            "findings": len(findings),
            "by_code": dict(sorted(by_code.items())),
            "by_severity": by_severity,
            "suppressed": len(run.suppressed),
            "unrecognized": [r.model.path for r in run.unrecognized],
            "cost": run.cost or {},
        },
    }


def _checked(run: LintRun) -> set[int]:
    """The findings' data whose floats the run checked already (Finding.plain_floats)."""
    return {id(f.data) for result in run.files for f in result.findings if f.plain_floats}


def render_bytes(run: LintRun, **_options) -> bytes:
    """`render(run)` as the bytes written (what `pcdlint check --format json` writes)."""
    return dumps_strict_bytes(run_to_dict(run), _checked(run))


@formatter("json", "machine-readable, versioned (version 1)", render_bytes)
def render(run: LintRun, **_options) -> str:
    return dumps_strict(run_to_dict(run), _checked(run), newline=True)
