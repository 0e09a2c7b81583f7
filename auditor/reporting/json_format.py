"""JSON output, version 1: a documented contract (see docs/json-output.md)."""

from __future__ import annotations

from typing import Any

from auditor.linter.context import Finding
from auditor.linter.engine import LintRun
from auditor.reporting import formatter
from auditor.reporting.json_text import dumps_strict, dumps_strict_bytes, orjson_bytes
from auditor.reporting.matrix import matrix_dict
from auditor.version import __version__

JSON_FORMAT_VERSION = 1


def run_to_dict(run: LintRun, fragments: bool = False) -> dict:
    """The JSON document; `fragments`: a finding's data still held as its JSON bytes
    (Finding.data_fragment: a pool worker's) goes in as those bytes (an orjson.Fragment),
    indented to where it sits, so that only orjson can write the document."""
    findings = run.findings
    by_code: dict[str, int] = {}
    by_severity: dict[str, int] = {}
    for finding in findings:
        by_code[finding.code] = by_code.get(finding.code, 0) + 1
        by_severity[finding.severity] = by_severity.get(finding.severity, 0) + 1
    document = {
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "pcdlint", "version": __version__},
        "tokenizers": [t.describe() for t in run.tokenizers],
        "engines": [e.describe() for e in run.engines],
        "files": [result.to_dict() for result in run.files],
        "findings": [_finding_dict(f) for f in findings] if fragments else [f.to_dict() for f in findings],
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
            "code_without_requests": [r.model.path for r in run.quiet_code],
            "cost": run.cost or {},
        },
    }
    if any(site.is_decision for result in run.files for site in result.model.sites):
        # (only where a run read a decision request: a schema run's document is as it was)
        document["decision_engines"] = [row.describe() for row in run.decision_engines]
        document["notes"] = [
            f"{r.model.path}: {note}" for r in run.files for note in r.model.notes
        ] + run.notes
    return document


# A finding's data sits three levels deep: {"findings": [{"data": …}]}; orjson indents each of
# its lines by two spaces a level.
_DATA_INDENT = b"\n" + b"  " * 3


def _finding_dict(finding: Finding) -> dict:
    raw = finding.data_fragment()
    if raw is None:
        return finding.to_dict()
    import orjson

    return finding.to_dict(data=orjson.Fragment(raw.replace(b"\n", _DATA_INDENT)))


def _checked(run: LintRun) -> set[int]:
    """The findings' data whose floats the run checked already (Finding.plain_floats), of
    those whose data is objects; data still held as bytes is not read back for this (in a
    document with fragments it is one; written from objects, it is read back first)."""
    return {id(f.data) for result in run.files for f in result.findings if f.plain_floats and f.made("data")}


def _fragment_bytes(run: LintRun) -> bytes | None:
    """The document as orjson writes it with the findings' data fragments, or None where
    orjson cannot write it as json.dumps would (then it is written from objects)."""
    if not any(f.data_fragment() is not None for result in run.files for f in result.findings):
        return None
    return orjson_bytes(run_to_dict(run, fragments=True), _checked(run), newline=True)


def render_bytes(run: LintRun, **_options: Any) -> bytes:
    """`render(run)` as the bytes written (what `pcdlint check --format json` writes)."""
    raw = _fragment_bytes(run)
    if raw is not None:
        return raw
    return dumps_strict_bytes(run_to_dict(run), _checked(run))


@formatter("json", "machine-readable, versioned (version 1)", render_bytes, suggestions=True, details=True)
def render(run: LintRun, **_options: Any) -> str:
    raw = _fragment_bytes(run)
    if raw is not None:
        return raw.decode()
    return dumps_strict(run_to_dict(run), _checked(run), newline=True)
