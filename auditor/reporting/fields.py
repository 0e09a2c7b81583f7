"""Findings grouped by field, worst first: what the text, GitHub and HTML outputs are built on.

A field group is one enum-like field under one tokenizer (tokenizer-independent findings of a
field form their own group), or one file-level location (an invalid schema, a stale
suppression). Groups are ordered errors first, then by file and line; the findings inside a
group by severity, then line. `verdict` counts what changes a decision: fields with an error.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from auditor.linter.engine import Finding, LintRun
from auditor.linter.registry import SEVERITIES, severity_rank
from auditor.schema.documents import Span
from auditor.schema.evalconfigs import label_set_scoring


@dataclass
class FieldGroup:
    path: str
    pointer: str  # the field's site pointer, or the finding's pointer for file-level findings
    field: str  # "" for file-level findings
    tokenizer: str | None
    span: Span
    findings: list[Finding] = dataclasses.field(default_factory=list)

    @property
    def severity(self) -> str:
        return SEVERITIES[max(severity_rank(f.severity) for f in self.findings)]

    @property
    def codes(self) -> list[tuple[str, str]]:
        """(code, severity) once per code, worst first: `PCD001 error, PCD002 warning`."""
        seen: dict[str, str] = {}
        for finding in self.findings:
            if finding.code not in seen or severity_rank(finding.severity) > severity_rank(
                seen[finding.code]
            ):
                seen[finding.code] = finding.severity
        return sorted(seen.items(), key=lambda item: (-severity_rank(item[1]), item[0]))

    @property
    def label(self) -> str:
        return self.field or self.pointer or "(file)"


def shown(findings: list[Finding], show_info: bool) -> list[Finding]:
    return [f for f in findings if show_info or f.severity != "info"]


def field_groups(run: LintRun, show_info: bool = True) -> list[FieldGroup]:
    sites = {(r.model.path, s.pointer): s for r in run.files for s in r.model.sites}
    groups: dict[tuple, FieldGroup] = {}
    for finding in shown(run.findings, show_info):
        site = sites.get((finding.path, finding.site_pointer)) if finding.field else None
        key: tuple
        if site is not None:
            key = (finding.path, site.pointer, finding.tokenizer)
            span, pointer, name = site.span, site.pointer, finding.field
        else:
            key = (finding.path, finding.pointer, finding.tokenizer, finding.code)
            span, pointer, name = finding.span, finding.pointer, finding.field
        group = groups.get(key)
        if group is None:
            group = groups[key] = FieldGroup(finding.path, pointer, name, finding.tokenizer, span)
        group.findings.append(finding)
    for group in groups.values():
        group.findings.sort(key=lambda f: (-severity_rank(f.severity), f.line, f.column, f.code))
    return sorted(
        groups.values(),
        key=lambda g: (-severity_rank(g.severity), g.path, g.span.line, g.span.column, g.tokenizer or ""),
    )


@dataclass
class Verdict:
    wrong_fields: int  # distinct fields (any tokenizer) with an error finding
    wrong_files: list[str]  # files holding those fields, in order
    error_files: list[str]  # files with any error, fields or not
    warning_fields: int  # fields (or file-level places) whose worst finding is a warning
    hidden_info: int
    fields: int
    # whether `pcdlint suggest` can rename the wrong fields (not where all are evaluation-config
    # label sets, which a harness scores by its own rule: auditor.schema.evalconfigs)
    suggestable: bool = True

    def sentence(self, tokenizers: list[str]) -> str:
        """The HTML report's first line: `5 of 103 fields will be decided wrongly …`."""
        with_ = " and ".join(tokenizers)
        if self.wrong_fields:
            return (
                f"{self.wrong_fields} of {self.fields} field{_s(self.fields)} will be decided "
                f"wrongly by first-token scoring with {with_}."
            )
        if self.error_files:
            return f"{len(self.error_files)} file{_s(len(self.error_files))} cannot be used as written."
        if self.warning_fields:
            return (
                f"No field will be decided wrongly with {with_}; {self.warning_fields} "
                f"field{_s(self.warning_fields)} {'has' if self.warning_fields == 1 else 'have'} "
                "warnings worth a look."
            )
        return f"No field will be decided wrongly with {with_}."

    def next_step(self) -> str:
        """The text output's last line: what to do next."""
        if self.wrong_fields and not self.suggestable:
            return (
                f"{self.wrong_fields} label set{_s(self.wrong_fields)} will be decided wrongly by "
                "the harness scorer each finding names; pcdlint explain CODE says how to fix them."
            )
        if self.wrong_fields:
            target = self.wrong_files[0] if len(self.wrong_files) == 1 else "FILE"
            return (
                f"{self.wrong_fields} field{_s(self.wrong_fields)} will be decided wrongly. "
                f"Run pcdlint suggest {target} to see verified fixes."
            )
        if self.error_files:
            return (
                f"{len(self.error_files)} file{_s(len(self.error_files))} cannot be used as "
                "written; fix the errors above (pcdlint explain CODE says how)."
            )
        hidden = (
            f" {self.hidden_info} info finding{_s(self.hidden_info)} hidden (--show-info)."
            if self.hidden_info
            else ""
        )
        if self.warning_fields:
            return (
                f"No field will be decided wrongly; {self.warning_fields} field"
                f"{_s(self.warning_fields)} {'has' if self.warning_fields == 1 else 'have'} "
                f"warnings (pcdlint explain CODE says why).{hidden}"
            )
        return f"No field will be decided wrongly.{hidden}"


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def verdict(run: LintRun, show_info: bool = True) -> Verdict:
    findings = run.findings
    # an error on a decision request's question makes the engine refuse the request: the file
    # cannot be used as written, but nothing is decided wrongly
    questions = {(r.model.path, s.pointer) for r in run.files for s in r.model.sites if s.is_decision}
    wrong = {(f.path, f.site_pointer) for f in findings if f.severity == "error" and f.field} - questions
    warned = {(f.path, f.site_pointer or f.pointer) for f in findings if f.severity == "warning"} - wrong
    # the input as it was named (`pkg.module:Ticket` for a model read from app/models.py): the
    # next-step command must accept it
    named_as = {r.model.path: r.model.source or r.model.path for r in run.files}
    wrong_files = list(dict.fromkeys(named_as.get(path, path) for path, _ in sorted(wrong)))
    error_files = list(dict.fromkeys(f.path for f in findings if f.severity == "error"))
    hidden = 0 if show_info else sum(1 for f in findings if f.severity == "info")
    label_sets = {(r.model.path, s.pointer) for r in run.files for s in r.model.sites if label_set_scoring(s)}
    return Verdict(
        len(wrong),
        wrong_files,
        error_files,
        len(warned),
        hidden,
        sum(len(r.model.sites) for r in run.files),
        suggestable=not wrong or bool(wrong - label_sets),
    )
