"""A resumable cache of per-row scores: one append-only JSONL file per (schema, model, settings).

Each scored row is appended and flushed at once, so an interrupted run keeps every row it
finished and a rerun continues from there. Lines are ``{"variant": "original"|"reversed",
"row": <sha256 of the context>, "scores": [...]}``; a torn last line (the process died
mid-write) is ignored and rescored. So is any line that does not hold scores of the shape the
run expects (one object per field, a finite log-score per option, a pick in range): a damaged
or edited cache costs a rescoring and a note in the report, never the run.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

from auditor.limits import Unreadable, read_regular

_ROW_KEY = re.compile(r"[0-9a-f]{64}")
VARIANTS = ("original", "reversed")
# a decision eval's probe variants (eval/decisions.py): orders, and the criteria and names probes
_ORDER_VARIANT = re.compile(r"order[1-9][0-9]?|criteria|names")

SCORE_FORMAT_VERSION = 1  # bump when the meaning of cached scores changes


def default_cache_dir() -> Path:
    override = os.environ.get("PCDLINT_CACHE_DIR")
    if override:
        return Path(override) / "eval"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pcdlint")) / "eval"


def _log_scores(values, count: int, nullable: bool = False) -> bool:
    """A list of `count` log-scores: numbers, -inf allowed, never NaN or +inf."""
    if values is None:
        return nullable
    return (
        isinstance(values, list)
        and len(values) == count
        and all(type(v) in (int, float) and not math.isnan(v) and v != math.inf for v in values)
    )


def valid_scores(scores: Any, shape: list[int] | None) -> bool:
    """Whether cached `scores` have the shape a backend's `score` returns for fields with
    `shape` options each (auditor.eval.backends): checked before a metric reads them."""
    if not isinstance(scores, list) or (shape is not None and len(scores) != len(shape)):
        return False
    for index, block in enumerate(scores):
        if not isinstance(block, dict):
            return False
        if shape is None:
            continue
        count = shape[index]
        pick = block.get("constrained_pick")
        if not (
            type(pick) is int
            and 0 <= pick < count
            and _log_scores(block.get("first_token"), count)
            and _log_scores(block.get("full_sequence"), count)
            and _log_scores(block.get("constrained"), count)
            and _log_scores(block.get("letter"), count, nullable=True)
        ):
            return False
    return True


def cache_key(material: dict) -> str:
    text = json.dumps(
        {"format": SCORE_FORMAT_VERSION, **material}, sort_keys=True, ensure_ascii=False, default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


# The largest score cache file read (tens of thousands of rows take a few MB); larger, it is
# not read (every row is scored again)
SCORE_CACHE_MAX_BYTES = 256 * 1024 * 1024
BATCH_LINES = 256  # a streamed run appends its answers this many at a time …
BATCH_SECONDS = 1.0  # … or after this long, so an interrupted run loses at most a second of them


def _read(path: Path) -> bytes:
    """A score cache file's bytes: b"" for none, a link, or anything but a regular file within
    SCORE_CACHE_MAX_BYTES (never opened: a FIFO would block, /dev/zero never ends)."""
    try:
        if os.path.islink(path):
            return b""
        return read_regular(path, SCORE_CACHE_MAX_BYTES)
    except Unreadable:
        return b""


class ScoreCache:
    """Scores by (variant, row hash); ``directory=None`` keeps them in memory only."""

    def __init__(self, directory: Path | None, material: dict, shape: list[int] | None = None):
        self.key = cache_key(material)
        self.path = None if directory is None else Path(directory) / f"{self.key}.jsonl"
        self.entries: dict[tuple[str, str], list] = {}
        self.loaded = 0
        self.skipped = 0  # damaged lines (torn, edited, of another shape): rescored
        self._batch: list[bytes] = []
        self._flushed = time.monotonic()
        raw = _read(self.path) if self.path is not None else b""
        if raw:
            for line in raw.split(b"\n"):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    if not (
                        isinstance(entry, dict)
                        and (
                            entry.get("variant") in VARIANTS
                            or _ORDER_VARIANT.fullmatch(str(entry.get("variant")))
                        )
                        and isinstance(entry.get("row"), str)
                        and _ROW_KEY.fullmatch(entry["row"])
                        and valid_scores(entry.get("scores"), shape)
                    ):
                        raise ValueError("not an entry")
                    self.entries[(entry["variant"], entry["row"])] = entry["scores"]
                except (ValueError, KeyError, TypeError, RecursionError):
                    self.skipped += 1  # a line torn by an interruption, or damaged
            self.loaded = len(self.entries)

    def note(self) -> str:
        return (
            f"score cache {self.path}: {self.skipped} damaged line{'s' if self.skipped != 1 else ''} "
            "skipped (those rows were scored again)"
        )

    def get(self, variant: str, row: str) -> Any:  # the row's scores, or None
        return self.entries.get((variant, row))

    def put(self, variant: str, row: str, scores: list, remember: bool = True) -> None:
        """Keep a row's scores (``remember``: for ``get`` in this run too) and append them to the
        file: at once, or (``remember=False``, a streamed run) in batches of ``BATCH_LINES`` lines
        or ``BATCH_SECONDS``, whichever comes first; ``flush`` writes what is left."""
        if remember:
            self.entries[(variant, row)] = scores
        if self.path is None:
            return
        line = json.dumps({"variant": variant, "row": row, "scores": scores}, ensure_ascii=False)
        self._batch.append(line.encode("utf-8") + b"\n")
        now = time.monotonic()
        if remember or len(self._batch) >= BATCH_LINES or now - self._flushed >= BATCH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Append the batched lines to the file (one write)."""
        if self.path is None or not self._batch:
            return
        data, self._batch = b"".join(self._batch), []
        self._flushed = time.monotonic()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell():
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":  # finish a torn line so it stays one bad line
                    handle.write(b"\n")
            handle.write(data)
            handle.flush()
