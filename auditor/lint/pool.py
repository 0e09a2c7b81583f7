"""A process pool over files: `work` (the engine's serial path) run by forked workers on
contiguous chunks of the inputs, its results handed back in input order, so merging them gives
what one process gives (tests/test_lint_pool.py compares the output).

Workers are forked after the tokenizers are loaded: each shares the parent's tokenizers (no
load, no conversion); the tokenizers library's own threads are off in them (one core each).
Where fork is not available the serial path runs.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from auditor.errors import UsageError

POOL_MIN_FILES = 16  # below this, starting workers costs more than it saves
MAX_WORKERS = 8
_CHUNKS_PER_WORKER = 2  # contiguous chunks: few (each is one bulk tokenizer batch), not one (balance)
_job: tuple[Callable, list] | None = None  # what the forked workers inherit: (work, items)


def pool_size(files: int, jobs: int | None) -> int:
    """Worker processes for `files` inputs (1: no pool): `jobs` if given, else (on Linux) one
    per core once there are POOL_MIN_FILES files; never more than files, never without fork."""
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, not {jobs}")
    if os.environ.get("PCDLINT_DEBUG"):
        return 1  # an exception raised in one process keeps its traceback
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1  # the workers get the loaded tokenizers by fork
    if jobs is None:
        if files < POOL_MIN_FILES or not sys.platform.startswith("linux"):
            return 1  # few files; or macOS, where forking is not safe with every library loaded
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        jobs = min(cores or 1, MAX_WORKERS)
    return max(1, min(jobs, files))


def chunk_bounds(weights: list[float], count: int) -> list[tuple[int, int]]:
    """At most `count` contiguous (start, end) ranges covering the items, of about equal weight."""
    total = sum(weights)
    bounds: list[tuple[int, int]] = []
    start, done = 0, 0.0
    for index, weight in enumerate(weights):
        done += weight
        if done >= total * (len(bounds) + 1) / count and len(bounds) < count - 1:
            bounds.append((start, index + 1))
            start = index + 1
    if start < len(weights):
        bounds.append((start, len(weights)))
    return bounds


def map_chunks(work: Callable[[list], object], items: list, workers: int,
               weights: list[float] | None = None, per_worker: int = _CHUNKS_PER_WORKER) -> list | None:
    """[work(chunk) for each contiguous chunk of items], computed by `workers` forked processes;
    None when a worker died (killed for memory, say): the caller then does the work itself.
    `weights`: each item's expected cost (chunks of about equal weight; default: equal);
    `per_worker`: chunks per worker (more: a shorter tail when results are large to send back)."""
    global _job
    weights = weights or [1.0] * len(items)
    chunks = chunk_bounds(weights, workers * per_worker)
    # the heaviest chunks first (a worker that finishes early takes the next): a shorter tail
    order = sorted(range(len(chunks)), key=lambda i: -sum(weights[chunks[i][0]:chunks[i][1]]))
    previous = os.environ.get("TOKENIZERS_PARALLELISM")
    _job = (work, items)
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            os.environ["TOKENIZERS_PARALLELISM"] = "false"  # what the workers see at fork
            try:
                first = pool.submit(_run_chunk, chunks[order[0]])  # forks every worker, before any thread
            finally:
                if previous is None:
                    os.environ.pop("TOKENIZERS_PARALLELISM", None)
                else:
                    os.environ["TOKENIZERS_PARALLELISM"] = previous
            futures = {order[0]: first}
            futures.update((i, pool.submit(_run_chunk, chunks[i])) for i in order[1:])
            return [futures[i].result() for i in range(len(chunks))]  # in input order
    except BrokenProcessPool:
        return None
    finally:
        _job = None


def _run_chunk(bounds: tuple[int, int]):
    assert _job is not None
    work, items = _job
    return work(items[bounds[0]:bounds[1]])
