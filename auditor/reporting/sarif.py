"""SARIF 2.1.0 for code scanning (GitHub and other SARIF consumers).

Rule metadata comes from the rule registry. Each result has one location whose region is the
exact source token of what the finding points at: for an option, the option as written in the
file *including* its JSON quotes (`"CAT_000_Live_Animals"`), or the YAML scalar as written (with
its quotes when it is quoted); for a field-level finding, the field's key. Columns count Unicode
code points (`run.columnKind`), end columns are exclusive, as in SARIF.

GitHub's upload limits (25,000 results per run, 1,000 related locations per result, 10 MB
gzipped) are respected by summarising: results past the cap are dropped and a tool execution
notification says how many.

Message texts are plain text with SARIF's embedded-link syntax escaped (`\\[`, `\\]`), so
schema text cannot become a link; non-finite numbers are written as strings (strict JSON).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from auditor.linter.engine import Finding, LintRun
from auditor.linter.pages import rule_help_uri
from auditor.linter.registry import Rule, load_rules
from auditor.reporting import formatter
from auditor.reporting.escape import sarif_text
from auditor.reporting.json_text import dumps_strict, dumps_strict_bytes
from auditor.version import __version__

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/pcdlint/pcdlint"
SRCROOT = "%SRCROOT%"
MAX_RESULTS = 25_000
MAX_RELATED = 1_000
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(path: str) -> str:
    """The finding's path relative to the working directory (the source root), as a URI reference."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = Path(os.path.relpath(candidate))
        except ValueError:  # another drive on Windows
            return candidate.as_uri()
    # an undecodable file name (fsdecoded: U+DC80-U+DCFF) is percent-encoded as its own bytes
    return quote(candidate.as_posix(), safe="/-._~!$&'()*+,;=:@", errors="surrogateescape")


def rule_descriptor(rule: Rule) -> dict:
    sections = rule.sections
    what = sections.get("What it does", rule.summary)
    why = sections.get("Why is this bad?", "")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{what}\n\n{why}".strip()},
        "help": {"text": rule.doc.strip(), "markdown": rule.doc_markdown},
        "helpUri": rule_help_uri(rule.code),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["pcd", "tokenizer", rule.name], "precision": "very-high"},
    }


def _region(span) -> dict:
    return {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }


def _location(path: str, span, pointer: str, message: str | None = None) -> dict:
    location = {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(path), "uriBaseId": SRCROOT},
            "region": _region(span),
        },
        "logicalLocations": [{"fullyQualifiedName": pointer or "/", "kind": "element"}],
    }
    if message:
        location["message"] = {"text": sarif_text(message)}
    return location


def result_for(finding: Finding, rule_index: dict[str, int]) -> dict:
    location = _location(finding.path, finding.span, finding.pointer)
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index[finding.code],
        "level": LEVELS[finding.severity],
        "message": {
            "text": sarif_text(f"{finding.field}: {finding.message}" if finding.field else finding.message)
        },
        "locations": [location],
        "partialFingerprints": {"pcdlintFinding/v1": finding.fingerprint},
        "properties": {
            "tokenizer": finding.tokenizer,
            "engine": finding.engine,
            "field": finding.field,
            "pointer": finding.pointer,
            "fieldPointer": finding.site_pointer,
        },
    }
    if finding.verification is not None:
        result["properties"]["verification"] = finding.verification
    if finding.related:
        result["relatedLocations"] = [
            {"id": i + 1, **_location(finding.path, rel.span, rel.pointer, rel.note or "same scored token")}
            for i, rel in enumerate(finding.related[:MAX_RELATED])
        ]
    return result


def run_to_sarif(run: LintRun, max_results: int = MAX_RESULTS) -> dict:
    rules = list(load_rules().values())
    rule_index = {rule.code: i for i, rule in enumerate(rules)}
    findings = run.findings
    kept = findings[:max_results]
    notifications: list[dict] = [
        {"level": "error", "message": {"text": sarif_text(str(error))}} for error in run.errors
    ]
    for result in run.unrecognized:  # read but not linted: said, never silent
        notifications.append(
            {
                "level": "note",
                "message": {
                    "text": sarif_text(
                        f"{result.model.path}: no schema found (not a JSON "
                        "Schema, PCD preset or known wrapper); not linted"
                    )
                },
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(result.model.path), "uriBaseId": SRCROOT}
                        }
                    }
                ],
            }
        )
    if len(findings) > len(kept):
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{len(findings) - len(kept)} of {len(findings)} findings omitted "
                    f"to stay within {max_results} results per run; see "
                    f"`pcdlint check --format json` for all of them"
                },
            }
        )
    invocation: dict[str, Any] = {"executionSuccessful": not run.errors}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    cwd = Path.cwd().as_uri().rstrip("/") + "/"
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pcdlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [rule_descriptor(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": cwd}},
                "invocations": [invocation],
                "columnKind": "unicodeCodePoints",
                "results": [result_for(f, rule_index) for f in kept],
                "properties": {
                    "tokenizers": [t.id for t in run.tokenizers],
                    "engines": [e.name for e in run.engines],
                    "findings": len(findings),
                    "omitted": len(findings) - len(kept),
                },
            }
        ],
    }


def render_bytes(run: LintRun, **_options: Any) -> bytes:
    """`render(run)` as the bytes written (what `pcdlint check --format sarif` writes)."""
    return dumps_strict_bytes(run_to_sarif(run))


@formatter("sarif", "SARIF 2.1.0 for code scanning", render_bytes)
def render(run: LintRun, **_options: Any) -> str:
    return dumps_strict(run_to_sarif(run), newline=True)
