"""The files an lm-eval task `include`s: found as lm-eval finds them, read only inside the
project, each once, within limits, and fingerprinted for the analysis cache.

lm-eval (`lm_eval/tasks/_yaml_loader.py` load_yaml) reads a task's `include` (a name or a list
of names) relative to the including file's folder (an absolute name as it is), each included
file's own includes in turn, and merges them under the task's own keys. pcdlint reads them the
same way, as data (never run: tags stay text), with these limits:

- **Confined to the project root**: the nearest folder at or above the linted file holding
  `.git`, `pyproject.toml` or `.pcdlint.toml`, else the folder named on the command line (for
  a file named there: its folder). An include whose real path (symlinks followed) is outside it
  (`../../outside/base.yaml`, `/etc/passwd`, a link out of the tree) is not opened: a note.
- **Names this system cannot use** (a NUL byte, a name or path too long: auditor.paths) and
  files that cannot be read (missing, not a regular file, not YAML, over the size limit) are a
  note naming the include; the task is then linted with what was read.
- **Once per file**: a file reached twice (a DAG that fans out) is read and merged once; a file
  that includes itself, directly or not, is a cycle (a note). At most MAX_DEPTH levels,
  MAX_FILES distinct files and MAX_BYTES bytes in all per task: past them, a note.

What an analysis read is kept with its result (FileModel.include_reads): each include as the
names that reach it from the task's folder, and its fingerprint (its content's sha256 and its
real path below the root, or why it was not read). The analysis cache keeps that list in the
entry and uses the entry only while every fingerprint is still the same (`unchanged`), so an
edit to any file the analysis read, or a file now present that was missing, reads the task again.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from auditor.errors import InputFileError
from auditor.paths import path_problem, shorten
from auditor.schema.documents import parse_document, read_source

ROOT_MARKERS = (".git", "pyproject.toml", ".pcdlint.toml")
MAX_DEPTH = 8  # include levels below the task
MAX_FILES = 32  # distinct files one task's includes read
MAX_BYTES = 1_000_000  # bytes of them in all (one file at most this too)

Chain = tuple[str, ...]  # include names from the task's folder to one included file
Reads = list[tuple[Chain, str]]  # (chain, fingerprint) of each include an analysis met


@lru_cache(maxsize=256)
def project_root(folder: str, fallback: str | None = None) -> str:
    """The real path of the nearest folder at or above `folder` holding a ROOT_MARKERS file,
    else of `fallback` (the folder named on the command line), else of `folder`."""
    try:
        real = os.path.realpath(folder or ".")
        for parent in (real, *map(str, Path(real).parents)):
            if any(os.path.exists(os.path.join(parent, marker)) for marker in ROOT_MARKERS):
                return parent
        return os.path.realpath(fallback) if fallback else real
    except (OSError, ValueError):
        return os.path.realpath(fallback) if fallback else folder


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Looked:
    """What reading one include gave: its fingerprint, and its data or why it has none."""

    fingerprint: str
    data: object = None
    problem: str | None = None
    size: int = 0
    real: str = ""


# included files read in this process, by real path and identity (a tasks tree includes one
# template from many tasks): the fingerprint and the parsed data
_READ: dict[tuple, Looked] = {}
_READ_LIMIT = 256


def look(folder: Path, name: str, root: str, max_depth: int | None = None) -> Looked:
    """Read the include `name` of a file in `folder` if it may be read: its fingerprint, and
    its parsed data or the problem. `root`: the project root's real path."""
    text = os.path.join(folder, name)  # (as lm-eval joins it, not normalised)
    outside = Looked("outside", problem=f"outside the project root {shorten(root)}; not read")
    try:
        os.fsencode(text)
        problem = None if "\0" not in text else "a path cannot hold a NUL byte"
        # the name joined to its folder's real path, `..` taken as written: a name that leads
        # out of the root so (`../../x`, `/etc/passwd`) is refused before the file system is
        # asked anything about it
        written = os.path.normpath(os.path.join(os.path.realpath(folder), name)) if problem is None else ""
    except (UnicodeError, ValueError, OSError):
        problem = "not a name this system can use"
    if problem is None and not _inside(written, root):
        return outside
    problem = problem or path_problem(text)
    if problem is not None:
        return Looked(f"bad-name:{problem}", problem=f"{problem}; not read")
    try:
        real = os.path.realpath(text)
    except (OSError, ValueError) as exc:
        return Looked("bad-name", problem=f"cannot use this path ({exc}); not read")
    if not _inside(real, root):
        return outside
    where = os.path.relpath(real, root)
    try:
        info = os.stat(real)
    except OSError as exc:
        return Looked(f"missing:{where}", problem=f"cannot read file ({exc.strerror or exc})", real=real)
    identity = (real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, max_depth, root)
    known = _READ.get(identity)
    if known is not None:
        return known
    try:
        raw = read_source(Path(real), shorten(text), MAX_BYTES)
    except InputFileError as error:
        found = Looked(f"unreadable:{where}:{error.message}", problem=error.message, real=real)
    else:
        fingerprint = f"{where}|sha256:{hashlib.sha256(raw).hexdigest()}"
        try:
            data = parse_document(raw, ".yaml", shorten(text), max_depth).data
        except InputFileError as error:
            found = Looked(fingerprint, problem=error.message, size=len(raw), real=real)
        else:
            found = Looked(
                fingerprint, data, None if isinstance(data, dict) else "not a mapping", len(raw), real
            )
    if len(_READ) >= _READ_LIMIT:
        _READ.pop(next(iter(_READ)))
    _READ[identity] = found
    return found


def include_names(value: object) -> list[str]:
    """The include names of a task's `include` (a name or a list of names)."""
    names = value if isinstance(value, list) else [value]
    return [n for n in names if isinstance(n, str) and n]


@dataclass
class IncludeReader:
    """How one task's analysis reads its includes (see the module docstring): `path`, the
    task's path; `fallback`, the folder named on the command line (the root where no marker is
    found). `reads` records every include met, for the analysis cache."""

    path: str
    fallback: str | None = None
    max_depth: int | None = None
    reads: Reads = field(default_factory=list)
    _merged: dict[str, tuple[dict, str | None]] = field(default_factory=dict)
    _files: set[str] = field(default_factory=set)
    _bytes: int = 0

    @property
    def root(self) -> str:
        return project_root(os.path.dirname(os.path.abspath(self.path)), self.fallback)

    def merged(self, names: list[str], keep: tuple[str, ...]) -> tuple[dict, str | None]:
        """(the `keep` keys the included files give, merged as lm-eval merges them: in order,
        each file's own keys over its includes'; why one could not be read, or None)."""
        real = os.path.realpath(self.path) if self.path else ""
        return self._included(Path(self.path).parent, (), names, keep, 0, frozenset({real}))

    def _included(
        self,
        folder: Path,
        chain: Chain,
        names: list[str],
        keep: tuple[str, ...],
        depth: int,
        on_path: frozenset,
    ) -> tuple[dict, str | None]:
        merged: dict = {}
        for name in names:
            shown = shorten(" › ".join(shorten(n, 60) for n in (*chain, name)), 160)
            if depth >= MAX_DEPTH:
                return merged, f"{shown}: includes nested deeper than {MAX_DEPTH} levels; not read"
            candidate = folder / name
            link = (*chain, name)
            found = look(folder, name, self.root, self.max_depth)
            self.reads.append((link, found.fingerprint))
            if found.problem is not None:
                return merged, f"{shown}: {found.problem}"
            if found.real in on_path:
                return merged, f"{shown}: includes itself (a cycle); not read again"
            memo = self._merged.get(found.real)
            if memo is None:
                if found.real not in self._files:
                    self._files.add(found.real)
                    self._bytes += found.size
                    if len(self._files) > MAX_FILES or self._bytes > MAX_BYTES:
                        return merged, (
                            f"{shown}: the includes read more than {MAX_FILES} files or "
                            f"{MAX_BYTES:,} bytes; not read"
                        )
                data = found.data
                assert isinstance(data, dict)
                inner, problem = self._included(
                    candidate.parent,
                    link,
                    include_names(data.get("include")),
                    keep,
                    depth + 1,
                    on_path | {found.real},
                )
                memo = {**inner, **{k: v for k, v in data.items() if k in keep}}, problem
                self._merged[found.real] = memo
            merged.update(memo[0])
            if memo[1] is not None:
                return merged, memo[1]
        return merged, None


def unchanged(reads: object, path: str, fallback: str | None, max_depth: int | None) -> bool:
    """Whether every include an analysis of the file at `path` read (its `reads`, as kept in a
    cache entry) would be read the same now: then the analysis is the same."""
    if type(reads) is not list:
        return False
    if not reads:
        return True
    root = IncludeReader(path, fallback).root
    base = Path(path).parent
    for item in reads:
        if type(item) is not list or len(item) != 2 or type(item[1]) is not str or type(item[0]) is not list:
            return False
        chain, fingerprint = item
        if not chain or not all(type(name) is str and name for name in chain):
            return False
        folder = base
        for name in chain[:-1]:
            folder = (folder / name).parent
        if look(folder, chain[-1], root, max_depth).fingerprint != fingerprint:
            return False
    return True
