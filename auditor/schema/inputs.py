"""What the command line names, turned into things to crawl: files, directories, stdin, Python.

- a file: read as JSON or YAML (by suffix);
- a directory: its *.json, *.yaml, *.yml files, recursively, hidden folders skipped — never a
  `.py` file: importing runs code, so that only happens for an object named explicitly (the
  walk lists the `.py` files it met in one note);
- `-`: standard input, named by `--stdin-filename` in messages and config matching;
- `pkg.module:Name` or `path/to/any-file.py:Name`: a Pydantic model, Enum, Literal alias,
  TypedDict or dataclass (auditor.schema.python_source), when no file of that name exists; a
  module that cannot be imported is read from its source with `ast` (python_static).

Every input remembers whether it was named on the command line: a named file with no schema in
it is an error (unless allowed), one met in a directory walk is only listed.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import InputFileError, UsageError
from auditor.paths import resolve_path, shorten
from auditor.schema.cache import analyse_file, cached_analysis
from auditor.schema.documents import LINTABLE_SUFFIXES, parse_document
from auditor.schema.evalconfigs import analyse_with_label_sets
from auditor.schema.includes import IncludeReader
from auditor.schema.python_source import is_python_ref, load_python_input
from auditor.schema.sites import FileModel, analyse

STDIN = "-"
STDIN_DISPLAY = "<stdin>"


@dataclass
class Input:
    display: str
    named: bool  # named on the command line (not found by a directory walk)
    path: Path | None = None
    raw: bytes | None = None  # stdin's bytes
    python: str | None = None  # "pkg.module:Name"
    refused: str | None = None  # why it is not read (a bad path, a symlink leaving the tree)
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
                parse_document(self.raw, _suffix_for(self.display, self.raw), self.display, max_depth),
                IncludeReader(self.display, os.getcwd(), max_depth),
            )
        assert self.path is not None
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
    if suffix in LINTABLE_SUFFIXES:
        return suffix
    head = raw.lstrip()[:1]
    return ".json" if head in (b"{", b"[") or not head else ".yaml"


def expand_inputs(
    args: list[str],
    stdin_filename: str | None = None,
    stdin: bytes | None = None,
    notices: list | None = None,
    max_bytes: int | None = None,
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
            found = _walk(path, notices)
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


def _walk(path: Path, notices: list | None = None) -> list[Input]:
    """*.json/*.yaml/*.yml under a directory, in a stable order. Only regular files are taken;
    what is passed over (FIFOs, devices, dangling links) goes to `notices` as an InputFileError.
    A symlink (to a file or a folder) that leaves the directory named on the command line is
    refused: an input error, exit 2 (name its target to lint it). Directory symlinks that stay
    inside are not descended (their files are reached by the walk itself)."""
    found: list[Input] = []
    python: list[str] = []  # never imported: listed in one note
    top = path.resolve()
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in dirs:
            child = Path(root) / name
            if child.is_symlink() and _leaves(child, top):
                found.append(Input(str(child), False, path=child, refused=LEAVES_TREE))
        for name in sorted(names):
            if name.endswith(".py"):
                python.append(str(Path(root) / name))
            if Path(name).suffix.lower() not in LINTABLE_SUFFIXES:
                continue
            child = Path(root) / name
            skipped = _skip_reason(child, top)
            if skipped is None:
                found.append(Input(str(child), False, path=child))
            elif skipped == LEAVES_TREE:
                found.append(Input(str(child), False, path=child, refused=LEAVES_TREE))
            elif notices is not None:
                notices.append(InputFileError(str(child), skipped))
    if python and notices is not None:
        shown = ", ".join(python[:10]) + (f" and {len(python) - 10} more" if len(python) > 10 else "")
        notices.append(
            InputFileError(
                str(path),
                f"{len(python)} Python file(s) not imported: {shown} "
                "(name a model to lint it: pkg.module:Class or path/file.py:Class)",
            )
        )
    return found


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
