"""What the command line names, turned into things to crawl: files, directories, stdin, Python.

- a file: read as JSON or YAML (by suffix);
- a directory: its *.json, *.yaml, *.yml files and its code files (*.py, *.js, *.mjs, *.cjs,
  *.ts, *.tsx, ...), recursively, hidden folders and `DEFAULT_EXCLUDES` (node_modules, .venv,
  build, ...) and the config key `exclude`'s globs passed over. A code file is read statically
  for decision requests (auditor.schema.code_requests), never imported or run; one without
  `questions` or a decision API's name in its text is not even parsed (`prefilter`), and one
  holding no request is counted, not listed (a repository has many);
- `-`: standard input, named by `--stdin-filename` in messages and config matching;
- `pkg.module:Name` or `path/to/any-file.py:Name`: a Pydantic model, Enum, Literal alias,
  TypedDict or dataclass (auditor.schema.python_source), when no file of that name exists; a
  module that cannot be imported is read from its source with `ast` (python_static).

Every input remembers whether it was named on the command line: a named file with no schema in
it is an error (unless allowed), one met in a directory walk is only listed.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import InputFileError, UsageError
from auditor.paths import resolve_path, shorten
from auditor.schema.cache import analyse_file, cached_analysis
from auditor.schema.code_requests import prefilter, read_document
from auditor.schema.documents import CODE_SUFFIXES, LINTABLE_SUFFIXES, read_source
from auditor.schema.evalconfigs import analyse_with_label_sets
from auditor.schema.includes import IncludeReader
from auditor.schema.python_source import is_python_ref, load_python_input
from auditor.schema.sites import FileModel, analyse

STDIN = "-"
STDIN_DISPLAY = "<stdin>"
# folders a directory walk never enters (dependencies, builds, virtual environments, caches)
DEFAULT_EXCLUDES = ("node_modules", ".venv", "venv", "build", "dist", "site-packages", "__pycache__")
# code files a walk never reads: minified bundles and type declarations (no request literals)
DEFAULT_EXCLUDED_FILES = ("*.min.js", "*.min.mjs", "*.min.cjs", "*.d.ts", "*.d.mts", "*.d.cts")


@dataclass
class Input:
    display: str
    named: bool  # named on the command line (not found by a directory walk)
    path: Path | None = None
    raw: bytes | None = None  # stdin's bytes
    python: str | None = None  # "pkg.module:Name"
    refused: str | None = None  # why it is not read (a bad path, a symlink leaving the tree)
    code: bool = False  # a code file met by a directory walk (pre-filtered; no request: counted)
    # the folder named on the command line that holds it (a named file: its folder): an lm-eval
    # task's includes stay in its project, this folder where no marker says where that is
    top: str | None = None

    def load(
        self, use_cache: bool = True, max_bytes: int | None = None, max_depth: int | None = None
    ) -> FileModel:
        if self.refused is not None:
            raise InputFileError(self.display, self.refused)
        if self.python is not None:
            document, note = load_python_input(self.python)
            model = analyse(document)
            model.source = self.python
            if note:
                model.notes.append(note)
            return model
        if self.raw is not None:
            if max_bytes is not None and len(self.raw) > max_bytes:
                raise InputFileError(self.display, f"larger than max-file-bytes ({max_bytes} bytes)")
            return analyse_with_label_sets(
                read_document(self.raw, _suffix_for(self.display, self.raw), self.display, max_depth),
                IncludeReader(self.display, os.getcwd(), max_depth),
            )
        assert self.path is not None
        if self.code and not prefilter(read_source(self.path, self.display, max_bytes)):
            return FileModel(read_document(b"", self.path.suffix, self.display), "unknown")
        return analyse_file(self.path, self.display, use_cache, max_bytes, max_depth, self.top)

    def size(self) -> int:
        """Bytes to parse (an estimate of the work; 1 for what has no size)."""
        if self.raw is not None:
            return max(1, len(self.raw))
        try:
            return max(1, self.path.stat().st_size) if self.path is not None else 1
        except OSError:
            return 1

    def cached(self, max_bytes: int | None = None, max_depth: int | None = None) -> FileModel | None:
        """What `load` reads from the analysis cache, or None where it would analyse (or fail)."""
        if self.path is None or self.refused is not None:
            return None
        return cached_analysis(self.path, self.display, max_bytes, max_depth, self.top)


def _suffix_for(display: str, raw: bytes) -> str:
    suffix = Path(display).suffix.lower()
    if suffix in LINTABLE_SUFFIXES or suffix in CODE_SUFFIXES:
        return suffix
    head = raw.lstrip()[:1]
    return ".json" if head in (b"{", b"[") or not head else ".yaml"


def expand_inputs(
    args: list[str],
    stdin_filename: str | None = None,
    stdin: bytes | None = None,
    notices: list | None = None,
    max_bytes: int | None = None,
    exclude: tuple[str, ...] | list[str] = (),
) -> tuple[list[Input], list[str]]:
    """(inputs in a stable order, directories that held no JSON or YAML file); what a directory
    walk passes over (FIFOs, devices, links leaving the tree) is appended to `notices`."""
    out: list[Input] = []
    empty: list[str] = []
    for given in args:
        if given == STDIN:
            if stdin is None:  # never more than the limit (and one byte to tell it was over)
                stdin = sys.stdin.buffer.read(-1 if max_bytes is None else max_bytes + 1)
            out.append(Input(stdin_filename or STDIN_DISPLAY, True, raw=stdin))
            continue
        path = Path(given)
        if not _exists(path):
            try:
                path = resolve_path(given)
            except UsageError as exc:
                display = shorten(given)
                out.append(Input(display, True, path=path, refused=str(exc).removeprefix(f"{display}: ")))
                continue
        if path.is_dir():
            found = _walk(path, notices, tuple(exclude))
            if not found:
                empty.append(given)
            for item in found:
                item.top = str(path)
            out.extend(found)
        elif is_python_ref(given):
            out.append(Input(given, True, python=given))
        else:
            out.append(Input(given, True, path=path, top=str(path.parent)))
    return out, empty


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _walk(path: Path, notices: list | None = None, exclude: tuple[str, ...] = ()) -> list[Input]:
    """JSON, YAML and code files under a directory, in a stable order. Only regular files are
    taken; what is passed over (FIFOs, devices, dangling links) goes to `notices` as an
    InputFileError. A symlink (to a file or a folder) that leaves the directory named on the
    command line is refused: an input error, exit 2 (name its target to lint it). Directory
    symlinks that stay inside are not descended (their files are reached by the walk itself).
    Hidden folders, `DEFAULT_EXCLUDES` and paths matching an `exclude` glob (relative to the
    directory, or a bare name) are not entered."""
    found: list[Input] = []
    top = path.resolve()
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in DEFAULT_EXCLUDES
            and not _excluded(Path(root) / d, path, exclude)
        )
        for name in dirs:
            child = Path(root) / name
            if child.is_symlink() and _leaves(child, top):
                found.append(Input(str(child), False, path=child, refused=LEAVES_TREE))
        for name in sorted(names):
            suffix = Path(name).suffix.lower()
            if suffix not in LINTABLE_SUFFIXES and suffix not in CODE_SUFFIXES:
                continue
            child = Path(root) / name
            if any(fnmatch.fnmatchcase(name, p) for p in DEFAULT_EXCLUDED_FILES):
                continue
            if exclude and _excluded(child, path, exclude):
                continue
            skipped = _skip_reason(child, top)
            if skipped is None:
                found.append(Input(str(child), False, path=child, code=suffix in CODE_SUFFIXES))
            elif skipped == LEAVES_TREE:
                found.append(Input(str(child), False, path=child, refused=LEAVES_TREE))
            elif notices is not None:
                notices.append(InputFileError(str(child), skipped))
    return found


def _excluded(child: Path, top: Path, patterns: tuple[str, ...]) -> bool:
    """Whether a path under the walked directory matches an `exclude` glob: against its path
    relative to the directory, or (a pattern without `/`) its name."""
    relative = child.relative_to(top).as_posix()
    for pattern in patterns:
        pattern = pattern.rstrip("/").removeprefix("./")
        if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(
            relative, pattern.removeprefix("**/")
        ):
            return True
        if "/" not in pattern and fnmatch.fnmatchcase(child.name, pattern):
            return True
    return False


LEAVES_TREE = "symlink leaves the linted directory; refused (name its target to lint it)"


def _leaves(child: Path, top: Path) -> bool:
    try:
        return not child.resolve().is_relative_to(top)
    except (OSError, RuntimeError):
        return False  # a looping link: reported as unreadable where it matters


def _skip_reason(child: Path, top: Path) -> str | None:
    try:
        if child.is_symlink() and _leaves(child, top):
            return LEAVES_TREE
        mode = child.stat().st_mode
    except (OSError, RuntimeError) as exc:  # a dangling or looping link
        return f"cannot read file ({getattr(exc, 'strerror', None) or exc}); skipped"
    if not stat.S_ISREG(mode):
        return "not a regular file; skipped"
    return None
