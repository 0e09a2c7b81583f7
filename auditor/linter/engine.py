"""The plumbing: crawl files, tokenize each site once per tokenizer, run rules, stamp, filter, sort.

Rules only yield findings through their context; where a finding points (the site, or one option
of it), its code, name, severity and tokenizer are stamped here.
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.errors import InputFileError, UsageError
from auditor.jsonfloats import writes_apart
from auditor.linter import selection, suppressions
from auditor.linter.context import Finding, RuleContext
from auditor.linter.registry import Rule, default_codes, internal_error_rule, load_rules, severity_rank
from auditor.linter.suggest import SharedSuggestions, prefetch_suggestions, verified_suggestions
from auditor.pcd.chat import ChatTemplateBudgetError
from auditor.pcd.cost import result_costs, run_cost
from auditor.pcd.engines import DEFAULT_ENGINE, EngineProfile, EngineSelection, get_engine, select_engines
from auditor.pcd.engines.table import (
    EngineRow,
    UnknownEngineName,
    decision_engines,
    default_decision_row,
)
from auditor.pcd.letters import letter_probe_texts
from auditor.pcd.readouts import renders_in_chat_template
from auditor.pcd.runcache import RunCache
from auditor.pcd.tokens import SiteTokens
from auditor.schema.evalconfigs import label_set_scoring
from auditor.schema.model import FileModel, Site
from auditor.tokenizers.encodings import RunEncodings, encoded_files
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate, shipped_chat_template

if TYPE_CHECKING:
    from auditor.schema.inputs import Input

# a crawled file, or the error that crawling it raised, and whether it was named (not walked to)
Loaded = tuple[FileModel | InputFileError, bool]


@dataclass
class LintOptions:
    select: list[str] = field(default_factory=default_codes)  # the default rule set
    ignore: list[str] = field(default_factory=list)
    rule_options: dict[str, dict] = field(default_factory=dict)  # code → option overrides
    severities: dict[str, str] = field(default_factory=dict)  # code → severity override
    per_file_ignores: list = field(default_factory=list)  # config.PerFileIgnore: .matches(finding)
    # Verified fix suggestions re-lint every candidate renaming: only worth it when an output
    # shows them (JSON, HTML, SARIF); the CLI turns them off for text, github and csv.
    suggestions: bool = True
    # Per-option lists in finding data (PCD001's buckets and unreachable options, PCD013's,
    # PCD002's multi-token pieces): a 100,000-option enum makes hundreds of thousands of dicts.
    # Only outputs that show finding data (JSON, HTML) need them; the CLI turns them off for
    # text, github, csv and SARIF, and re-linting a suggestion's candidate never builds them.
    details: bool = True
    # engines by name (the engine table, auditor.pcd.engines.table): PCD profiles and decision
    # engines; none named: gather for a schema's fields, the System One specification for a
    # decision request's questions
    engines: list[str] = field(default_factory=list)
    # worker processes over files (auditor.linter.pool): None = one per core from 16 files on
    jobs: int | None = None
    # `--chat-template FILE`: the template decision engines render questions in (None: each
    # tokenizer's own, where it ships one; auditor.tokenizers.templates)
    chat_template: ChatTemplate | None = None
    # config key `exclude`: globs a directory walk passes over (besides its default excludes)
    exclude: list[str] = field(default_factory=list)
    # config key `prose-choices`: lint the choice sets written in descriptions (sites of kind
    # "prose", auditor.schema.prose); off until measured precise on real files
    prose_choices: bool = False

    def engine_selection(self) -> EngineSelection:
        """The named engines, resolved once (auditor.pcd.engines.select_engines; a usage error
        for a name the engine table does not let a user name)."""
        try:
            return select_engines(tuple(self.engines))
        except UnknownEngineName as error:
            raise UsageError(f"--engine: {error}") from None

    def engine_names(self) -> list[str]:
        """The named engines, each checked against the engine table (a usage error if unknown)."""
        return list(self.engine_selection().named)

    def named_profiles(self) -> list[EngineProfile]:
        """The named engines that score option names: the PCD profiles named."""
        return list(self.engine_selection().named_profiles)

    def engine_profiles(self) -> list[EngineProfile]:
        """The PCD profiles a schema's fields are checked under (gather when none is named)."""
        return list(self.engine_selection().profiles)

    def decision_rows(self) -> list[EngineRow]:
        """The decision engines a decision request's questions are checked under (the System
        One specification's row when none is named)."""
        return list(self.engine_selection().decision_rows)

    def reading_key(self) -> str:
        """A digest of the options that decide which texts a lint reads (the rules and their
        options, the engines, suggestions, the chat template): the encoding cache's reading key
        (auditor.tokenizers.encodings). Severities, ignores by file and finding details read
        nothing more."""
        template = self.chat_template
        parts = (
            sorted(self.select),
            sorted(self.ignore),
            sorted((code, sorted(map(repr, values.items()))) for code, values in self.rule_options.items()),
            self.suggestions,
            sorted(self.engines),
            None
            if template is None
            else (template.source, template.bos_token, template.eos_token, template.systemone),
        )
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]

    def names_decisions(self) -> bool:
        """Whether a decision request's option names are scored (a named engine scores names)."""
        return self.engine_selection().names_decisions


@dataclass
class FileResult:
    model: FileModel
    findings: list[Finding] = field(default_factory=list)
    named: bool = False  # named on the command line / passed to the API, not found by a walk
    # (site pointer, tokenizer id) → the tokenization the rules saw; reports reuse it
    tokens: dict[tuple[str, str], SiteTokens] = field(default_factory=dict, repr=False)
    # tokenizer id → this file's cost (auditor.pcd.cost), as lint_models (here or in a pool worker) made it
    costs: dict[str, dict | None] = field(default_factory=dict, repr=False)

    def site_tokens(
        self, site: Site, tokenizer: LoadedTokenizer, cache: RunCache | None = None
    ) -> SiteTokens:
        """The site's tokenization the rules saw, made under `cache` (the run's) if not yet."""
        key = (site.pointer, tokenizer.id)
        if key not in self.tokens:
            self.tokens[key] = SiteTokens(site, tokenizer, cache)
        return self.tokens[key]

    def to_dict(self) -> dict:
        return {
            "path": self.model.path,
            "format": self.model.format,
            "dialect": self.model.dialect,
            "sites": [s.to_dict() for s in self.model.sites],
            "remote_refs": self.model.remote_refs,
            "schemas": [
                {"pointer": s.pointer, "kind": s.kind, "format": s.family, "label": s.label}
                for s in self.model.schemas
            ],
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
    # the engines the run was asked for, resolved once (auditor.pcd.engines.EngineSelection);
    # `engines`, `decision_engines`, `names_decisions` and `default_decisions` are read off it
    engine_selection: EngineSelection = field(default_factory=select_engines)
    engines: list[EngineProfile] = field(default_factory=lambda: [get_engine(DEFAULT_ENGINE)])
    empty_dirs: list[str] = field(default_factory=list)  # directories with no JSON/YAML file
    # the decision engines decision requests were checked under; whether an engine named scores
    # their option names (then their questions are costed and tokenized as fields are)
    decision_engines: list[EngineRow] = field(default_factory=lambda: [default_decision_row()])
    names_decisions: bool = False
    # whether no decision engine was named (the note naming --engine is then due)
    default_decisions: bool = True
    chat_template: ChatTemplate | None = None  # `--chat-template FILE` (LintOptions)

    @property
    def notes(self) -> list[str]:
        """What the run assumed (each file's own notes, a `box` question read but not linted,
        are FileModel.notes): where a decision request was checked with no decision engine
        named, one note naming `--engine`."""
        out = []
        if self.default_decisions and any(s.is_decision for r in self.files for s in r.model.sites):
            row = self.decision_engines[0]
            engines = ", ".join(r.name for r in decision_engines() if not r.default)
            out.append(
                f"decision requests were checked against the System One specification "
                f"({row.options.phrase() if row.options else ''} options, "
                f"{row.levels.phrase() if row.levels else ''} levels; names); name the engine "
                f"that serves them with --engine for its own limits and rules ({engines})"
            )
        out += self._template_notes()
        return out

    def _template_notes(self) -> list[str]:
        """Once per tokenizer: decision labels checked with no chat template (none shipped with
        the tokenizer, no --chat-template), where an engine renders questions in one."""
        chat = [r.name for r in self.decision_engines if renders_in_chat_template(r)]
        if (
            not chat
            or self.chat_template is not None
            or not any(s.is_decision for r in self.files for s in r.model.sites)
        ):
            return []
        return [
            f"tokenizer {t.id} ships no chat template and --chat-template was not given: "
            f"labels under {', '.join(chat)} were checked alone after a newline"
            for t in self.tokenizers
            if shipped_chat_template(t) is None
        ]

    @property
    def unrecognized(self) -> list[FileResult]:
        """Files read but holding no schema and no preset: never passed over silently (a code
        file is counted instead: `quiet_code`)."""
        return [r for r in self.files if not r.model.recognized and not self._code(r)]

    @property
    def quiet_code(self) -> list[FileResult]:
        """Code files holding no decision request (a repository has many, and the pre-commit
        hook names each changed one): counted in the summary, never an error."""
        return [r for r in self.files if not r.model.recognized and self._code(r)]

    @staticmethod
    def _code(result: FileResult) -> bool:
        from auditor.schema.documents import CODE_SUFFIXES

        return Path(result.model.path).suffix.lower() in CODE_SUFFIXES

    def unrecognized_error(self, allowed: bool) -> str | None:
        """Never pass silently: a named file with no schema, or nothing lintable at all (exit 2)."""
        named = [r.model.path for r in self.unrecognized if r.named]
        if named and not allowed:
            listed = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
            return (
                f"no schema found in {listed} (not a JSON Schema, PCD preset, known wrapper or decision request; "
                "pass --allow-unrecognized to list such files without failing)"
            )
        if self.errors:
            return None
        if not self.files:
            where = ", ".join(self.empty_dirs) or "the given paths"
            return f"no lintable file: no *.json, *.yaml, *.yml or code file in {where}"
        if not allowed and self.unrecognized and all(not r.model.recognized for r in self.files):
            return (
                f"no lintable file: none of the {len(self.files)} file(s) holds a schema or "
                "decision request (pass --allow-unrecognized to accept that)"
            )
        return None

    @property
    def findings(self) -> list[Finding]:
        return sort_findings([f for result in self.files for f in result.findings])

    def max_severity(self) -> str | None:
        found = [severity_rank(f.severity) for f in self.findings]
        return None if not found else ("info", "warning", "error")[max(found)]


def new_run(tokenizers: list[LoadedTokenizer], options: LintOptions | None) -> LintRun:
    """An empty run under the options' engines."""
    options = options or LintOptions()
    chosen = options.engine_selection()
    return LintRun(
        tokenizers=tokenizers,
        engine_selection=chosen,
        engines=list(chosen.profiles),
        decision_engines=list(chosen.decision_rows),
        names_decisions=chosen.names_decisions,
        default_decisions=chosen.default_decisions,
        chat_template=options.chat_template,
    )


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(
        findings,
        key=lambda f: (
            f.path,
            f.span.line,
            f.span.column,
            f.code,
            f.tokenizer or "",
            f.engine or "",
            f.pointer,
        ),
    )


# --------------------------------------------------------------------------- selection


def validate_selectors(selectors: list[str], option: str) -> None:
    for selector in selection.unknown(selectors):
        raise UsageError(f"{option}: {selection.unknown_message(selector)}")


def selected_rules(options: LintOptions) -> list[Rule]:
    return selection.selected_rules(options.select, options.ignore)


# --------------------------------------------------------------------------- run


def lint(
    paths: list[str],
    tokenizers: list[LoadedTokenizer],
    options: LintOptions | None = None,
    use_cache: bool = True,
    stdin_filename: str | None = None,
    stdin: bytes | None = None,
    max_bytes: int | None = None,
    max_depth: int | None = None,
) -> LintRun:
    """Lint files, directories, `-` (stdin) and `pkg.module:Name` objects (auditor.schema.inputs),
    within the input limits (auditor.schema.documents)."""
    from auditor.schema.inputs import expand_inputs

    skipped: list[InputFileError] = []
    inputs, empty_dirs = expand_inputs(
        paths, stdin_filename, stdin, skipped, max_bytes, options.exclude if options else ()
    )

    def models(items: Iterable[Input]) -> Iterator[Loaded]:
        for item in items:
            try:
                yield item.load(use_cache, max_bytes, max_depth), item.named
            except InputFileError as error:
                yield error, item.named

    jobs = options.jobs if options else None
    workers = 1
    if len(inputs) > 1 or jobs is not None:  # (one file never forks: no pool module to import)
        from auditor.linter.pool import pool_size

        workers = pool_size(len(inputs), jobs)
    run = None
    if workers > 1:  # many files: forked workers run the serial path on contiguous chunks
        with gc_paused():  # the parent unpickles the workers' results: no full collections
            run = _pooled(inputs, models, workers, tokenizers, options, use_cache, max_bytes, max_depth)
    if run is None:  # no pool, or a worker died (killed for memory?): one process lints them all
        run = lint_models(models(inputs), tokenizers, options)
    run.empty_dirs = empty_dirs
    run.skipped = skipped
    return run


def _pooled(
    inputs: list[Input],
    models: Callable[[Iterable[Input]], Iterator[Loaded]],
    workers: int,
    tokenizers: list[LoadedTokenizer],
    options: LintOptions | None,
    use_cache: bool,
    max_bytes: int | None,
    max_depth: int | None,
) -> LintRun | None:
    """The run linted by `workers` forked processes; None when a worker died."""
    from auditor.linter.pool import map_chunks

    # what each worker would otherwise build for itself is built once, before the fork
    for tokenizer in tokenizers:
        tokenizer.warm()
    cached = [item.cached(max_bytes, max_depth) for item in inputs] if use_cache else []
    if use_cache and 4 * sum(model is not None for model in cached) >= 3 * len(inputs):
        # (nearly) every analysis is cached: read here (fast), the workers inherit the models
        # and send back only findings and costs (sending models back costs more than linting)
        loaded = [
            (model, item.named) if model is not None else next(models([item]))
            for item, model in zip(inputs, cached)
        ]
        # a file costs about what its options do: chunks of equal option counts
        weights = [
            1.0 + (0 if isinstance(m, InputFileError) else sum(len(s.options) for s in m.sites))
            for m, _ in loaded
        ]
        for tokenizer in tokenizers:  # (each worker encodes about its share, less what the
            # encoding cache holds)
            kept = encoded_files([getattr(m, "content_key", "") for m, _ in loaded], tokenizer)
            tokenizer.expect(int(sum(w for keep, w in zip(kept, weights) if not keep)) // workers)
        parts = map_chunks(
            lambda items: _worker_findings(lint_models(items, tokenizers, options)), loaded, workers, weights
        )
        if parts is None:
            return lint_models(loaded, tokenizers, options)
        return _merged_findings(parts, loaded, tokenizers, options)
    # parsing to do: the workers parse their own files too and send the models back, in small
    # chunks, so the parent unpickles them while the workers go on
    parts = map_chunks(
        lambda items: _worker_files(lint_models(models(items), tokenizers, options)),
        inputs,
        workers,
        per_worker=4,
    )
    return None if parts is None else _merged_files(parts, tokenizers, options)


def _worker_findings(part: LintRun) -> tuple[list[tuple[list[Finding], dict]], list[Finding]]:
    """What a pool worker that was handed the models sends back: each file's findings and cost,
    in order, and the suppressed findings (the parent has the models and input errors)."""
    _pack_findings(part)
    return [(r.findings, r.costs) for r in part.files], part.suppressed


def _pack_findings(part: LintRun) -> None:
    """A worker's findings' data as JSON bytes (Finding.pack_data): pickled and unpickled as one
    string each, not as the hundreds of thousands of objects a big enum's data holds."""
    for result in part.files:
        for finding in result.findings:
            finding.pack_data()
    for finding in part.suppressed:
        finding.pack_data()


def _merged_findings(
    parts: list, loaded: list, tokenizers: list[LoadedTokenizer], options: LintOptions | None
) -> LintRun:
    """The workers' findings with the parent's models, in input order, as one run."""
    run = new_run(tokenizers, options)
    linted = iter([file for files, _ in parts for file in files])
    for model, named in loaded:
        if isinstance(model, InputFileError):
            run.errors.append(model)
            continue
        findings, costs = next(linted)
        model = visible_sites(model, options or LintOptions())
        run.files.append(FileResult(model, findings=findings, named=named, costs=costs))
    for _, suppressed in parts:
        run.suppressed.extend(suppressed)
    run.cost = run_cost(run)  # from the files' own costs (FileResult.costs)
    return run


def _worker_files(part: LintRun) -> tuple[list[FileResult], list[InputFileError], list[Finding]]:
    """What a pool worker that parsed its files sends back: each file's result with its cost
    (lint_models keeps it) and without its tokenizations (they hold the tokenizer)."""
    for result in part.files:
        result.tokens = {}
    _pack_findings(part)
    return part.files, part.errors, part.suppressed


def _merged_files(parts: list, tokenizers: list[LoadedTokenizer], options: LintOptions | None) -> LintRun:
    """The workers' parts, in input order, as one run: what lint_models gives for all of them."""
    run = new_run(tokenizers, options)
    for files, errors, suppressed in parts:
        run.files.extend(files)
        run.errors.extend(errors)
        run.suppressed.extend(suppressed)
    run.cost = run_cost(run)
    return run


def lint_models(
    models: Iterable[Loaded], tokenizers: list[LoadedTokenizer], options: LintOptions | None = None
) -> LintRun:
    """Lint already-crawled files: (FileModel or the InputFileError it raised, named) pairs."""
    options = options or LintOptions()
    rules = selected_rules(options)
    run = new_run(tokenizers, options)
    cache = RunCache()  # the run's one cache (auditor.pcd.runcache); a pool worker makes its own
    with gc_paused():
        for model, named in models:
            if isinstance(model, InputFileError):
                run.errors.append(model)
                continue
            run.files.append(FileResult(visible_sites(model, options), named=named))
        # the ids each file's lint read last time (auditor.tokenizers.encodings), into the memo
        encodings = RunEncodings([r.model.content_key for r in run.files], tokenizers, options.reading_key())
        for tokenizer in tokenizers:
            tokenize_run(run.files, tokenizer, rules, options, cache, encodings)
        suggester = SharedSuggestions()  # a field repeated across the run's files: verified once
        for index, result in enumerate(run.files):
            with encodings.file(index):
                lint_model(result.model, tokenizers, rules, options, run, result, suggester, cache)
                result.costs = result_costs(run, result)
        encodings.store()
        run.cost = run_cost(run)
    return run


def visible_sites(model: FileModel, options: LintOptions) -> FileModel:
    """The model with the sites the run lints: the choice sets read from descriptions (kind
    `prose`, FileModel.prose_sites) joined to its sites only with `prose-choices`."""
    if options.prose_choices and model.prose_sites:
        present = {id(site) for site in model.sites}
        model.sites = model.sites + [site for site in model.prose_sites if id(site) not in present]
    return model


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a run builds its arrays: the memo's millions of
    small lists made every full collection walk them all (docs/benchmarks.md has the cost); the
    run itself makes almost no cycles, and collection resumes as before when it ends.

    When it resumes, the objects made meanwhile (hundreds of thousands: models, arrays,
    findings) go straight to the oldest generation (gc.freeze, then gc.unfreeze) instead of
    being walked by the first young collection: they are still collected, by the next full
    collection, as any long-lived object is. Where the process froze objects itself (a pre-fork server), nothing is unfrozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


# --------------------------------------------------------------------------- bulk tokenization


def tokenize_run(
    results: list[FileResult],
    tokenizer: LoadedTokenizer,
    rules: list[Rule],
    options: LintOptions,
    cache: RunCache,
    encodings: RunEncodings | None = None,
) -> None:
    """Tokenize once, in bulk: every distinct text the run's rules, engine profiles, the cost
    model and the verified suggestions will read is encoded in one native batch per step, and
    every SiteTokens is built from the memo. Rules then read precomputed arrays; a text missed
    here is encoded on demand (slower, never different). `encodings`: the encoding cache over
    these files: what each file asks for is recorded as its own, and the texts of a file whose
    entry holds all it reads (RunEncodings.complete) are not gathered again."""
    scored = options.names_decisions()  # (a decision request's questions: only if names are scored)
    per_file = [[s for s in r.model.sites if s.name_scored(scored)] for r in results]
    if not any(per_file):
        return
    if any(r.model.suppressions for r in results):  # rules a suppression names run too
        rules = rules + [r for r in load_rules().values() if r not in rules]
    site_rules = [r for r in rules if r.scope == "site"]
    # the scoring text groups (auditor.pcd.scoring.TEXT_GROUPS) the rules declare they read
    # beyond "core"; the cost model reads "cost" in every run
    groups = {"core", "cost"}.union(*(r.reads for r in site_rules))
    engines = options.engine_profiles()
    limits = []
    for limited in (r for r in site_rules if r.option_limit):  # a capped rule's windows of a
        # field past its cap score their own remainders
        configured = {**limited.options, **options.rule_options.get(limited.code, {})}
        limits.append(int(configured[limited.option_limit]))

    def scoped(index: int) -> AbstractContextManager[None]:  # what file `index` reads meanwhile: its own
        return encodings.file(index) if encodings is not None else nullcontext()

    # the files whose texts are not all in the memo already (from the encoding cache): those
    # are gathered and encoded in batches
    gathered = [
        encodings is None or not encodings.complete(index, tokenizer) for index in range(len(results))
    ]

    # what SiteTokens reads, in one batch; then what the rest reads, in another
    texts: list[str] = []
    spans: list[str] = []
    for index, sites in enumerate(per_file):
        if not gathered[index]:
            continue
        with scoped(index):
            windows = [w for n in limits for s in sites if len(s.options) > n for w in cache.windows(s, n)]
            for site in sites + windows:
                more, more_spans = cache.texts(site, ("core",), tokenizer)
                tokenizer.asks(more + more_spans)
                texts += more
                spans += more_spans
    tokenizer.prefill(texts + spans, spans)
    made_per_file: list[list[SiteTokens]] = []
    texts, spans = [], []
    for index, (r, sites) in enumerate(zip(results, per_file)):
        with scoped(index):
            made = [r.site_tokens(s, tokenizer, cache) for s in sites]
            made_per_file.append(made)
            if not gathered[index]:
                continue
            more = [t for e in engines for s in sites for t in e.plan_texts(s, tokenizer, cache)]
            tokenizer.asks(more)
            texts += more
            for tokens in made:  # less the field texts SiteTokens joins from the memo (plain)
                more, more_spans = cache.texts(tokens.site, groups - {"core"}, tokenizer, tokens.plain)
                tokenizer.asks(more + more_spans)
                texts += more
                spans += more_spans
    tokenizer.prefill(texts + spans, spans)
    if any(r.letter_slots for r in site_rules):
        texts = []
        for index, made in enumerate(made_per_file):
            if not gathered[index]:
                continue
            with scoped(index):
                names = dict.fromkeys(t.site.name for t in made if t.collisions or t.multi_token)
                more = [text for name in names for text in letter_probe_texts(name, tokenizer=tokenizer)]
                tokenizer.asks(more)
                texts += more
        tokenizer.prefill(texts)
    if options.suggestions and any(r.suggests for r in site_rules):
        canonical = any("canonical" in r.reads for r in site_rules)
        needing = [t for made, gather in zip(made_per_file, gathered) if gather for t in made]
        owner = {id(t): index for index, made in enumerate(made_per_file) for t in made}
        prefetch_suggestions(
            needing, tokenizer, engines, ("core",), canonical, cache, lambda t: scoped(owner[id(t)])
        )


def lint_model(
    model: FileModel,
    tokenizers: list[LoadedTokenizer],
    rules: list[Rule],
    options: LintOptions,
    run: LintRun | None = None,
    result: FileResult | None = None,
    suggester: Callable[..., list[dict]] | None = None,
    cache: RunCache | None = None,
) -> FileResult:
    """Lint one crawled file; `result` may hold the tokenizations tokenize_run prepared;
    `suggester` (default: a new SharedSuggestions) finds the verified suggestions; `cache`: the
    run's RunCache (default: one for this file)."""
    suggester = suggester or SharedSuggestions()
    cache = cache if cache is not None else RunCache()
    if result is None:
        result = FileResult(model)
        for tokenizer in tokenizers:
            cache.prefetch(model.sites, tokenizer)
    judges = [r for r in rules if r.scope == "suppressions"]
    # A suppression is judged by whether its rule would have fired, selected or not: rules an
    # entry names run too (only when something judges suppressions), their findings unreported.
    extra = []
    if judges:
        named = {
            getattr(selection.find_rule(e), "code", None) for es in model.suppressions.values() for e in es
        }
        chosen = {r.code for r in rules}
        extra = [
            r
            for r in load_rules().values()
            if r.code in named and r.code not in chosen and r.scope != "suppressions"
        ]
    checked = rules + extra
    chosen_codes = {r.code for r in rules}
    site_rules = [r for r in checked if r.scope == "site"]
    file_rules = [r for r in checked if r.scope == "file"]
    raw: list[tuple[Rule, Finding]] = []
    engines = options.engine_profiles()
    # A decision request's questions: the option-name rules only under an engine named that
    # scores names; the decision-request rules (applies_to "labels") under each decision engine
    namers = options.named_profiles() if options.names_decisions() else []
    decisions = any(site.is_decision for site in model.sites)
    named_sites = [s for s in model.sites if s.name_scored(bool(namers))] if decisions else None
    # an evaluation config's label sets: only the harness rules, under the harness's engines
    scorings = {id(site): label_set_scoring(site) for site in model.sites}
    if any(scorings.values()):
        named_sites = [s for s in named_sites or model.sites if scorings[id(s)] is None]
    for rule in file_rules:
        ctx = _context(rule, options, model, None, None, sites=named_sites, cache=cache)
        raw.extend((rule, f) for f in _checked(rule, model, ctx))
    # one context per (rule, engine) for the file, pointed at each site and tokenizer in turn (a
    # rule's findings are made within its check; its options are read, never changed)
    name_rules = [rule for rule in site_rules if rule.applies_to == "option-names"]
    checks = [
        (
            rule,
            _context(
                rule, options, model, None, None, engine, suggester, _settings(rule, options), cache=cache
            ),
        )
        for rule in name_rules
        for engine in (engines if rule.per_engine else engines[:1])
    ]
    question_checks: list[tuple[Rule, RuleContext]] = []
    if decisions:
        question_checks = [
            (
                rule,
                _context(
                    rule, options, model, None, None, engine, suggester, _settings(rule, options), cache=cache
                ),
            )
            for rule in name_rules
            for engine in (namers if rule.per_engine else namers[:1])
        ]
        rows = options.decision_rows()
        question_checks += [
            (
                rule,
                _context(
                    rule,
                    options,
                    model,
                    None,
                    None,
                    None,
                    suggester,
                    _settings(rule, options),
                    row,
                    cache=cache,
                ),
            )
            for rule in site_rules
            if rule.applies_to == "labels"
            for row in (rows if rule.per_engine else rows[:1])
        ]
    harness_checks: dict[tuple[str, ...], list[tuple[Rule, RuleContext]]] = {}
    for names in {scoring.engines for scoring in scorings.values() if scoring is not None}:
        harness_checks[names] = [
            (
                rule,
                _context(
                    rule, options, model, None, None, engine, suggester, _settings(rule, options), cache=cache
                ),
            )
            for rule in name_rules
            if rule.harness
            for engine in map(get_engine, names)
        ]
    for index, tokenizer in enumerate(tokenizers):
        for site in model.sites:
            harness = scorings[id(site)]
            pairs = (
                harness_checks[harness.engines]
                if harness is not None
                else question_checks
                if site.is_decision
                else checks
            )
            scored = site.name_scored(bool(namers))
            tokens = result.site_tokens(site, tokenizer, cache) if scored else None
            for rule, ctx in pairs:
                if site.runtime and set(site.runtime) & set(rule.needs):
                    continue  # (a part it reads was built at run time: the file's note says so)
                if rule.applies_to == "labels":  # (its subject is the question itself)
                    if not rule.needs_tokenizer and index:
                        continue  # (once per question, naming no tokenizer)
                    ctx.site, ctx.tokenizer = site, tokenizer if rule.needs_tokenizer else None
                    found = _checked(rule, site, ctx)
                elif scored:
                    ctx.site, ctx.tokenizer = site, tokenizer
                    found = _checked(rule, tokens, ctx)
                else:
                    continue
                if found:
                    raw.extend((rule, f) for f in found)
    used: set[tuple[str, str]] = set()
    for rule, finding in raw:
        silenced_by = suppressions.suppressing_entries(model, finding, rule)
        used.update(silenced_by)
        if rule.code not in chosen_codes and finding.code != internal_error_rule().code:
            continue
        if silenced_by or any(p.matches(finding) for p in options.per_file_ignores):
            if run is not None:
                run.suppressed.append(finding)
            continue
        result.findings.append(finding)
    if any(rule.folds_into for rule in rules):
        result.findings = _folded(result.findings, {r.code: r.folds_into for r in rules if r.folds_into})
    if judges and model.suppressions:
        subject = suppressions.usage(model, used)
        for rule in judges:
            ctx = _context(rule, options, model, None, None, cache=cache)
            for finding in rule.check(subject, ctx):
                if suppressions.suppressing_entries(model, finding, rule) or any(
                    p.matches(finding) for p in options.per_file_ignores
                ):
                    if run is not None:
                        run.suppressed.append(finding)
                    continue
                result.findings.append(finding)
    result.findings = sort_findings(result.findings)
    if options.details:  # the JSON writer's float check, made here (a pool worker: in parallel)
        for finding in result.findings:
            finding.plain_floats = not writes_apart(finding.data)
    return result


def _folded(findings: list[Finding], folds: dict[str, str]) -> list[Finding]:
    """The findings with each one that only restates a reported finding (Rule.folds_into) moved
    into that finding's data under `folded`."""
    hosts: dict[tuple, list[Finding]] = {}
    for finding in findings:
        if finding.code in folds.values():
            hosts.setdefault((finding.code, finding.site_pointer, finding.tokenizer), []).append(finding)
    kept = []
    for finding in findings:
        into = folds.get(finding.code)
        found = hosts.get((into, finding.site_pointer, finding.tokenizer)) if into else None
        if not found or finding.data.get("restates") is not True:
            kept.append(finding)
            continue
        for host in found:
            host.data.setdefault("folded", []).append(
                {
                    "code": finding.code,
                    "name": finding.name,
                    "message": finding.message,
                    "data": {k: v for k, v in finding.data.items() if k != "suggestions"},
                }
            )
    return kept


def _checked(rule: Rule, subject: Any, ctx: RuleContext) -> list[Finding]:
    """The rule's findings; a rule that raises yields one PCD999 finding instead (the run goes
    on). PCDLINT_DEBUG=1 lets the exception through."""
    try:
        return list(rule.check(subject, ctx))
    except ChatTemplateBudgetError as exc:  # bad input, not a bug: the run ends, exit 2
        origin = getattr(ctx.chat_template, "origin", None)
        raise ChatTemplateBudgetError(f"{origin}: {exc}" if origin else str(exc)) from None
    except Exception as exc:
        if os.environ.get("PCDLINT_DEBUG"):
            raise
        internal_rule = internal_error_rule()
        internal = RuleContext(internal_rule, {}, ctx.file, ctx.site, ctx.tokenizer, internal_rule.severity)
        message = f"{rule.code} {rule.name} raised {type(exc).__name__}: {exc}"
        return [
            internal.finding(
                message, data={"rule": rule.code, "exception": type(exc).__name__, "detail": str(exc)}
            )
        ]


def _settings(rule: Rule, options: LintOptions) -> tuple[dict, str]:
    """(the rule's options with the run's settings over its defaults, its severity)."""
    return (
        {**rule.options, **options.rule_options.get(rule.code, {})},
        options.severities.get(rule.code, rule.severity),
    )


def _context(
    rule: Rule,
    options: LintOptions,
    model: FileModel,
    site: Site | None,
    tokenizer: LoadedTokenizer | None,
    engine: EngineProfile | None = None,
    suggester: Callable[..., list[dict]] | None = None,
    settings: tuple[dict, str] | None = None,
    engine_row: EngineRow | None = None,
    sites: list[Site] | None = None,
    cache: RunCache | None = None,
) -> RuleContext:
    """The rule's context; `settings`: its _settings, when the caller made them once for a file;
    `engine_row`: the decision engine of a decision-request rule; `sites`: the sites a file rule
    checks (default: all of the file's); `cache`: the run's RunCache."""
    merged, severity = settings or _settings(rule, options)
    return RuleContext(
        rule,
        merged,
        model,
        site,
        tokenizer,
        severity,
        options.suggestions,
        suggester or verified_suggestions,
        engine,
        options.details,
        engine_row,
        sites,
        chat_template=options.chat_template,
        cache=cache,
    )
