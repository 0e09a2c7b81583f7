"""The plumbing: crawl files, tokenize each site once per tokenizer, run rules, stamp, filter, sort.

Rules only yield findings through their context; where a finding points (the site, or one option
of it), its code, name, severity and tokenizer are stamped here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import InputFileError, UsageError
from auditor.lint import selection, suppressions
from auditor.lint.context import Finding, RuleContext
from auditor.lint.registry import INTERNAL_ERROR, Rule, load_rules, severity_rank
from auditor.lint.suggest import verified_suggestions
from auditor.pcd.cost import run_cost
from auditor.pcd.scoring import SiteTokens, prefetch
from auditor.schema.cache import analyse_file
from auditor.schema.documents import LINTABLE_SUFFIXES
from auditor.schema.sites import FileModel, Site
from auditor.tokenizers.loader import LoadedTokenizer


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
    cost: dict | None = None  # the cost model per tokenizer (auditor.pcd.cost), set by lint()

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for result in self.files for f in result.findings])

    def max_severity(self) -> str | None:
        found = [severity_rank(f.severity) for f in self.findings]
        return None if not found else ("info", "warning", "error")[max(found)]


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.span.line, f.span.column, f.code, f.tokenizer or "", f.pointer))


# --------------------------------------------------------------------------- selection


def validate_selectors(selectors: list[str], option: str) -> None:
    for selector in selection.unknown(selectors):
        raise UsageError(f"{option}: '{selector}' matches no rule (see `pcdlint rules`)")


def selected_rules(options: LintOptions) -> list[Rule]:
    return selection.selected_rules(options.select, options.ignore)


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
        named = {getattr(selection.find_rule(e), "code", None) for es in model.suppressions.values() for e in es}
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
        raw.extend((rule, f) for f in _checked(rule, model, ctx))
    for tokenizer in tokenizers:
        prefetch(model.sites, tokenizer)
        for site in model.sites:
            tokens = result.site_tokens(site, tokenizer)
            for rule in site_rules:
                ctx = _context(rule, options, model, site, tokenizer)
                raw.extend((rule, f) for f in _checked(rule, tokens, ctx))
    used: set[tuple[str, str]] = set()
    for rule, finding in raw:
        silenced_by = suppressions.suppressing_entries(model, finding, rule)
        used.update(silenced_by)
        if rule.code not in chosen_codes and finding.code != INTERNAL_ERROR.code:
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


def _checked(rule: Rule, subject, ctx: RuleContext) -> list[Finding]:
    """The rule's findings; a rule that raises yields one PCD999 finding instead (the run goes
    on). PCDLINT_DEBUG=1 lets the exception through."""
    try:
        return list(rule.check(subject, ctx))
    except Exception as exc:
        if os.environ.get("PCDLINT_DEBUG"):
            raise
        internal = RuleContext(INTERNAL_ERROR, {}, ctx.file, ctx.site, ctx.tokenizer,
                               INTERNAL_ERROR.severity)
        message = f"{rule.code} {rule.name} raised {type(exc).__name__}: {exc}"
        return [internal.finding(message, data={"rule": rule.code, "exception": type(exc).__name__,
                                                "detail": str(exc)})]


def _context(rule: Rule, options: LintOptions, model: FileModel, site, tokenizer) -> RuleContext:
    merged = {**rule.options, **options.rule_options.get(rule.code, {})}
    severity = options.severities.get(rule.code, rule.severity)
    return RuleContext(rule, merged, model, site, tokenizer, severity, options.suggestions,
                       verified_suggestions)
