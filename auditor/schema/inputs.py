"""What the command line names, turned into things to crawl: files, directories, stdin, Python.

- a file: read as JSON or YAML (by suffix);
- a directory: its *.json, *.yaml, *.yml files, recursively, hidden folders skipped — never a
  `.py` file: importing runs code, so that only happens for an object named explicitly;
- `-`: standard input, named by `--stdin-filename` in messages and config matching;
- `pkg.module:Name`: a Pydantic model, Enum, Literal alias, TypedDict or dataclass
  (auditor.schema.python_source), when no file of that name exists.

Every input remembers whether it was named on the command line: a named file with no schema in
it is an error (unless allowed), one met in a directory walk is only listed.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from auditor.schema.cache import analyse_file
from auditor.schema.documents import LINTABLE_SUFFIXES, parse_document
from auditor.schema.python_source import is_python_ref, load_python_ref
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

    def load(self, use_cache: bool = True) -> FileModel:
        if self.python is not None:
            return analyse(load_python_ref(self.python))
        if self.raw is not None:
            return analyse(parse_document(self.raw, _suffix_for(self.display, self.raw), self.display))
        assert self.path is not None
        return analyse_file(self.path, self.display, use_cache)


def _suffix_for(display: str, raw: bytes) -> str:
    suffix = Path(display).suffix.lower()
    if suffix in LINTABLE_SUFFIXES:
        return suffix
    head = raw.lstrip()[:1]
    return ".json" if head in (b"{", b"[") or not head else ".yaml"


def expand_inputs(args: list[str], stdin_filename: str | None = None,
                  stdin: bytes | None = None) -> tuple[list[Input], list[str]]:
    """(inputs in a stable order, directories that held no JSON or YAML file)."""
    out: list[Input] = []
    empty: list[str] = []
    for given in args:
        if given == STDIN:
            if stdin is None:
                stdin = sys.stdin.buffer.read()
            out.append(Input(stdin_filename or STDIN_DISPLAY, True, raw=stdin))
            continue
        path = Path(given)
        if path.is_dir():
            found = [Input(str(child), False, path=child) for child in _walk(path)]
            if not found:
                empty.append(given)
            out.extend(found)
        elif is_python_ref(given):
            out.append(Input(given, True, python=given))
        else:
            out.append(Input(given, True, path=path))
    return out, empty


def _walk(path: Path) -> list[Path]:
    files: list[Path] = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files.extend(Path(root) / name for name in sorted(names)
                     if Path(name).suffix.lower() in LINTABLE_SUFFIXES)
    return files
