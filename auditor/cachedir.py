"""Where pcdlint keeps its caches (`PCDLINT_CACHE_DIR`, else the user cache directory), and how
an entry is written there and read back.

Written atomically, and, for the analysis, encoding, rank-table and converted-tokenizer caches,
as a checked entry: one JSON header line with the payload's length and sha256, then the payload.
Read back as untrusted input (CI caches are restored from other branches): only a regular file
directly in its folder (never a symlink, FIFO, device or socket: nothing that blocks or never
ends), of at most a stated size (checked before anything is read), and, for a folder of the
cache directory, one that does not lead out of it; then its header and checksum are checked.
Anything else reads as no entry: the caller rebuilds it (docs/security.md, "Caches").
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from functools import lru_cache
from pathlib import Path


def cache_dir() -> Path:
    """The cache directory for the environment as it is now (a run asks once per file, so on
    Linux the answer is kept per value of the variables it reads)."""
    environ = os.environ
    override = environ.get("PCDLINT_CACHE_DIR")
    if override or sys.platform == "linux":
        return _linux_cache_dir(override, environ.get("XDG_CACHE_HOME"), environ.get("HOME"))
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pcdlint")) / "tokenizers"


@lru_cache(maxsize=8)
def _linux_cache_dir(override: str | None, xdg: str | None, home: str | None) -> Path:
    """PCDLINT_CACHE_DIR, else platformdirs' rule on Linux (without importing it, and tempfile,
    per run); `home`: what `~` expands to."""
    if override:
        return Path(override)
    base = xdg or ""
    return Path(base if base.strip() else os.path.expanduser("~/.cache")) / "pcdlint" / "tokenizers"


def atomic_write(target: Path, data: str | bytes) -> None:
    """Write `target` whole or not at all (tempfile.mkstemp beside it, then os.replace); a
    cache that cannot be written only costs speed."""
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # (only where a file is written: not at every start-up)

        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, target)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# The largest cache file read back (a 20 MB schema's analysis, a large vocabulary's converted
# tokenizer.json fit many times over); a writer never stores more (`write_checked`)
ENTRY_MAX_BYTES = 256 * 1024 * 1024
HEADER_MAX_BYTES = 64 * 1024  # a checked entry's header line
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
)


def write_checked(target: Path, header: dict, payload: bytes) -> None:
    """Write a checked entry: `header` with the payload's length and sha256 added, then it (not
    written over ENTRY_MAX_BYTES: it could not be read back)."""
    line = json.dumps({**header, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()})
    if len(line) + len(payload) < ENTRY_MAX_BYTES:
        atomic_write(target, line.encode() + b"\n" + payload)


def read_cache_file(target: Path | str, limit: int = ENTRY_MAX_BYTES) -> bytes | None:
    """The bytes of a cache file, or None: no such file, or not one to read (see the module's
    docstring: a symlink, FIFO, device or socket; over `limit` bytes; in a folder that leads out
    of the cache directory). Nothing is opened but a regular file, and that without blocking."""
    try:
        info = os.lstat(target)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_size > limit
            or not _inside_cache(os.path.dirname(target))
        ):
            return None
        fd = os.open(target, _OPEN_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or opened.st_size > limit:
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = handle.read(limit + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data if len(data) <= limit else None


def _inside_cache(folder: str) -> bool:
    """Whether a folder of the cache directory (by its name) is inside it with its links
    followed too: a folder of the cache replaced by a link elsewhere is not read. A folder the
    caller names outside the cache directory (a test's entry) is read as named."""
    top = str(cache_dir())
    if not _within(os.path.abspath(folder or "."), os.path.abspath(top)):
        return True
    return _inside(folder, top)


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


@lru_cache(maxsize=64)
def _inside(folder: str, top: str) -> bool:
    """_inside_cache's check of the real paths, asked once per folder and cache directory in a
    process."""
    try:
        return _within(os.path.realpath(folder or "."), os.path.realpath(top))
    except (OSError, ValueError):
        return False


def read_checked(
    target: Path | str, expected: dict, limit: int = ENTRY_MAX_BYTES
) -> tuple[dict, bytes] | None:
    """(header, payload) of a checked entry whose header holds each of `expected`'s values and
    the payload's true length and sha256; None for anything else (missing, not a regular file,
    too large, truncated, foreign, tampered with)."""
    data = read_cache_file(target, limit)
    if data is None:
        return None
    line, newline, payload = data.partition(b"\n")
    if not newline or len(line) > HEADER_MAX_BYTES:
        return None
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if (
        not isinstance(header, dict)
        or any(header.get(name) != value for name, value in expected.items())
        or header.get("bytes") != len(payload)
        or header.get("sha256") != hashlib.sha256(payload).hexdigest()
    ):
        return None
    return header, payload
