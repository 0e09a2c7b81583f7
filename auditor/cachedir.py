"""Where pcdlint keeps its caches: `PCDLINT_CACHE_DIR`, else the user cache directory."""

from __future__ import annotations

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
