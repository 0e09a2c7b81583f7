"""The plumbing: crawl files, tokenize each site once per tokenizer, run rules, stamp, filter, sort.

Rules only yield findings through their context; where a finding points (the site, or one option
of it), its code, name, severity and tokenizer are stamped here.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from auditor import suppressions
from auditor.analysis_cache import analyse_file
from auditor.cost import run_cost
from auditor.documents import LINTABLE_SUFFIXES, Span
from auditor.errors import InputFileError, UsageError
from auditor.registry import Rule, find_rule, load_rules, severity_rank
from auditor.scoring import SiteTokens, prefetch
from auditor.sites import FileModel, Site
from auditor.tokenizer import LoadedTokenizer


@dataclass
class Location:
    pointer: str
    span: Span


@dataclass
class Finding:
    code: str
    name: str
    severity: str
    path: str
    pointer: str
    field: str
    span: Span
    tokenizer: str | None
    message: str
    data: dict = field(default_factory=dict)
    site_pointer: str = ""
    related: list[Location] = field(default_factory=list)
    verification: dict | None = None  # filled by `check --verify` / `pcdlint verify`

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def fingerprint(self) -> str:
        """Stable across edits that move lines: rule, file, site pointer, tokenizer."""
        key = "\0".join([self.code, self.path, self.site_pointer or self.pointer, self.tokenizer or ""])
        return hashlib.sha256(key.encode()).hexdigest()[:32]

    def to_dict(self) -> dict:
        out = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "path": self.path,
            "pointer": self.pointer,
            "site": self.site_pointer,
            "field": self.field,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "tokenizer": self.tokenizer,
            "message": self.message,
            "data": self.data,
            "fingerprint": self.fingerprint,
        }
        if self.verification is not None:
            out["verification"] = self.verification
        return out


class RuleContext:
    """What a rule's `check` gets besides its subject: options and a way to make findings."""

    def __init__(self, rule: Rule, options: dict, file: FileModel, site: Site | None,
                 tokenizer: LoadedTokenizer | None, severity: str, suggestions: bool = True):
        self.rule, self.options, self.file, self.site = rule, options, file, site
        self.tokenizer, self.severity = tokenizer, severity
        self.suggestions = suggestions  # whether rules should attach verified fix suggestions

    def finding(self, message: str, *, data: dict | None = None, option: int | None = None,
                related: list[int] | tuple[int, ...] = (), severity: str | None = None,
                pointer: str | None = None) -> Finding:
        """A finding at the site (or at one option of it, or at an explicit pointer)."""
        site, document = self.site, self.file.document
        if pointer is None and site is not None:
            pointer = site.option_pointers[option] if option is not None else site.pointer
        pointer = pointer if pointer is not None else ""
        if site is not None and option is not None:
            span = site.option_spans[option]
        elif site is not None and pointer == site.pointer:
            span = site.span
        else:
            span = document.span(pointer)
        related_locations = [
            Location(site.option_pointers[i], site.option_spans[i]) for i in related
        ] if site is not None else []
        return Finding(
            code=self.rule.code, name=self.rule.name, severity=severity or self.severity,
            path=self.file.path, pointer=pointer, field=site.field if site else "",
            span=span, tokenizer=self.tokenizer.id if self.tokenizer else None,
            message=message, data=data or {}, site_pointer=site.pointer if site else pointer,
            related=related_locations,
        )


@dataclass
class LintOptions:
    select: list[str] = field(default_factory=lambda: ["PCD"])
    ignore: list[str] = field(default_factory=list)
    rule_options: dict[str, dict] = field(default_factory=dict)  # code → option overrides
    severities: dict[str, str] = field(default_factory=dict)  # code → severity override
    per_file_ignores: list = field(default_factory=list)  # config.PerFileIgnore: .matches(finding)
    # Verified fix suggestions re-lint every candidate renaming: only worth it when an output
    # shows them (JSON, HTML, SARIF); the CLI turns them off for text, github and csv.
    suggestions: bool = True


@dataclass
class FileResult:
    model: FileModel
    findings: list[Finding] = field(default_factory=list)
    # (site pointer, tokenizer id) → the tokenization the rules saw; reports reuse it
    tokens: dict[tuple[str, str], SiteTokens] = field(default_factory=dict, repr=False)

    def site_tokens(self, site: Site, tokenizer: LoadedTokenizer) -> SiteTokens:
        key = (site.pointer, tokenizer.id)
        if key not in self.tokens:
            self.tokens[key] = SiteTokens(site, tokenizer)
        return self.tokens[key]

    def to_dict(self) -> dict:
        return {
            "path": self.model.path,
            "format": self.model.format,
            "sites": [s.to_dict() for s in self.model.sites],
            "remote_refs": self.model.remote_refs,
        }


@dataclass
class LintRun:
    tokenizers: list[LoadedTokenizer]
    files: list[FileResult] = field(default_factory=list)
    errors: list[InputFileError] = field(default_factory=list)
    # files inside linted directories passed over (FIFOs, devices, links leaving the tree)
    skipped: list[InputFileError] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    cost: dict | None = None  # the cost model per tokenizer (auditor.cost), set by lint()

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for result in self.files for f in result.findings])

    def max_severity(self) -> str | None:
        found = [severity_rank(f.severity) for f in self.findings]
        return None if not found else ("info", "warning", "error")[max(found)]


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.span.line, f.span.column, f.code, f.tokenizer or "", f.pointer))


# --------------------------------------------------------------------------- selection


def _matches(selector: str, rule: Rule) -> int:
    """Length of the match (longest wins), 0 when the selector does not name this rule."""
    token = selector.strip()
    if token.lower() == rule.name or token.upper() == "ALL":
        return len(rule.code) + (1 if token.lower() == rule.name else 0)
    if rule.code.startswith(token.upper()):
        return len(token)
    return 0


def validate_selectors(selectors: list[str], option: str) -> None:
    rules = load_rules().values()
    for selector in selectors:
        if not any(_matches(selector, r) for r in rules):
            raise UsageError(f"{option}: '{selector}' matches no rule (see `pcdlint rules`)")


def selected_rules(options: LintOptions) -> list[Rule]:
    chosen = []
    for rule in load_rules().values():
        best_select = max((_matches(s, rule) for s in options.select), default=0)
        best_ignore = max((_matches(s, rule) for s in options.ignore), default=0)
        if best_select and best_select > best_ignore:
            chosen.append(rule)
    return chosen


# --------------------------------------------------------------------------- files


def expand_paths(paths: list[str], notices: list | None = None) -> list[tuple[Path, str]]:
    """Files as given, and *.json/*.yaml/*.yml under directories, in a stable order.

    Inside a directory only regular files are taken, and a symlink (to a file or a directory)
    only when it stays inside the directory named on the command line; what is passed over is
    appended to `notices` as an InputFileError (a FIFO, a device, a link leaving the tree).
    A path named on the command line is always taken as given (read_source still refuses
    anything but a regular file). Directory symlinks are not descended (no loops).
    """
    out: list[tuple[Path, str]] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            out.append((path, given))
            continue
        top = path.resolve()
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if Path(name).suffix.lower() not in LINTABLE_SUFFIXES:
                    continue
                child = Path(root) / name
                skipped = _skip_reason(child, top)
                if skipped is None:
                    out.append((child, str(child)))
                elif notices is not None:
                    notices.append(InputFileError(str(child), skipped))
    return out


def _skip_reason(child: Path, top: Path) -> str | None:
    import stat

    try:
        if child.is_symlink():
            target = child.resolve()
            if not target.is_relative_to(top):
                return "symlink leaves the linted directory; skipped (name it to lint it)"
        mode = child.stat().st_mode
    except (OSError, RuntimeError) as exc:  # a dangling or looping link
        return f"cannot read file ({getattr(exc, 'strerror', None) or exc}); skipped"
    if not stat.S_ISREG(mode):
        return "not a regular file; skipped"
    return None


# --------------------------------------------------------------------------- run


def lint(paths: list[str], tokenizers: list[LoadedTokenizer], options: LintOptions | None = None,
         use_cache: bool = True, max_bytes: int | None = None, max_depth: int | None = None) -> LintRun:
    options = options or LintOptions()
    rules = selected_rules(options)
    run = LintRun(tokenizers=tokenizers)
    for path, display in expand_paths(paths, run.skipped):
        try:
            model = analyse_file(path, display, use_cache, max_bytes, max_depth)
        except InputFileError as error:
            run.errors.append(error)
            continue
        run.files.append(lint_model(model, tokenizers, rules, options, run))
    run.cost = run_cost(run)
    return run


def lint_model(model: FileModel, tokenizers: list[LoadedTokenizer], rules: list[Rule],
               options: LintOptions, run: LintRun | None = None) -> FileResult:
    result = FileResult(model)
    judges = [r for r in rules if r.scope == "suppressions"]
    # A suppression is judged by whether its rule would have fired, selected or not: rules an
    # entry names run too (only when something judges suppressions), their findings unreported.
    extra = []
    if judges:
        named = {getattr(find_rule(e), "code", None) for es in model.suppressions.values() for e in es}
        chosen = {r.code for r in rules}
        extra = [r for r in load_rules().values() if r.code in named and r.code not in chosen
                 and r.scope != "suppressions"]
    checked = rules + extra
    chosen_codes = {r.code for r in rules}
    site_rules = [r for r in checked if r.scope == "site"]
    file_rules = [r for r in checked if r.scope == "file"]
    raw: list[tuple[Rule, Finding]] = []
    for rule in file_rules:
        ctx = _context(rule, options, model, None, None)
        raw.extend((rule, f) for f in rule.check(model, ctx))
    for tokenizer in tokenizers:
        prefetch(model.sites, tokenizer)
        for site in model.sites:
            tokens = result.site_tokens(site, tokenizer)
            for rule in site_rules:
                ctx = _context(rule, options, model, site, tokenizer)
                raw.extend((rule, f) for f in rule.check(tokens, ctx))
    used: set[tuple[str, str]] = set()
    for rule, finding in raw:
        silenced_by = suppressions.suppressing_entries(model, finding, rule)
        used.update(silenced_by)
        if rule.code not in chosen_codes:
            continue
        if silenced_by or any(p.matches(finding) for p in options.per_file_ignores):
            if run is not None:
                run.suppressed.append(finding)
            continue
        result.findings.append(finding)
    if judges and model.suppressions:
        subject = suppressions.usage(model, used)
        for rule in judges:
            ctx = _context(rule, options, model, None, None)
            for finding in rule.check(subject, ctx):
                if (suppressions.suppressing_entries(model, finding, rule)
                        or any(p.matches(finding) for p in options.per_file_ignores)):
                    if run is not None:
                        run.suppressed.append(finding)
                    continue
                result.findings.append(finding)
    result.findings = sort_findings(result.findings)
    return result


def _context(rule: Rule, options: LintOptions, model: FileModel, site, tokenizer) -> RuleContext:
    merged = {**rule.options, **options.rule_options.get(rule.code, {})}
    severity = options.severities.get(rule.code, rule.severity)
    return RuleContext(rule, merged, model, site, tokenizer, severity, options.suggestions)
