"""The Python API's linting half: what `auditor.lint(source, ...)` lints, and its result.

    import auditor
    result = auditor.lint(Ticket)            # a Pydantic model, TypeAdapter, Enum, Literal ...
    result = auditor.lint("schemas/")        # a path (file or directory), or "pkg.module:Name"
    result = auditor.lint({"type": ...})     # a dict, or JSON / YAML text
    assert result.ok, result.summary()

It runs the same engine as `pcdlint check` (no config file is read: pass `select`/`ignore`).
Rendering (`to_json()`, the JSON v1 document, and `summary()`, the text report) belongs to the
reporting layer above this one: the public `auditor.lint` (auditor/__init__.py) hands those
renderers in, so this module never imports reporting.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.errors import InputFileError, UsageError
from auditor.linter.engine import LintOptions, LintRun, lint_models, validate_selectors
from auditor.linter.engine import lint as lint_paths
from auditor.paths import path_problem, shorten
from auditor.schema.code_requests import read_document
from auditor.schema.documents import run_deep
from auditor.schema.evalconfigs import analyse_with_label_sets
from auditor.schema.python_source import is_python_ref, load_python_object
from auditor.schema.sites import FileModel, analyse
from auditor.tokenizers import load_tokenizer

_tokenizers: dict[str, object] = {}  # loaded once per process: a test suite calls lint() often


@dataclass
class LintResult:
    """What one `auditor.lint(...)` call found."""

    run: LintRun = field(repr=False)  # the engine's LintRun (what the formatters render)
    render: Callable[..., str] | None = field(default=None, repr=False)  # reporting.render
    run_to_dict: Callable[[LintRun], dict] | None = field(default=None, repr=False)

    @property
    def findings(self) -> list:
        return self.run.findings

    @property
    def errors(self) -> list[str]:
        """Inputs that could not be linted: unreadable or malformed, a named file with no schema
        in it, or nothing lintable at all (what makes `pcdlint check` exit 2)."""
        out = [str(e) for e in self.run.errors]
        problem = self.run.unrecognized_error(allowed=False)
        return [*out, problem] if problem else out

    @property
    def ok(self) -> bool:
        """No errors and no finding of severity error (what `pcdlint check` exits 0 on)."""
        return not self.errors and not any(f.severity == "error" for f in self.findings)

    def by_code(self) -> dict[str, list]:
        out: dict[str, list] = {}
        for finding in self.findings:
            out.setdefault(finding.code, []).append(finding)
        return dict(sorted(out.items()))

    def to_dict(self) -> dict:
        """The JSON v1 document as a dict."""
        if self.run_to_dict is None:
            raise RuntimeError("LintResult has no JSON renderer: use auditor.lint(...)")
        return self.run_to_dict(self.run)

    def to_json(self) -> str:
        """The JSON v1 document, as `pcdlint check --format json` writes it (the same text: a
        non-finite float as a string, not as `NaN`, which is not JSON)."""
        if self.render is not None:
            return self.render("json", self.run)
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def summary(self) -> str:
        """The findings and summary as `pcdlint check` prints them (for an assert message)."""
        if self.render is None:
            raise RuntimeError("LintResult has no text renderer: use auditor.lint(...)")
        text = self.render("text", self.run)
        return "\n".join([*self.errors, text]) if self.errors else text

    def __bool__(self) -> bool:
        return self.ok


def lint_source(
    source: Any,
    *,
    tokenizers: Iterable[str] = ("qwen2.5",),
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    engine: str | Iterable[str] | None = None,
) -> LintRun:
    """Lint one source: a path, `"pkg.module:Name"`, a dict/list, JSON or YAML text, a Pydantic
    model class, a TypeAdapter, an Enum class, a Literal alias, a TypedDict or a dataclass."""
    options = LintOptions(suggestions=False)
    if select is not None:
        options.select = _as_list(select)
        validate_selectors(options.select, "select")
    if ignore is not None:
        options.ignore = _as_list(ignore)
        validate_selectors(options.ignore, "ignore")
    if engine is not None:  # one profile name, or several (like --engine)
        options.engines = [engine] if isinstance(engine, str) else _as_list(engine)
        try:
            options.engine_profiles()
        except UsageError as error:
            raise UsageError(str(error).replace("--engine", "engine=", 1)) from None
    loaded = [_tokenizer(spec) for spec in _as_list(tokenizers)]
    if isinstance(source, Path) or (isinstance(source, str) and _names_input(source)):
        return lint_paths([str(source)], loaded, options)
    model: FileModel | InputFileError
    try:
        model = _model_for(source)
    except InputFileError as error:
        model = error
    return lint_models([(model, True)], loaded, options)


def _text_suffix(text: str, display: str) -> str:
    head = text.lstrip()[:1]
    suffix = ".json" if head in ("{", "[") else ".yaml"
    if suffix == ".yaml" and ":" not in text and "-" not in text:
        raise InputFileError(display, "no such file, and not JSON or YAML text")
    return suffix


def _analysed(raw: bytes, suffix: str, display: str) -> FileModel:
    """Parse and crawl text on the deep stack the CLI uses (auditor.schema.documents.run_deep)."""
    try:
        return run_deep(lambda: analyse_with_label_sets(read_document(raw, suffix, display)))
    except RecursionError:
        raise InputFileError(display, "nested too deeply to analyse (config key max-depth)") from None


def _as_list(values) -> list[str]:
    return [values] if isinstance(values, str) else list(values)


def _tokenizer(spec: str):
    if spec not in _tokenizers:
        _tokenizers[spec] = load_tokenizer(spec)
    return _tokenizers[spec]


def _names_input(text: str) -> bool:
    """A path that exists, or `pkg.module:Name` — not JSON or YAML text (a one-line YAML
    string longer than a path can be, or holding a NUL, is text)."""
    if "\n" in text or text.lstrip().startswith(("{", "[")):
        return False
    if path_problem(text) is None:
        try:
            if Path(text).exists():
                return True
        except (OSError, ValueError):
            pass
    return is_python_ref(text)


def _model_for(source) -> FileModel:
    if isinstance(source, (dict, list)):
        try:
            text = json.dumps(source, indent=2, ensure_ascii=False) + "\n"
        except (TypeError, ValueError, RecursionError) as exc:
            raise InputFileError("<dict>", f"not JSON data ({shorten(str(exc))})") from None
        return _analysed(text.encode("utf-8", "surrogatepass"), ".json", "<dict>")
    if isinstance(source, bytes):
        try:
            source.decode("utf-8-sig")
        except UnicodeDecodeError as exc:  # reported in result.errors, like a file's
            raise InputFileError("<bytes>", f"not UTF-8 text (byte {exc.start})") from None
        return _analysed(source, _text_suffix(source.decode("utf-8-sig"), "<bytes>"), "<bytes>")
    if isinstance(source, str):
        return _analysed(
            source.encode("utf-8", "surrogatepass"), _text_suffix(source, shorten(source, 60)), "<string>"
        )
    name = getattr(source, "__name__", None) or type(source).__name__
    return analyse(load_python_object(source, None, name))
