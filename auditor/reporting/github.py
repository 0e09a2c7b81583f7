"""GitHub Actions workflow commands: one `::error file=…,line=…,col=…::…` annotation per finding.

Chosen automatically when `GITHUB_ACTIONS=true` and no `--format` is given. Properties and
messages are escaped as the Actions runner expects (`%`, CR, LF; `:` and `,` in properties).
"""

from __future__ import annotations

from auditor.lint.engine import LintRun
from auditor.reporting import formatter
from auditor.reporting.escape import workflow_data, workflow_property
from auditor.reporting.text import summary_line

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


escape_data = workflow_data  # @actions/core's escapeData / escapeProperty
escape_property = workflow_property


def annotation(finding) -> str:
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


@formatter("github", "GitHub Actions workflow commands (annotations)")
def render(run: LintRun, quiet: bool = False, **_options) -> str:
    lines = [annotation(f) for f in run.findings]
    if not quiet:
        lines.append(escape_data(summary_line(run)))
    return "\n".join(lines) + "\n"
