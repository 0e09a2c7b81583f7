"""Where pcdlint keeps its caches (`PCDLINT_CACHE_DIR`, else the user cache directory), and how
an entry is written there: atomically, and, for the analysis and encoding caches, as a checked
entry (one JSON header line with the payload's length and sha256, then the payload), which is
untrusted when read back (CI caches are restored from other branches)."""

from __future__ import annotations

import hashlib
import json
import os
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


def write_checked(target: Path, header: dict, payload: bytes) -> None:
    """Write a checked entry: `header` with the payload's length and sha256 added, then it."""
    line = json.dumps({**header, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()})
    atomic_write(target, line.encode() + b"\n" + payload)


def read_checked(target: Path | str, expected: dict) -> tuple[dict, bytes] | None:
    """(header, payload) of a checked entry whose header holds each of `expected`'s values and
    the payload's true length and sha256; None for anything else (missing, truncated, foreign,
    tampered with)."""
    try:
        with open(target, "rb") as handle:
            header = json.loads(handle.readline())
            payload = handle.read()
    except (OSError, ValueError):
        return None
    if (
        not isinstance(header, dict)
        or any(header.get(name) != value for name, value in expected.items())
        or header.get("bytes") != len(payload)
        or header.get("sha256") != hashlib.sha256(payload).hexdigest()
    ):
        return None
    return header, payload
