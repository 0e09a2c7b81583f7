"""What the language server and the MCP server share: the settings of each document (the
nearest config, read by the CLI's own reader, read again when it changes), a lint of a buffer's
text through check's own dispatch, and the fixes offered on a finding (a verified renaming,
checked by linting the edited text; an `x-pcdlint-ignore` for the field).

Nothing here imports pygls or mcp; positions are pcdlint's own (1-based lines, columns counting
code points) until a server converts them (TextLines).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from auditor.errors import ConfigError, InputFileError, UsageError
from auditor.linter.context import Finding
from auditor.linter.engine import LintOptions, LintRun, lint
from auditor.linter.suggest import choose, fix_entries, fixed_codes, option_edits
from auditor.schema.documents import (
    CODE_SUFFIXES,
    LINTABLE_SUFFIXES,
    YAML_SUFFIXES,
    escape_token,
    parse_document,
    resolve_pointer,
)
from auditor.schema.model import FileModel, Site
from auditor.schema.sites import SUPPRESS_KEY
from auditor.tokenizers.loader import LoadedTokenizer, load_tokenizers


@dataclass(frozen=True)
class ProjectSettings:
    """What the configuration says a lint is (built by the CLI's config reader)."""

    config_path: Path | None  # the file read, or None (defaults only)
    lint_options: LintOptions  # rules, severities, per-file ignores, engines
    tokenizers: tuple[str, ...]
    max_bytes: int
    max_depth: int


class SettingsReader(Protocol):
    """The CLI's configuration reader, handed to this layer (auditor/cli/editor.py)."""

    def locate(self, directory: Path, root: Path) -> Path | None:
        """The config file nearest to `directory`, not above `root` (ConfigError if unreadable)."""
        ...

    def load(self, directory: Path, root: Path) -> ProjectSettings:
        """The settings of the config nearest to `directory` (ConfigError if it is bad)."""
        ...


def under(path: Path, roots: Iterable[Path]) -> Path | None:
    """The root `path` lies under (symlinks resolved), or None."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return None
    return next((root for root in roots if real == root or real.is_relative_to(root)), None)


def _stamp(path: Path | None) -> tuple | None:
    if path is None:
        return None
    try:
        info = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ino)


@dataclass
class DocumentLint:
    """One lint of a document's text: the run (one file, or its input error), under `settings`."""

    path: Path
    text: str
    run: LintRun
    settings: ProjectSettings
    tokenizers: list[LoadedTokenizer]
    # what lint_text was asked besides the settings (a re-lint of an edit asks the same)
    engines: list[str] | None = None
    specs: list[str] | None = None
    display: str | None = None
    suggestions: bool = False  # whether findings carry their verified suggestions

    @property
    def model(self) -> FileModel | None:
        return self.run.files[0].model if self.run.files else None

    @property
    def error(self) -> InputFileError | None:
        return self.run.errors[0] if self.run.errors else None

    @property
    def findings(self) -> list[Finding]:
        """The findings, none for a file that holds no schema (an editor is not told about
        package.json)."""
        model = self.model
        return self.run.findings if model is not None and model.recognized else []

    @property
    def yaml(self) -> bool:
        return self.path.suffix.lower() in YAML_SUFFIXES

    def site(self, pointer: str) -> Site | None:
        model = self.model
        return next((s for s in model.sites if s.pointer == pointer), None) if model else None


class Workspace:
    """Lints documents under `roots` with the settings of their nearest config."""

    def __init__(self, roots: Iterable[Path], reader: SettingsReader) -> None:
        self.roots = [Path(root).resolve() for root in roots]
        self.reader = reader
        # config file (None: none found) → (its stamp, the settings read from it)
        self._settings: dict[tuple[Path | None, Path], tuple[tuple | None, ProjectSettings]] = {}
        self._tokenizers: dict[tuple[str, ...], list[LoadedTokenizer]] = {}

    def root_of(self, path: Path) -> Path | None:
        return under(path, self.roots)

    def lintable(self, path: Path) -> bool:
        """A document `check` reads by its name (the kinds its dispatch knows), under a root."""
        suffix = path.suffix.lower()
        return (suffix in LINTABLE_SUFFIXES or suffix in CODE_SUFFIXES) and self.root_of(path) is not None

    def forget_settings(self) -> None:
        """Read every config again at the next lint (a watched config file changed)."""
        self._settings.clear()

    def settings_for(self, path: Path) -> ProjectSettings:
        """The settings of the config nearest to `path` (not above its root), read again when the
        file found, or its size, time or inode, changed. A bad config raises ConfigError."""
        root = self.root_of(path)
        if root is None:
            raise UsageError(f"{path}: outside the workspace roots")
        directory = path.resolve() if path.is_dir() else path.resolve().parent
        found = self.reader.locate(directory, root)
        key = (found, root if found is None else found.parent)
        stamp = _stamp(found)
        cached = self._settings.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        settings = self.reader.load(directory, root)
        self._settings[key] = (stamp, settings)
        return settings

    def tokenizers_for(
        self, settings: ProjectSettings, specs: Iterable[str] | None = None
    ) -> list[LoadedTokenizer]:
        """The tokenizers of `specs` (default: the config's), loaded once per process and never
        downloaded; a path is taken relative to the config's folder and must lie under a root."""
        base = (
            settings.config_path.parent
            if settings.config_path
            else (self.roots[0] if self.roots else Path.cwd())
        )
        resolved = []
        for spec in specs if specs is not None else settings.tokenizers:
            candidate = Path(os.path.expanduser(spec))
            candidate = candidate if candidate.is_absolute() else base / candidate
            try:
                exists = candidate.exists()
            except (OSError, ValueError):
                exists = False
            if exists:
                if under(candidate, self.roots) is None:
                    raise UsageError(f"tokenizer {spec}: outside the workspace roots (not read)")
                spec = str(candidate.resolve())
            resolved.append(spec)
        key = tuple(resolved)
        if key not in self._tokenizers:
            self._tokenizers[key] = load_tokenizers(list(key), allow_download=False)
        return self._tokenizers[key]

    def _options(
        self, settings: ProjectSettings, engines: list[str] | None, suggestions: bool = True
    ) -> LintOptions:
        """The settings' lint options with finding data kept (hover, the JSON report) and,
        where asked, the verified suggestions; never a pool of forked workers (this process is
        a threaded server)."""
        options = dataclasses.replace(settings.lint_options, suggestions=suggestions, details=True, jobs=1)
        if engines is not None:
            options.engines = list(engines)
        options.engine_profiles()  # an unknown engine is a UsageError before any work
        return options

    def lint_path(
        self, path: Path, engines: list[str] | None = None, tokenizers: list[str] | None = None
    ) -> LintRun:
        """`pcdlint check PATH` (a file or a folder under a root) with the settings nearest it."""
        if self.root_of(path) is None or not path.exists():
            raise UsageError(f"{path}: no such file or folder under the roots")
        settings = self.settings_for(path)
        options = self._options(settings, engines)
        loaded = self.tokenizers_for(settings, tokenizers)
        return lint([str(path)], loaded, options, max_bytes=settings.max_bytes, max_depth=settings.max_depth)

    def lint_text(
        self,
        path: Path,
        text: str,
        settings: ProjectSettings | None = None,
        engines: list[str] | None = None,
        tokenizers: list[str] | None = None,
        display: str | None = None,
        suggestions: bool = False,
    ) -> DocumentLint:
        """Lint `text` as the document `path` holds it: `pcdlint check --stdin-filename PATH -`
        (the same dispatch by name, the same limits), finding data kept for hover, and the
        verified suggestions where asked (they cost about a fifth of an edit's lint, so the
        language server asks for them only when a code action is: with_suggestions).
        `engines` / `tokenizers` replace the configured ones."""
        settings = settings or self.settings_for(path)
        options = self._options(settings, engines, suggestions)
        loaded = self.tokenizers_for(settings, tokenizers)
        run = lint(
            ["-"],
            loaded,
            options,
            stdin=text.encode("utf-8", "surrogatepass"),
            stdin_filename=display or str(path),
            max_bytes=settings.max_bytes,
            max_depth=settings.max_depth,
        )
        return DocumentLint(path, text, run, settings, loaded, engines, tokenizers, display, suggestions)

    def relint(self, done: DocumentLint, text: str, suggestions: bool = False) -> DocumentLint:
        """`text` (the document edited) linted as `done` was."""
        return self.lint_text(
            done.path, text, done.settings, done.engines, done.specs, done.display, suggestions
        )

    def with_suggestions(self, done: DocumentLint) -> DocumentLint:
        """`done`, or the same text linted again with its verified suggestions."""
        return done if done.suggestions else self.relint(done, done.text, suggestions=True)


# --------------------------------------------------------------------------- fixes


@dataclass
class TextEdit:
    """Replace `start`..`end` (offsets into the document's text) with `new_text`; `span` is the
    same region in pcdlint's positions (1-based lines, code-point columns, end exclusive)."""

    start: int
    end: int
    new_text: str
    span: tuple[int, int, int, int]

    def to_dict(self) -> dict:
        line, column, end_line, end_column = self.span
        return {
            "line": line,
            "column": column,
            "end_line": end_line,
            "end_column": end_column,
            "new_text": self.new_text,
        }


@dataclass
class Fix:
    """A fix of one field: its edits, what it does, and the findings it was checked to clear."""

    title: str
    pointer: str
    edits: list[TextEdit]
    clears: list[str] = field(default_factory=list)  # codes no longer found at the field after it
    suggestion: dict | None = None


def apply(text: str, edits: list[TextEdit]) -> str:
    out, cursor = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        out.append(text[cursor : edit.start])
        out.append(edit.new_text)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)


def _still_found(
    done: DocumentLint, pointer: str, codes: Iterable[str], at_least: str = "warning"
) -> list[str]:
    from auditor.linter.registry import severity_rank

    wanted = set(codes)
    return sorted(
        {
            f.code
            for f in done.run.findings
            if f.site_pointer == pointer
            and f.code in wanted
            and severity_rank(f.severity) >= severity_rank(at_least)
        }
    )


def verified_fix(workspace: Workspace, done: DocumentLint, pointer: str) -> Fix | None:
    """The best-ranked verified renaming of the field at `pointer` (common to every tokenizer,
    as `suggest --write` chooses), as text edits, offered only when the whole edited text,
    linted again with the same settings, no longer has the warnings and errors it fixes at that
    field. Letter slots are not offered here (their legend is a file: `pcdlint suggest --write`)."""
    done = workspace.with_suggestions(done)
    site = done.site(pointer)
    if site is None or done.model is None:
        return None
    entries = [e for e in fix_entries(done.run) if e["pointer"] == pointer]
    if not entries:
        return None
    for entry in entries:
        entry["suggestions"] = [s for s in entry["suggestions"] if s.get("strategy") != "letter-slots"]
    chosen = choose(entries).get(pointer)
    if chosen is None:
        return None
    edits = [
        TextEdit(start, end, value, tuple(span))
        for (start, end), span, value in option_edits(
            done.text, done.yaml, [(site.option_spans, chosen["options"])]
        )
    ]
    if not edits:
        return None
    codes = sorted({code for e in entries for code in e["codes"]})
    after = workspace.relint(done, apply(done.text, edits))
    if after.error is not None or after.site(pointer) is None or _still_found(after, pointer, fixed_codes()):
        return None
    renamed = [m for m in chosen["mapping"] if m["from"] != m["to"]]
    pairs = ", ".join(f"{m['from']} → {m['to']}" for m in renamed[:4])
    more = f", … ({len(renamed)} options)" if len(renamed) > 4 else ""
    return Fix(
        f"pcdlint: rename {site.field}'s options ({chosen['strategy']}: {pairs}{more}); verified",
        pointer,
        edits,
        codes,
        chosen,
    )


_LINE_START = re.compile(r"[ \t]*")


def suppression_fix(workspace: Workspace, done: DocumentLint, finding: Finding) -> Fix | None:
    """An `x-pcdlint-ignore` naming the finding's rule on its field's schema node (added to the
    list there, or a new key before the node's first), offered when the edited text, linted
    again, no longer has the finding there. None where the field's node is not a JSON/YAML
    object of this document (a decision request's question: per-file-ignores in the config)."""
    site = done.site(finding.site_pointer)
    if site is None or site.is_decision or done.path.suffix.lower() not in LINTABLE_SUFFIXES:
        return None
    pointer = site.pointer
    try:
        document = parse_document(
            done.text.encode("utf-8", "surrogatepass"), done.path.suffix, str(done.path)
        )
        node = resolve_pointer(document.data, pointer)
    except (InputFileError, KeyError, IndexError, TypeError, ValueError):
        return None
    if not isinstance(node, dict) or not node:
        return None
    starts = [0] + [m.end() for m in re.finditer("\r\n|\r|\n" if done.yaml else "\n", done.text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    existing = node.get(SUPPRESS_KEY)
    if existing is not None:
        names = [existing] if isinstance(existing, str) else existing
        if not isinstance(names, list) or finding.code in names:
            return None
        span = document.span(f"{pointer}/{escape_token(SUPPRESS_KEY)}")
        new = json.dumps([*names, finding.code], ensure_ascii=False)
        edit = TextEdit(
            offset(span.line, span.column),
            offset(span.end_line, span.end_column),
            new,
            (span.line, span.column, span.end_line, span.end_column),
        )
    else:
        first = document.key_span(f"{pointer}/{escape_token(next(iter(node)))}")
        opening = document.span(pointer)
        at = offset(first.line, first.column)
        value = json.dumps([finding.code])
        if done.text[offset(opening.line, opening.column) : offset(opening.line, opening.column) + 1] == "{":
            # JSON, or a YAML flow mapping: a member before the first, on its line or its own
            key = SUPPRESS_KEY if done.yaml else json.dumps(SUPPRESS_KEY)
            text = f"{key}: {value},"
            before = done.text[starts[first.line - 1] : at]
            separator = " " if first.line == opening.line or before.strip() else "\n" + before
        else:  # a YAML block mapping: a key line before the first, at its column
            text = f"{SUPPRESS_KEY}: {value}"
            separator = "\n" + " " * (first.column - 1)
        edit = TextEdit(at, at, text + separator, (first.line, first.column, first.line, first.column))
    after = workspace.relint(done, apply(done.text, [edit]))
    if after.error is not None or _still_found(after, pointer, [finding.code], at_least="info"):
        return None
    return Fix(
        f"pcdlint: ignore {finding.code} on {site.field} (x-pcdlint-ignore)", pointer, [edit], [finding.code]
    )


# --------------------------------------------------------------------------- positions


class TextLines:
    """A document's lines as pcdlint counts them (JSON: `\\n`; YAML and the rest: `\\r\\n`,
    `\\r`, `\\n`) and the conversion of its columns (code points, 1-based) to a client's
    (0-based, in `encoding`'s code units: "utf-16", the LSP default, "utf-32" or "utf-8")."""

    def __init__(self, text: str, yaml: bool, encoding: str = "utf-16") -> None:
        ends = "\n" if not yaml else "\r\n|\r|\n"
        self.lines = re.split(f"(?:{ends})", text)
        self.encoding = encoding

    def _units(self, text: str) -> int:
        if self.encoding == "utf-32":
            return len(text)
        if self.encoding == "utf-8":
            return len(text.encode("utf-8", "surrogatepass"))
        return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)

    def to_client(self, line: int, column: int) -> tuple[int, int]:
        """(0-based line, code units) of pcdlint's 1-based (line, code-point column)."""
        index = max(0, min(line - 1, len(self.lines) - 1))
        return index, self._units(self.lines[index][: max(0, column - 1)])

    def from_client(self, line: int, units: int) -> tuple[int, int]:
        """pcdlint's (line, column) of a client's 0-based (line, code units)."""
        index = max(0, min(line, len(self.lines) - 1))
        text = self.lines[index]
        count = column = 0
        for char in text:
            if count >= units:
                break
            count += self._units(char)
            column += 1
        return index + 1, column + 1


def finding_summary(finding: Finding, limit: int = 4000) -> str:
    """The finding and its data as Markdown (hover): the buckets, colliding options, rendered
    labels, whatever the rule keeps; data past `limit` characters is cut, and says so."""
    from auditor.reporting.escape import strict_json

    where = ", ".join(x for x in (finding.tokenizer, finding.engine) if x)
    head = f"**{finding.code} {finding.name}** ({finding.severity}{'; ' + where if where else ''})"
    data: Any = {k: v for k, v in finding.data.items() if k != "suggestions"}
    body = json.dumps(strict_json(data), indent=1, ensure_ascii=False, default=str)
    if len(body) > limit:
        body = body[:limit] + f"\n… ({len(body) - limit:,} more characters: `pcdlint check -f json`)"
    return f"{head}\n\n{finding.message}\n\n```json\n{body}\n```"


def config_problem(error: ConfigError) -> tuple[Path, int, str]:
    """(config file, 1-based line, message) of a config the reader refused; the line of a TOML
    error where the message names it, else 1."""
    found = re.search(r"at line (\d+)", error.message)
    return Path(error.path), int(found.group(1)) if found else 1, error.message
