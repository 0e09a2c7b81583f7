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
from auditor.pcd.engines import DEFAULT_ENGINE, EngineProfile, UnknownEngine, get_engine
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
    engine: str | None = None  # the engine profile of a per-engine rule; None: any engine

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def fingerprint(self) -> str:
        """Stable across edits that move lines: rule, file, site pointer, tokenizer (and the
        engine, unless it is the default one, so baselines written before engines still hold)."""
        parts = [self.code, self.path, self.site_pointer or self.pointer, self.tokenizer or ""]
        if self.engine not in (None, DEFAULT_ENGINE):
            parts.append(self.engine)
        key = "\0".join(parts)
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
            "engine": self.engine,
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
                 tokenizer: LoadedTokenizer | None, severity: str, suggestions: bool = True,
                 engine: EngineProfile | None = None):
        self.rule, self.options, self.file, self.site = rule, options, file, site
        self.tokenizer, self.severity = tokenizer, severity
        self.suggestions = suggestions  # whether rules should attach verified fix suggestions
        self.engine = engine or get_engine(DEFAULT_ENGINE)  # the profile this check runs under

    @property
    def letters(self) -> str:
        """The letter alphabet for slot remaps: the `letters` option, else the engine's."""
        return self.options.get("letters") or self.engine.letters

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
            related=related_locations, engine=self.engine.name if self.rule.per_engine else None,
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
    engines: list[str] = field(default_factory=lambda: [DEFAULT_ENGINE])  # profiles, by name

    def engine_profiles(self) -> list[EngineProfile]:
        try:
            return [get_engine(name) for name in dict.fromkeys(self.engines or [DEFAULT_ENGINE])]
        except UnknownEngine as error:
            raise UsageError(f"--engine: {error}") from None


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
    suppressed: list[Finding] = field(default_factory=list)
    cost: dict | None = None  # the cost model per tokenizer (auditor.cost), set by lint()
    engines: list[EngineProfile] = field(default_factory=lambda: [get_engine(DEFAULT_ENGINE)])

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for result in self.files for f in result.findings])

    def max_severity(self) -> str | None:
        found = [severity_rank(f.severity) for f in self.findings]
        return None if not found else ("info", "warning", "error")[max(found)]


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.span.line, f.span.column, f.code, f.tokenizer or "",
                                            f.engine or "", f.pointer))


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


def expand_paths(paths: list[str]) -> list[tuple[Path, str]]:
    """Files as given, and *.json/*.yaml/*.yml under directories, in a stable order."""
    out: list[tuple[Path, str]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if Path(name).suffix.lower() in LINTABLE_SUFFIXES:
                        child = Path(root) / name
                        out.append((child, str(child)))
        else:
            out.append((path, given))
    return out


# --------------------------------------------------------------------------- run


def lint(paths: list[str], tokenizers: list[LoadedTokenizer], options: LintOptions | None = None,
         use_cache: bool = True) -> LintRun:
    options = options or LintOptions()
    rules = selected_rules(options)
    run = LintRun(tokenizers=tokenizers, engines=options.engine_profiles())
    for path, display in expand_paths(paths):
        try:
            model = analyse_file(path, display, use_cache)
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
    engines = options.engine_profiles()
    for rule in file_rules:
        ctx = _context(rule, options, model, None, None)
        raw.extend((rule, f) for f in rule.check(model, ctx))
    for tokenizer in tokenizers:
        prefetch(model.sites, tokenizer)
        for site in model.sites:
            tokens = result.site_tokens(site, tokenizer)
            for rule in site_rules:
                for engine in (engines if rule.per_engine else engines[:1]):
                    ctx = _context(rule, options, model, site, tokenizer, engine)
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


def _context(rule: Rule, options: LintOptions, model: FileModel, site, tokenizer,
             engine: EngineProfile | None = None) -> RuleContext:
    merged = {**rule.options, **options.rule_options.get(rule.code, {})}
    severity = options.severities.get(rule.code, rule.severity)
    return RuleContext(rule, merged, model, site, tokenizer, severity, options.suggestions, engine)
