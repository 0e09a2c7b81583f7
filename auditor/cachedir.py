"""Where pcdlint keeps its caches: `PCDLINT_CACHE_DIR`, else the user cache directory."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def cache_dir() -> Path:
    override = os.environ.get("PCDLINT_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform == "linux":  # platformdirs' rule, without importing it (and tempfile) per run
        base = os.environ.get("XDG_CACHE_HOME", "")
        return Path(base if base.strip() else os.path.expanduser("~/.cache")) / "pcdlint" / "tokenizers"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pcdlint")) / "tokenizers"
