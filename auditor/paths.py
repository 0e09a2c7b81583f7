"""The one resolver for path operands: `check` paths, `-t`, `--config`, `verify --model`,
`suggest` paths and the config's `tokenizers`.

`~` and `~user` are expanded (an unknown user or an unset home is an error, not a literal `~`
folder); a path this system cannot name (a NUL byte, a component over NAME_MAX bytes, the whole
over PATH_MAX, ENAMETOOLONG or ELOOP from the file system) is one line naming the operand, cut to
a readable length, never an OSError from deep inside. A path that does not exist is fine here:
each caller says what a missing file means for it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from auditor.errors import UsageError
from auditor.shown import shorten

__all__ = ["path_problem", "resolve_path", "resolve_text", "shorten"]

NAME_MAX = 255  # bytes in one path component (Linux, macOS, Windows)
PATH_MAX = 4096  # bytes in a whole path (Linux)


def path_problem(text: str) -> str | None:
    """Why this system cannot name `text` as a path, or None when it can."""
    if "\0" in text:
        return "a path cannot hold a NUL byte"
    raw = os.fsencode(text)
    if len(raw) >= PATH_MAX:
        return f"path too long ({len(raw):,} bytes; the limit is {PATH_MAX - 1:,})"
    longest = max((len(part) for part in raw.split(b"/")), default=0)
    if longest > NAME_MAX:
        return f"file name too long (a component of {longest:,} bytes; the limit is {NAME_MAX})"
    try:
        os.stat(text)
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
            return f"cannot use this path ({exc.strerror})"
    except ValueError as exc:  # embedded NUL and the like, on platforms that say so
        return f"cannot use this path ({exc})"
    return None


def expand_home(text: str) -> str:
    """`~` / `~user` expanded; raises UsageError when that home is unknown."""
    if not text.startswith("~"):
        return text
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        user = text[1:].split("/", 1)[0]
        who = f"user '{shorten(user, 40)}'" if user else "the current user (HOME is not set)"
        raise UsageError(f"{shorten(text)}: no home directory known for {who}")
    return expanded


def resolve_path(given: str | os.PathLike, label: str = "") -> Path:
    """The path an operand names, or a UsageError `LABEL GIVEN: why` (label: the option, or ""
    for a positional path)."""
    return Path(resolve_text(given, label))


def resolve_text(given: str | os.PathLike, label: str = "") -> str:
    """`resolve_path` as text, otherwise as given (`./a/` stays `./a/`): for specs that may be
    a path or a name (a tokenizer, a model hub id)."""
    text = os.fspath(given)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    prefix = f"{label} " if label else ""
    try:
        expanded = expand_home(text)
    except UsageError as exc:
        raise UsageError(f"{prefix}{exc}") from None
    problem = path_problem(expanded)
    if problem is not None:
        raise UsageError(f"{prefix}{shorten(text)}: {problem}")
    return expanded
