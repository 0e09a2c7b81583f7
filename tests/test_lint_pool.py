"""Many files are linted by a pool of worker processes; the output is the serial path's, byte
for byte, and every finding sits where main put it (tests/golden/positions_main.json).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from collections import Counter

import pytest

from auditor.errors import InputFileError
from auditor.linter.pool import POOL_MIN_FILES, pool_size
from support import CORPUS, FIXTURES, NO_CORPUS, REPO, corpus_files, run_cli, seed_cache

GOLDEN = json.loads((REPO / "tests" / "golden" / "positions_main.json").read_text(encoding="utf-8"))
CORPUS_JSON = [p for p in corpus_files() if p.suffix == ".json"]


def check(args: list[str], cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(cache)}
    result = subprocess.run(
        [sys.executable, "-m", "auditor", "check", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=REPO,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def check_in_process(args: list[str], cache):
    """The CLI in this process (click's runner): the pool forks from here as from `pcdlint`."""
    result = run_cli(
        "check", *args, cwd=REPO, env={"HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(seed_cache(cache))}
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def golden_name(path: str) -> str:
    prefix = f"{CORPUS}/"
    return "corpus/" + path[len(prefix) :] if path.startswith(prefix) else os.path.relpath(path, REPO)


@pytest.mark.slow
@pytest.mark.skipif(len(CORPUS_JSON) < POOL_MIN_FILES, reason=NO_CORPUS)
def test_the_corpus_through_the_pool_is_the_serial_output_and_mains_positions(tmp_path):
    files = [str(p) for p in CORPUS_JSON]
    serial = check(["-f", "json", "--no-cache", "-j", "1", *files], tmp_path / "c1")
    pooled = check(["-f", "json", "--no-cache", "-j", "2", *files], tmp_path / "c2")
    assert serial.returncode == pooled.returncode == 1
    assert pooled.stdout == serial.stdout
    assert pooled.stderr == serial.stderr
    findings = json.loads(pooled.stdout)["findings"]
    assert len(findings) > 400
    found: dict[str, Counter] = {}
    for f in findings:
        row = (
            f["code"],
            f["pointer"],
            f["tokenizer"],
            f["engine"],
            f["line"],
            f["column"],
            f["end_line"],
            f["end_column"],
        )
        found.setdefault(golden_name(f["path"]), Counter())[row] += 1
    for name, rows in GOLDEN["findings"].items():
        if not name.startswith("corpus/"):
            continue
        missing = Counter(tuple(r) for r in rows) - found.get(name, Counter())
        assert not missing, (name, list(missing)[:3])


def test_many_small_files_with_errors_and_suppressions_give_the_serial_output(tmp_path, monkeypatch):
    from auditor.linter import engine

    paths = []  # which pool path each pooled run took

    def spying(name, real):
        def spy(*args):
            paths.append(name)
            return real(*args)

        return spy

    for name in ("_merged_files", "_merged_findings"):
        monkeypatch.setattr(engine, name, spying(name, getattr(engine, name)))
    folder = tmp_path / "schemas"
    folder.mkdir()
    for i in range(POOL_MIN_FILES + 9):
        options = [f"opt{i}_{k}" for k in range(3)] + (["Yes", "Yesterday"] if i % 3 == 0 else [])
        schema = {"type": "object", "properties": {"f": {"type": "string", "enum": options}}}
        if i % 5 == 0:
            schema["properties"]["f"]["x-pcdlint-ignore"] = ["PCD001"]
        (folder / f"s{i:02d}.json").write_text(json.dumps(schema, indent=2))
    (folder / "broken.json").write_text('{"type": "object",')  # an input error, mid-list
    (folder / "other.yaml").write_text("just: text\n")  # no schema: listed
    (folder / "preset.yaml").write_bytes((FIXTURES / "schemas" / "customs_preset.yaml").read_bytes())
    # the first pooled run has no analysis cached (its workers parse and send the models back);
    # the later ones find every analysis cached (the parent reads them, workers send findings)
    for args in (["--show-info"], ["-f", "json"], ["-f", "sarif"], ["-f", "html"], ["--cost"]):
        serial = check_in_process([*args, "-j", "1", str(folder)], tmp_path / "c1")
        pooled = check_in_process([*args, "-j", "2", str(folder)], tmp_path / "c2")
        assert serial.returncode == pooled.returncode == 2  # the broken file
        assert "broken.json" in serial.stderr
        assert (pooled.stdout, pooled.stderr) == (serial.stdout, serial.stderr), args
    assert "PCD001" in serial.stdout or "PCD002" in serial.stdout  # there was something to report
    assert paths == ["_merged_files"] + ["_merged_findings"] * 4


def test_the_pool_starts_only_for_many_files():
    assert pool_size(POOL_MIN_FILES - 1, None) == 1
    assert pool_size(500, 1) == 1
    assert pool_size(3, 4) == 3  # asked for: never more workers than files
    if sys.platform.startswith("linux"):
        assert pool_size(POOL_MIN_FILES, None) == min(len(os.sched_getaffinity(0)), 8)


def test_an_input_error_survives_the_trip_back_from_a_worker():
    error = InputFileError("a.json", "invalid JSON: Expecting value", 3, 7)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.path, copy.line, copy.column) == (str(error), "a.json", 3, 7)


def test_chunks_come_back_in_order_and_a_dead_worker_hands_the_work_back():
    from auditor.linter.pool import map_chunks

    items = list(range(20))
    parts = map_chunks(list, items, 2)
    assert parts is not None and len(parts) >= 2 and [i for part in parts for i in part] == items
    parent = os.getpid()

    def dies_in_a_worker(chunk):
        if os.getpid() != parent:
            os._exit(1)  # as a worker killed for memory would
        time.sleep(0.5)  # (this process is a worker too: the forked one takes a chunk meanwhile)
        return sum(chunk)

    assert map_chunks(dies_in_a_worker, items, 2) is None


def test_an_exception_in_a_worker_is_raised_in_the_caller():
    from auditor.linter.pool import map_chunks

    parent = os.getpid()

    def fails_in_a_worker(chunk):
        if os.getpid() != parent:
            raise LookupError(f"no such thing: {chunk[0]}")
        time.sleep(0.5)
        return chunk

    with pytest.raises(LookupError, match="no such thing"):
        map_chunks(fails_in_a_worker, list(range(8)), 2)


def test_the_caller_is_one_of_the_workers_and_every_chunk_is_done_once(tmp_path):
    """Whatever the scheduler favours: a forked worker holds its chunk until the caller has done
    one (a marker file), so the two forked workers can hold at most two of the twelve chunks
    and the caller must take one of the others; were it no worker, they would wait out their
    time and the caller's pid would be missing."""
    from auditor.linter.pool import map_chunks

    caller, marker = os.getpid(), tmp_path / "the caller did a chunk"

    def who(chunk):
        if os.getpid() == caller:
            marker.touch()
        else:
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
        return [(os.getpid(), i) for i in chunk]

    parts = map_chunks(who, list(range(40)), 3, per_worker=4)
    assert parts is not None
    done = [i for part in parts for _, i in part]
    assert done == list(range(40))  # each once, in input order
    pids = {pid for part in parts for pid, _ in part}
    assert caller in pids and len(pids) <= 3  # the caller and at most two forked workers


def test_a_run_whose_worker_dies_is_linted_in_one_process(write_schema, qwen, monkeypatch):
    from auditor.linter import engine

    paths = [
        str(write_schema({"enum": [f"a{i}", f"b{i}", "Yes", "Yesterday"]}, f"s{i:02d}.json"))
        for i in range(POOL_MIN_FILES)
    ]
    serial = engine.lint(paths, [qwen], engine.LintOptions(jobs=1))
    parent, lint_model, lint_models = os.getpid(), engine.lint_model, engine.lint_models
    linted_here: list[int] = []  # files per lint_models call in this process

    def dies_in_a_worker(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(1)
        time.sleep(0.05)  # (this process is a worker too: the forked one takes a chunk meanwhile)
        return lint_model(*args, **kwargs)

    def counted(models, *args, **kwargs):
        models = list(models)
        if os.getpid() == parent:
            linted_here.append(len(models))
        return lint_models(models, *args, **kwargs)

    monkeypatch.setattr(engine, "lint_model", dies_in_a_worker)
    monkeypatch.setattr(engine, "lint_models", counted)
    fallback = engine.lint(paths, [qwen], engine.LintOptions(jobs=2))
    assert linted_here[-1] == POOL_MIN_FILES  # the pool's chunks, then every file again here
    assert [f.to_dict() for f in fallback.findings] == [f.to_dict() for f in serial.findings]
    assert fallback.cost == serial.cost and len(fallback.findings) >= POOL_MIN_FILES


def test_a_fork_that_fails_leaves_the_chunks_to_fewer_processes(monkeypatch):
    from auditor.linter import pool

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")  # as at a process limit

    monkeypatch.setattr(pool.os, "fork", no_fork)
    parts = pool.map_chunks(lambda chunk: [i * 2 for i in chunk], list(range(30)), 4)
    assert parts is not None and [i for part in parts for i in part] == [i * 2 for i in range(30)]


@pytest.mark.parametrize("odd_float", [False, True], ids=["plain", "odd-float"])
def test_a_workers_finding_data_crosses_as_json_and_reads_back_as_made(write_schema, qwen, odd_float):
    """A worker's findings' data cross to the parent as their JSON bytes (Finding.pack_data),
    which the JSON writer puts in its document as they are: the document is the serial run's,
    byte for byte, and data read back equals the data made. A float orjson writes otherwise
    than json.dumps (1e-05) keeps its finding's data as objects, and the whole document is
    then written from objects, the others' data read back from their bytes."""
    from auditor.linter import engine
    from auditor.reporting import json_format

    paths = [
        str(write_schema({"enum": [f"a{i}", f"b{i}", "Yes", "Yesterday"]}, f"s{i:02d}.json"))
        for i in range(POOL_MIN_FILES)
    ]
    if odd_float:
        paths.append(str(write_schema({"enum": [1e-05, 1.5e-05, 2e-05]}, "floats.json")))
    serial = engine.lint(paths, [qwen], engine.LintOptions(jobs=1))
    pooled = engine.lint(paths, [qwen], engine.LintOptions(jobs=2))
    packed = [f for f in pooled.findings if f.data_fragment() is not None]
    assert len(packed) >= POOL_MIN_FILES
    document = json_format.render_bytes(pooled)
    assert document == json_format.render_bytes(serial)
    assert json_format.render(pooled) == json_format.render(serial) == document.decode()
    assert ('"1e-05"' in document.decode() or "1e-05" in document.decode()) == odd_float
    assert [f.data for f in pooled.findings] == [f.data for f in serial.findings]
    assert all(f.data_fragment() is None for f in packed)  # read back: the objects count now
