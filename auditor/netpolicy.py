"""No network unless asked: the one switch every model and tokenizer resolution goes through.

huggingface_hub sends requests of its own (e.g. its agent/metadata call) even when a caller
asks for cache-only files (`local_files_only=True`, `try_to_load_from_cache`); only its offline
mode stops every request. So every resolution point (tokenizer loading, model loading) calls
`network_policy(allow_download)` first: without `--allow-download` it turns offline mode on
(environment for libraries not imported yet, the live constant for those already imported).
With `--allow-download` it only undoes what it set itself; a user's own HF_HUB_OFFLINE=1 wins.

This module imports nothing from pcdlint, so any layer may call it.
"""

from __future__ import annotations

import os
import sys

_OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")
_saved: dict[str, str | None] | None = None  # the environment before we went offline


def network_policy(allow_download: bool) -> bool:
    """Enforce the policy for this resolution; True when the network may be used."""
    global _saved
    if not allow_download:
        if _saved is None:
            _saved = {name: os.environ.get(name) for name in _OFFLINE_ENV}
        for name in _OFFLINE_ENV:
            os.environ[name] = "1"
        _set_live(True)
        return False
    if _saved is not None:  # an earlier call in this process went offline: undo only that
        for name, value in _saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _saved = None
    offline = os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
    _set_live(offline)
    return not offline


def _set_live(offline: bool) -> None:
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = offline  # type: ignore[attr-defined]  # read by every request
