"""A process pool over files: `work` (the engine's serial path) run on contiguous chunks of the
inputs by this process and forked workers, its results handed back in input order, so merging
them gives what one process gives (tests/test_lint_pool.py compares the output).

Workers are forked after the tokenizers are loaded: each shares the parent's tokenizers (no
load, no conversion); the tokenizers library's own threads are off while the pool runs (one
core each). Where fork is not available the serial path runs.

The pool is plain `os.fork`, not `concurrent.futures`, and this process is one of its workers
(`jobs` 2 forks one process). The chunks wait in one pipe that every worker reads (a pipe hands
each 4-byte record to exactly one reader), heaviest first, so whoever is free takes the next.
A forked worker writes each chunk's pickled result to a file of its own in memory (memfd) and
its place to a pipe, so it never waits for the parent to read; the parent reads them between
its own chunks. Nothing is pickled on the way out (the workers inherit the work), no thread
hands anything over, and no one waits for a worker's exit (which unmaps a copy of the
parent's pages); it was measured against `concurrent.futures` (docs/benchmarks.md). A fork
that fails (a process limit) leaves the work to fewer processes.

The run cache (auditor.pcd.runcache) is not shipped: each worker's serial path makes its own
for its chunk, and the sites a worker sends back carry none.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import struct
import sys
import tempfile
from collections.abc import Callable

from auditor.errors import UsageError

POOL_MIN_FILES = 16  # below this, starting workers costs more than it saves
MAX_WORKERS = 8
_CHUNKS_PER_WORKER = 2  # contiguous chunks: few (each is one bulk tokenizer batch), not one (balance)
_RECORD = struct.Struct("<I")  # a chunk's number in the task pipe
_FRAME = struct.Struct("<iQQ")  # a result's place: chunk number (-1: the work raised), offset, bytes
_exited: list[int] = []  # workers that were done but not yet reaped (reaped by the next pool)


def pool_size(files: int, jobs: int | None) -> int:
    """Worker processes for `files` inputs (1: no pool): `jobs` if given, else (on Linux) one
    per core once there are POOL_MIN_FILES files; never more than files, never without fork."""
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, not {jobs}")
    if os.environ.get("PCDLINT_DEBUG"):
        return 1  # an exception raised in one process keeps its traceback
    if not hasattr(os, "fork"):
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


def map_chunks(
    work: Callable[[list], object],
    items: list,
    workers: int,
    weights: list[float] | None = None,
    per_worker: int = _CHUNKS_PER_WORKER,
) -> list | None:
    """[work(chunk) for each contiguous chunk of items], computed by this process and
    `workers - 1` forked ones; None when a worker died (killed for memory, say): the caller then
    does the work itself. `weights`: each item's expected cost (chunks of about equal weight;
    default: equal); `per_worker`: chunks per worker (more: a shorter tail). An exception the
    work raises, here or in a worker, is raised here."""
    weights = weights or [1.0] * len(items)
    chunks = chunk_bounds(weights, workers * per_worker)
    # the heaviest chunks first (a worker that finishes early takes the next): a shorter tail
    order = sorted(range(len(chunks)), key=lambda i: -sum(weights[chunks[i][0] : chunks[i][1]]))
    _reap()
    previous = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one core each, this process included
    tasks_read, tasks_write = os.pipe()
    os.write(tasks_write, b"".join(_RECORD.pack(i) for i in order))  # (bytes: far under a pipe's buffer)
    os.close(tasks_write)
    forked: list[_Forked] = []
    results: dict[int, object] = {}
    try:
        for _ in range(min(workers, len(chunks)) - 1):
            try:
                forked.append(_fork(work, items, chunks, tasks_read))
            except OSError:  # no more processes to be had: fewer workers take the chunks
                break
        while record := os.read(tasks_read, _RECORD.size):  # this process's share
            (number,) = _RECORD.unpack(record)
            start, end = chunks[number]
            results[number] = work(items[start:end])
            for worker in forked:
                worker.collect(results)
        selector = selectors.DefaultSelector()
        for worker in forked:
            selector.register(worker.notices, selectors.EVENT_READ, worker)
        while selector.get_map():
            for key, _ in selector.select():
                if not key.data.collect(results):
                    selector.unregister(key.fd)
        selector.close()
        if len(results) < len(chunks):
            return None  # a worker died before it sent all it took
        return [results[i] for i in range(len(chunks))]  # in input order
    finally:
        os.close(tasks_read)
        for worker in forked:
            worker.close()  # (an interrupt or a raise: the others stop too)
        _exited.extend(worker.pid for worker in forked)
        _reap()
        if previous is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = previous


class _Forked:
    """One forked worker, seen from the parent: its pid, the pipe of its results' places and the
    in-memory file that holds them."""

    def __init__(self, pid: int, notices: int, results: int) -> None:
        self.pid, self.notices, self.results = pid, notices, results
        self.pending = bytearray()
        self.open = True
        os.set_blocking(notices, False)

    def collect(self, into: dict) -> bool:
        """Read the results it has announced so far into `into`, without waiting; False once
        it has closed its pipe (done, or dead)."""
        while self.open:
            try:
                data = os.read(self.notices, 1 << 16)
            except BlockingIOError:
                break
            if not data:
                self.open = False
                break
            self.pending.extend(data)
            while len(self.pending) >= _FRAME.size:
                number, offset, size = _FRAME.unpack_from(self.pending)
                del self.pending[: _FRAME.size]
                value = pickle.loads(os.pread(self.results, size, offset))
                if number < 0:
                    raise value
                into[number] = value
        return self.open

    def close(self) -> None:
        if self.open:
            _kill(self.pid)
            self.open = False
        for fd in (self.notices, self.results):
            try:
                os.close(fd)
            except OSError:
                pass


def _fork(work: Callable[[list], object], items: list, chunks: list[tuple[int, int]], tasks: int) -> _Forked:
    notices_read, notices_write = os.pipe()
    results = _memory_file()
    try:
        pid = os.fork()
    except OSError:
        for fd in (notices_read, notices_write, results):
            os.close(fd)
        raise
    if pid == 0:  # the worker: never returns
        os.close(notices_read)
        _worker(work, items, chunks, tasks, notices_write, results)
    os.close(notices_write)
    return _Forked(pid, notices_read, results)


def _memory_file() -> int:
    """A file descriptor of a new anonymous file (in memory where the system has memfd)."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("pcdlint-results", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as handle:  # (removed at once: the descriptor keeps it)
        return os.dup(handle.fileno())


def _worker(
    work: Callable[[list], object],
    items: list,
    chunks: list[tuple[int, int]],
    tasks: int,
    notices: int,
    results: int,
) -> None:
    """A forked worker: take chunk numbers from the task pipe until it is empty, append each
    result to the results file and announce its place, close the pipe and exit (no interpreter
    shutdown: the state is the parent's)."""
    code, offset = 0, 0

    def send(number: int, payload: bytes) -> None:
        nonlocal offset
        data = memoryview(payload)
        while data:
            data = data[os.pwrite(results, data, offset + len(payload) - len(data)) :]
        _write_all(notices, _FRAME.pack(number, offset, len(payload)))
        offset += len(payload)

    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent stops; a worker just ends
        while record := os.read(tasks, _RECORD.size):
            (number,) = _RECORD.unpack(record)
            start, end = chunks[number]
            send(number, pickle.dumps(work(items[start:end]), pickle.HIGHEST_PROTOCOL))
    except BaseException as error:  # sent to the parent, which raises it
        code = 1
        try:
            payload = pickle.dumps(error, pickle.HIGHEST_PROTOCOL)
        except Exception:
            payload = pickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))
        try:
            send(-1, payload)
        except OSError:
            pass
    finally:
        try:
            os.close(notices)
        finally:
            os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap() -> None:
    """Collect the exit status of the workers that have exited (a worker exits after its last
    result; nobody waits for that, which unmaps a copy of the parent's pages): the others are
    collected by the next pool, or go with this process."""
    for pid in list(_exited):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _exited.remove(pid)
