"""GitHub Actions workflow commands: one `::error file=…,line=…,col=…::…` annotation per field.

Findings are grouped by field (as in the text output): the annotation has the field's worst
severity, sits where its worst finding points, and lists every finding, one per line. Info
findings are annotated (as notices) only with `show_info`.

Chosen automatically when `GITHUB_ACTIONS=true` and no `--format` is given. Properties and
messages are escaped as the Actions runner expects (`%`, CR, LF; `:` and `,` in properties).
"""

from __future__ import annotations

from typing import Any

from auditor.linter.context import Finding
from auditor.linter.engine import LintRun
from auditor.reporting import formatter
from auditor.reporting.escape import workflow_data, workflow_property
from auditor.reporting.fields import FieldGroup, field_groups, verdict
from auditor.reporting.text import summary_line

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


escape_data = workflow_data  # @actions/core's escapeData / escapeProperty
escape_property = workflow_property


def annotation(finding: Finding) -> str:
    span = finding.span
    props = {
        "file": finding.path,
        "line": span.line,
        "col": span.column,
        "endLine": span.end_line,
        "title": f"{finding.code} {finding.name}" + (f" [{finding.tokenizer}]" if finding.tokenizer else ""),
    }
    if span.end_line == span.line:
        props["endColumn"] = span.end_column
    joined = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items())
    text = f"{finding.field}: {finding.message}" if finding.field else finding.message
    return f"::{COMMANDS[finding.severity]} {joined}::{escape_data(text)}"


def group_annotation(group: FieldGroup) -> str:
    worst = group.findings[0]
    span = worst.span
    codes = ", ".join(f"{code} {severity}" for code, severity in group.codes)
    props = {
        "file": group.path,
        "line": span.line,
        "col": span.column,
        "endLine": span.end_line,
        "title": f"{group.label}" + (f" [{group.tokenizer}]" if group.tokenizer else "") + f" {codes}",
    }
    if span.end_line == span.line:
        props["endColumn"] = span.end_column
    joined = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items())
    text = "\n".join(f"{f.code} {f.name} ({f.severity}, line {f.line}): {f.message}" for f in group.findings)
    return f"::{COMMANDS[group.severity]} {joined}::{escape_data(text)}"


@formatter("github", "GitHub Actions workflow commands (one annotation per field)")
def render(run: LintRun, quiet: bool = False, show_info: bool = False, **_options: Any) -> str:
    lines = [group_annotation(g) for g in field_groups(run, show_info)]
    if not quiet:
        lines.append(escape_data(summary_line(run, show_info)))
        lines.append(escape_data(verdict(run, show_info).next_step()))
    return "\n".join(lines) + "\n"
