"""eval at scale against the real local llm2jev server (issue 48): labeled data read as a stream
(a million rows through ``--limit``, a 40 MB row as one failed row), and sharded runs whose merge
equals the unsharded report exactly.

The rows are fixtures/served/ticket_triage.jsonl (64 support tickets), test data for the eval
path, not a benchmark of any model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import FIXTURES, REPO

pytestmark = [pytest.mark.model, pytest.mark.slow]

REQUEST = str(FIXTURES / "served" / "ticket_triage.json")
ROWS = FIXTURES / "served" / "ticket_triage.jsonl"


def run(*args: str, timeout: int = 900) -> tuple[int, str, str, int]:
    """(exit status, stdout, stderr, peak RSS in KiB) of `pcdlint ARGS` in a fresh process."""
    code = (
        "import resource, sys; from auditor.cli.main import main; sys.argv = ['pcdlint', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as exit:\n"
        "    sys.stdout.flush()\n"
        "    sys.stderr.write(f'\\nPEAK {exit.code} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
        env={**os.environ, "PCDLINT_DEBUG": ""},
    )
    stderr, _, tail = done.stderr.rpartition("\nPEAK ")
    status, peak = tail.split()
    return int(status), done.stdout, stderr, int(peak)


def served(url: str, data: Path | str, *extra: str) -> list[str]:
    return [
        "eval",
        REQUEST,
        "--data",
        str(data),
        "--backend",
        "systemone",
        "--base-url",
        url,
        "--quiet",
        *extra,
    ]


def test_a_million_rows_stream_through_limit(served_llm2jev, tmp_path):
    """A 1,000,000-row file (made here, deleted after) is read row by row: ``--limit 3`` asks the
    server 3 times and the process grows by less than 40 MB over the same run on a 3-row file."""
    rows = [json.loads(line) for line in ROWS.read_text(encoding="utf-8").splitlines()]
    big, small = tmp_path / "million.jsonl", tmp_path / "three.jsonl"
    try:
        with big.open("w", encoding="utf-8") as handle:
            for index in range(1_000_000):
                row = rows[index % len(rows)]
                handle.write(json.dumps({**row, "id": f"r{index}"}) + "\n")
        small.write_text(
            "".join(json.dumps({**rows[i], "id": f"r{i}"}) + "\n" for i in range(3)), encoding="utf-8"
        )
        assert big.stat().st_size > 100_000_000
        status, out, err, big_kb = run(
            *served(served_llm2jev, big, "--limit", "3", "--no-cache", "-f", "json")
        )
        assert status == 0, err
        report = json.loads(out)
        assert report["rows"] == 3 and report["server"]["requests"] == 3
        assert report["data_file"]["bytes"] == big.stat().st_size and len(report["data_file"]["sha256"]) == 64
        status, _out, err, small_kb = run(
            *served(served_llm2jev, small, "--limit", "3", "--no-cache", "-f", "json")
        )
        assert status == 0, err
        assert big_kb - small_kb < 40_000, (small_kb, big_kb)
    finally:
        big.unlink(missing_ok=True)


def test_a_40_mb_row_is_one_failed_row_not_the_run(served_llm2jev, tmp_path):
    first = ROWS.read_text(encoding="utf-8").splitlines()[0]
    huge = json.dumps({"id": "huge", "state": "x" * 40_000_000, "labels": {"team": "billing"}})
    only = tmp_path / "one-row.jsonl"
    only.write_text(huge + "\n", encoding="utf-8")
    status, out, err, _kb = run(*served(served_llm2jev, only, "--no-cache", "-f", "json"))
    assert status == 1 and "Traceback" not in err, err
    report = json.loads(out)
    [failed] = report["failed"]
    assert failed["line"] == 1 and "over the limit of 16,777,216 (--max-row-bytes)" in failed["error"]
    assert report["rows"] == 1 and report["server"]["requests"] == 0
    # with a row after it: that row is answered, the big one listed
    both = tmp_path / "two-rows.jsonl"
    both.write_text(huge + "\n" + first + "\n", encoding="utf-8")
    status, out, err, _kb = run(*served(served_llm2jev, both, "--no-cache", "-f", "json"))
    assert status == 1, err
    report = json.loads(out)
    assert [f["line"] for f in report["failed"]] == [1] and report["server"]["requests"] == 1
    assert report["questions"][0]["labeled"] == 1 and report["predictions"][1]["answers"] is not None


def test_four_shards_merge_into_the_unsharded_report(served_llm2jev, tmp_path):
    """Each shard asks the server for its own rows (filling one cache); the unsharded run then
    reads the same answers from that cache; the merge of the four shards equals it exactly."""
    cache = tmp_path / "cache"
    shards = []
    asked = 0
    for index in range(1, 5):
        target = tmp_path / f"shard{index}.json"
        status, _out, err, _kb = run(
            *served(
                served_llm2jev, ROWS, "--cache-dir", str(cache), "--concurrency", "4", "--shard", f"{index}/4"
            ),
            "-f",
            "json",
            "-o",
            str(target),
        )
        assert status == 0, err
        shard = json.loads(target.read_text(encoding="utf-8"))
        assert shard["shard"]["index"] == index and shard["shard"]["count"] == 4
        assert shard["options"]["seed"] == 0 and shard["options"]["holdout"] == 0.3
        assert len(shard["data_file"]["sha256"]) == 64
        asked += shard["server"]["requests"]
        shards.append(target)
    assert asked == 64  # every row in exactly one shard
    whole_fit, merged_fit = tmp_path / "whole-calibration.json", tmp_path / "merged-calibration.json"
    status, out, err, _kb = run(
        *served(served_llm2jev, ROWS, "--cache-dir", str(cache), "-f", "json"),
        "--write-calibration",
        str(whole_fit),
    )
    assert status == 0, err
    whole = json.loads(out)
    assert whole["cache"]["hits"] == 64
    status, out, err, _kb = run(
        "eval-merge", *map(str, reversed(shards)), "-f", "json", "--write-calibration", str(merged_fit)
    )
    assert status == 0, err
    merged = json.loads(out)
    # the temperature fitted on the whole set's training rows, as the unsharded run fits it
    assert json.loads(merged_fit.read_bytes()) == json.loads(whole_fit.read_bytes())
    assert merged["questions"] == whole["questions"]
    assert merged["predictions"] == whole["predictions"] and merged["rows"] == whole["rows"] == 64
    assert merged["failed"] == whole["failed"] == []
    team = merged["questions"][0]["methods"]["served"]
    assert team["n"] == 64 and sum(map(sum, team["confusion"])) == 64
    assert team["calibration"]["train_rows"] + team["calibration"]["heldout_rows"] == 64
    # a shard missing, or given twice: one line, exit 2
    status, _out, err, _kb = run("eval-merge", *map(str, shards[:3]))
    assert status == 2 and err.strip() == "pcdlint: error: missing shard 4 of 4", err
    status, _out, err, _kb = run("eval-merge", *map(str, shards), str(shards[1]))
    assert status == 2 and "shard 2/4 given twice" in err and err.count("\n") == 1, err
