"""Where pcdlint keeps its caches: `PCDLINT_CACHE_DIR`, else the user cache directory."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    override = os.environ.get("PCDLINT_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pcdlint")) / "tokenizers"
