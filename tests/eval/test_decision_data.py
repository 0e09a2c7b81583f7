"""The decision eval's labeled data (issues 48 and 49): read as a stream, checked row by row
before any request is sent; every bad row one line and exit 2; shards chosen by row id; shard
reports refused by eval-merge when they do not belong together. No server is needed: each case
fails (or is checked) before the first request, and the merge cases are the merge's own logic
on report dicts."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from auditor.errors import UsageError
from auditor.eval.decisions import (
    DecisionSelection,
    failed_lines,
    in_shard,
    load_decision_rows,
    selected_rows,
)
from auditor.eval.shards import check_shards
from auditor.eval.spill import Spill
from auditor.eval.stream import DataStream
from auditor.eval.tally import QuestionTally, held_out
from auditor.reporting.json_stream import report_chunks
from support import FIXTURES
from support import one_line_error as _one_line_error
from support import pcdlint_process as pcdlint

REQUEST = FIXTURES / "served" / "ticket_triage.json"
BODY = {
    "state": "",
    "questions": {
        "team": {"type": "choice", "criteria": {"billing": None, "shipping": None, "technical": None}},
        "urgent": {"type": "noul"},
    },
}
UNREACHABLE = "http://127.0.0.1:9"  # nothing listens: a case that sent a request would fail otherwise


def one_line_error(done, message: str) -> None:
    _one_line_error(done, message, max_chars=600)


def decision_eval(data, *extra) -> subprocess.CompletedProcess:
    return pcdlint(
        "eval",
        REQUEST,
        "--data",
        data,
        "--backend",
        "systemone",
        "--base-url",
        UNREACHABLE,
        "--retries",
        "0",
        *extra,
    )


def line(state="x", **labels) -> str:
    return json.dumps({"state": state, "labels": labels or {"team": "billing"}}, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_fifo_or_device_is_refused_without_hanging(tmp_path, special):
    target = "/dev/zero"
    if special == "fifo":
        target = tmp_path / "rows.jsonl"
        os.mkfifo(target)
    one_line_error(decision_eval(target), "not a regular file")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (line(state="[" * 10_000 + "]" * 10_000).replace('"[', "[").replace(']"', "]"), "nested"),
        ('{"state": "x", "labels": {"team": ' + "9" * 5000 + "}}\n", "invalid JSON value"),
        (line(team="b" * 5_000_000), "for question 'team' is not one of its answers"),
        ('{"state": "\\udc00", "labels": {"team": "billing"}}\n', "lone surrogate"),
        (line() + "{not json\n", "rows.jsonl:2: invalid JSON"),
        (line(nope="billing"), "label for unknown question 'nope'"),
    ],
    ids=["nested-10000", "5000-digits", "5MB-label", "surrogate", "invalid-json", "unknown-question"],
)
def test_bad_rows_are_one_line_before_any_request(tmp_path, text, message):
    data = tmp_path / "rows.jsonl"
    data.write_text(text, encoding="utf-8")
    one_line_error(decision_eval(data), message)


def test_line_separators_inside_a_state_are_text(tmp_path):
    """U+2028, U+2029, NEL and form feed inside a JSON string do not end a JSONL line."""
    state = "first\u2028second\u2029third\x85fourth\x0cfifth"
    data = tmp_path / "rows.jsonl"
    data.write_text(line(state) + line("plain\r"), encoding="utf-8")
    first, second = load_decision_rows(data, BODY)
    assert (first.state, first.number, second.number) == (state, 1, 2)
    assert first.labels == {"team": 0}


def test_a_row_over_the_row_limit_is_a_failed_row(tmp_path):
    data = tmp_path / "rows.jsonl"
    long = line("b" * 5000)
    data.write_text(line("a") + long + line("c"), encoding="utf-8")
    a, big, c = load_decision_rows(data, BODY, max_row_bytes=1000)
    assert a.state == "a" and c.state == "c" and c.number == 3
    size = f"{len(long) - 1:,}"  # the row without its newline
    assert big.error == f"row is {size} bytes, over the limit of 1,000 (--max-row-bytes); not read"


def test_shard_needs_a_json_report_and_a_valid_i_of_n(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(line(), encoding="utf-8")
    one_line_error(decision_eval(data, "--shard", "1/2"), "--shard writes a JSON report")
    fit = tmp_path / "fit.json"
    done = decision_eval(data, "--shard", "1/2", "-f", "json", "--write-calibration", str(fit))
    one_line_error(done, "--write-calibration with --shard would fit one shard's rows")
    assert not fit.exists()
    for bad in ("0/2", "3/2", "1/0", "x", "1/2/3"):
        done = decision_eval(data, "--shard", bad, "-f", "json")
        assert done.returncode == 2 and "--shard" in done.stderr, (bad, done.stderr)


def test_every_row_is_in_exactly_one_shard_and_the_split_is_by_id():
    ids = [f"row-{i}" for i in range(2000)]
    owners = [[k for k in range(1, 5) if in_shard(i, k, 4)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    sizes = [sum(o == [k] for o in owners) for k in range(1, 5)]
    assert all(400 < s < 600 for s in sizes), sizes  # SHA-256 spreads them
    held = [held_out(i, 0.3, 0) for i in ids]
    assert 500 < sum(held) < 700 and held == [held_out(i, 0.3, 0) for i in ids]
    assert held != [held_out(i, 0.3, 1) for i in ids]  # the seed moves the split


def test_selected_rows_take_limit_then_shard(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(json.dumps({"id": f"r{i}", "state": "s", "labels": {}}) + "\n" for i in range(50))
    )
    stream = DataStream(data)
    chosen = [
        [r.id for r in selected_rows(stream, BODY, DecisionSelection(limit=20, shard=(k, 3)))]
        for k in (1, 2, 3)
    ]
    assert sorted(i for ids in chosen for i in ids) == sorted(f"r{i}" for i in range(20))


def test_spilled_rows_write_valid_json_with_hostile_text():
    spill = Spill()
    hostile = ["\u2028", '"\\', "\x1b[31m", "\udc80", "\x00"]
    for index, text in enumerate(hostile):
        spill.append({"id": text, "line": index, "x": float("nan") if index == 2 else 1.5})
    report = {"version": 1, "notes": ["\ue000pcdlint-spill-0\ue000"], "predictions": spill}
    text = b"".join(report_chunks(report)).decode("utf-8")
    back = json.loads(text)
    assert [p["id"] for p in back["predictions"]][:3] == hostile[:3] and back["predictions"][2]["x"] == "NaN"
    assert back["notes"] == report["notes"] and len(spill) == 5


def _shard(index: int, count: int = 4, **changes) -> dict:
    report = {
        "shard": {"index": index, "count": count, "request_sha256": "r"},
        "backend": {"endpoint": "http://h/v1/systemone", "model": None},
        "data_file": {"sha256": "d", "limit": None},
        "options": {"seed": 0, "holdout": 0.3, "perturb": [], "orders": None},
    }
    for key, value in changes.items():
        block, field = key.split("__")
        report[block] = {**report[block], field: value}
    return report


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"shard__request_sha256": "other"}, "another request"),
        ({"backend__endpoint": "http://other/v1/systemone"}, "another endpoint"),
        ({"backend__model": "m2"}, "another model"),
        ({"data_file__sha256": "e"}, "another data"),
        ({"data_file__limit": 10}, "another --limit"),
        ({"options__seed": 1}, "another --seed"),
        ({"options__holdout": 0.5}, "another --holdout"),
        ({"shard__count": 5}, "another N"),
    ],
)
def test_merge_refuses_shards_of_another_run(change, message):
    named = [(f"s{i}.json", _shard(i)) for i in (1, 2, 3)] + [("s4.json", _shard(4, **change))]
    with pytest.raises(UsageError, match=message):
        check_shards(named)


def test_merge_refuses_missing_and_duplicate_shards():
    check_shards([(f"s{i}.json", _shard(i)) for i in (4, 2, 3, 1)])
    with pytest.raises(UsageError, match="missing shards 2, 4 of 4"):
        check_shards([(f"s{i}.json", _shard(i)) for i in (1, 3)])
    with pytest.raises(UsageError, match=r"shard 3/4 given twice \(s3.json and again.json\)"):
        check_shards([(f"s{i}.json", _shard(i)) for i in (1, 2, 3, 4)] + [("again.json", _shard(3))])


@pytest.mark.parametrize(
    "rows",
    [
        {"lines": [1], "gold": [5], "held": [True], "probabilities": [[0.5, 0.5]]},
        {"lines": [1], "gold": [0], "held": [1], "probabilities": [[0.5, 0.5]]},
        {"lines": [1], "gold": [0], "held": [True], "probabilities": [[0.5, float("nan")]]},
        {"lines": [1, 2], "gold": [0], "held": [True], "probabilities": [[0.5, 0.5]]},
        [],
    ],
)
def test_a_shard_tally_that_is_not_rows_is_refused(rows):
    with pytest.raises(ValueError, match="question 'q'"):
        QuestionTally.from_dict("q", "noul", ["true", "false"], rows, [])


def test_failed_rows_are_grouped_by_their_error_for_the_reader():
    """Rows failing with the same line (a server refusing them alike, a deadline) are said once,
    the most frequent error first, with their first three rows and a count; a lone failure keeps
    its own line; past five errors the rest are counted."""
    refused = "refused (400): state too long"
    failed = [{"id": f"r{i}", "line": i, "variant": "original", "error": refused} for i in range(1, 8)]
    failed.insert(2, {"id": "big", "line": 99, "variant": "original", "error": "row is 5,044 bytes, over"})
    assert failed_lines(failed) == [
        "failed rows (8; not in the metrics; the JSON report lists each):",
        f"  7 rows: {refused}",
        "    r1 (line 1, original), r2 (line 2, original), r3 (line 3, original) and 4 more",
        "  big (line 99, original): row is 5,044 bytes, over",
    ]
    many = [{"id": str(i), "line": i, "variant": "order1", "error": f"error {i % 7}"} for i in range(14)]
    lines = failed_lines(many)
    assert lines[1] == "  2 rows: error 0" and lines[2] == "    0 (line 0, order1), 7 (line 7, order1)"
    assert lines[-1] == "  and 4 row(s) with 2 other error(s)" and len(lines) == 1 + 5 * 2 + 1


def test_a_server_that_answers_no_request_stops_the_run_in_one_line(tmp_path):
    """Nothing listens at the URL: rather than retry every row of the file and list each as
    failed, the run stops once as many requests as are in flight (at least 4) found no server
    before any answer came: exit 2, one line naming the URL and the cause."""
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(line(f"ticket {i}") for i in range(40)), encoding="utf-8")
    done = decision_eval(data, "--no-cache", "--concurrency", "2")
    one_line_error(done, "no answer from the server for the first 4 requests, so the run stopped")
    assert "cannot reach the server after 1 tries" in done.stderr and UNREACHABLE in done.stderr
