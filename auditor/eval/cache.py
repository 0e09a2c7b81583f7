"""A resumable cache of per-row scores: one append-only JSONL file per (schema, model, settings).

Each scored row is appended and flushed at once, so an interrupted run keeps every row it
finished and a rerun continues from there. Lines are ``{"variant": "original"|"reversed",
"row": <sha256 of the context>, "scores": [...]}``; a torn last line (the process died
mid-write) is ignored and rescored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

SCORE_FORMAT_VERSION = 1  # bump when the meaning of cached scores changes


def default_cache_dir() -> Path:
    override = os.environ.get("PCDLINT_CACHE_DIR")
    if override:
        return Path(override) / "eval"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pcdlint")) / "eval"


def cache_key(material: dict) -> str:
    text = json.dumps({"format": SCORE_FORMAT_VERSION, **material}, sort_keys=True, ensure_ascii=False,
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class ScoreCache:
    """Scores by (variant, row hash); ``directory=None`` keeps them in memory only."""

    def __init__(self, directory: Path | None, material: dict):
        self.key = cache_key(material)
        self.path = None if directory is None else Path(directory) / f"{self.key}.jsonl"
        self.entries: dict[tuple[str, str], list] = {}
        self.loaded = 0
        if self.path is not None and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                    self.entries[(entry["variant"], entry["row"])] = entry["scores"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line torn by an interruption
            self.loaded = len(self.entries)

    def get(self, variant: str, row: str):
        return self.entries.get((variant, row))

    def put(self, variant: str, row: str, scores: list) -> None:
        self.entries[(variant, row)] = scores
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"variant": variant, "row": row, "scores": scores}, ensure_ascii=False)
        with open(self.path, "a+b") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell():
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":  # finish a torn line so it stays one bad line
                    handle.write(b"\n")
            handle.write(line.encode("utf-8") + b"\n")
            handle.flush()
