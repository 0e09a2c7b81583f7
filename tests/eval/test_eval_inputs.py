"""`pcdlint eval` hardening (issue 36): the labeled data is read like any input of `check`
(regular file, size, depth, big integers), JSONL by JSON's own line rules, CSV with long cells
and without duplicate columns, long values cut in messages; output conflicts refused before
anything runs; JSON reports and calibration files always valid JSON; a damaged score-cache line
skipped with a note."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.errors import UsageError
from auditor.eval import LabeledData, load_fields, load_rows
from auditor.eval.cache import ScoreCache
from support import REPO, one_line_error
from support import pcdlint_process as pcdlint

SCHEMA = REPO / "fixtures" / "eval" / "support_triage_eval.json"
DATA = REPO / "fixtures" / "eval" / "support_triage.jsonl"
LABELS = {"assigned_tier": "TIER_1_GENERAL", "sentiment": "negative"}


def row(context: str, **labels) -> str:
    return json.dumps({"context": context, "labels": labels or LABELS}, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_device_or_fifo_as_data_is_refused_without_hanging(tmp_path, special):
    target = "/dev/zero"
    if special == "fifo":
        target = tmp_path / "rows.jsonl"
        os.mkfifo(target)
    done = pcdlint("eval", SCHEMA, "--data", target, timeout=60)
    one_line_error(done, "not a regular file")


def test_data_has_no_file_limit_and_a_row_over_the_row_limit_is_one_failed_row(tmp_path):
    """A 40 MB row is not read (its bytes are dropped as they stream past) and comes back as one
    row with its error; the rows around it are read. Memory: the row is never held whole."""
    fields = load_fields(SCHEMA)
    data = tmp_path / "rows.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        handle.write(row("before"))
        handle.write(row("x" * 40_000_000))
        handle.write(row("after\u2028line"))
    assert data.stat().st_size > 40_000_000
    before, big, after = load_rows(data, fields)
    assert (before.context, before.error) == ("before", None)
    assert big.error is not None and "over the limit of 16,777,216 (--max-row-bytes)" in big.error
    assert big.number == 2 and big.labels == {} and big.context == ""
    assert after.context == "after\u2028line" and after.number == 3
    # the limit is the option's: a lower one fails the short rows too
    assert all(r.error for r in load_rows(data, fields, max_row_bytes=10))


def test_csv_record_over_the_row_limit_spans_lines_and_the_next_record_is_read(tmp_path):
    fields = load_fields(SCHEMA)
    data = tmp_path / "rows.csv"
    long_cell = "line\n" * 5000  # a quoted cell over many lines, 25 KB
    data.write_text(
        f'context,sentiment\n"{long_cell}",negative\n"quoted ""x""\nnext",positive\nplain,\n',
        encoding="utf-8",
    )
    big, quoted, plain = load_rows(data, fields, max_row_bytes=10_000)
    assert big.error is not None and big.number == 2
    assert (
        quoted.context == 'quoted "x"\nnext' and quoted.labels == {"sentiment": 2} and quoted.number == 5003
    )
    assert plain.context == "plain" and plain.labels == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"context": "x", "labels": {"sentiment": ' + "[" * 5000 + "]" * 5000 + "}}\n", "nested"),
        (
            '{"context": "x", "labels": {"sentiment": ' + "[" * 500 + "]" * 500 + "}}\n",
            "for field 'sentiment' is not one of its options",
        ),
        ('{"context": "x", "labels": {"sentiment": ' + "9" * 5000 + "}}\n", "invalid JSON value"),
        ('{"context": "\\ud800", "labels": {"sentiment": "negative"}}\n', "lone surrogate U+D800"),
    ],
)
def test_hostile_jsonl_values_are_one_line(tmp_path, text, message):
    data = tmp_path / "rows.jsonl"
    data.write_text(text, encoding="utf-8")
    one_line_error(pcdlint("eval", SCHEMA, "--data", data), message)


def test_a_huge_label_is_cut_in_the_message(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(row("x", sentiment="z" * 5_000_000), encoding="utf-8")
    done = pcdlint("eval", SCHEMA, "--data", data)
    one_line_error(done, "for field 'sentiment' is not one of its options")
    assert len(done.stderr) < 600


def test_jsonl_lines_end_at_newline_only(tmp_path):
    """U+2028, U+2029, NEL, form feed and vertical tab inside a context are text, not line ends."""
    fields = load_fields(SCHEMA)
    context = "first\u2028second\u2029third\x85fourth\x0cfifth\x0bsixth"
    path = tmp_path / "rows.jsonl"
    path.write_text(row(context) + row("plain\r"), encoding="utf-8")
    rows = load_rows(path, fields)
    assert [r.context for r in rows] == [context, "plain\r"]
    assert rows[0].labels and rows[0].number == 1 and rows[1].number == 2


def test_csv_cells_as_long_as_a_context_and_duplicate_columns_refused(tmp_path):
    fields = load_fields(SCHEMA)
    long_context = "word " * 60_000  # 300 KB: over the csv module's default 128 KiB field limit
    data = tmp_path / "rows.csv"
    data.write_text(f'context,sentiment\n"{long_context}",negative\n', encoding="utf-8")
    [only] = load_rows(data, fields)
    assert only.context == long_context
    data.write_text("context,sentiment,sentiment\nx,negative,positive\n", encoding="utf-8")
    one_line_error(pcdlint("eval", SCHEMA, "--data", data), "column 'sentiment' appears more than once")


@pytest.mark.parametrize(
    "outputs",
    [
        ["--output-json", "same.json", "--write-calibration", "same.json"],
        ["-o", "same.json", "--output-html", "same.json"],
    ],
)
def test_two_outputs_on_one_path_refused_before_the_run(tmp_path, outputs):
    args = [a if not a.endswith(".json") else tmp_path / a for a in outputs]
    done = pcdlint("eval", SCHEMA, "--data", DATA, "--model", tmp_path / "no-model", *args)
    one_line_error(done, "same file as")  # refused before the (missing) model is looked at
    assert not (tmp_path / "same.json").exists()


def test_output_equal_to_the_data_refused_before_the_run(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(row("x"), encoding="utf-8")
    before = data.read_bytes()
    done = pcdlint(
        "eval", SCHEMA, "--data", data, "--model", tmp_path / "no-model", "--write-calibration", data
    )
    one_line_error(done, "--write-calibration")
    assert "refusing to overwrite an input file" in done.stderr and data.read_bytes() == before


def test_damaged_cache_lines_are_skipped_and_counted(tmp_path):
    shape = [4, 2]
    good = {
        "first_token": [-1.0, -2.0, -3.0, -4.0],
        "full_sequence": [-1.0, -2.0, -3.0, -4.0],
        "constrained": [-1.0, -2.0, -3.0, -4.0],
        "constrained_pick": 0,
        "letter": None,
    }
    small = {**good, "first_token": [-1.0, -2.0], "full_sequence": [-1.0, -2.0], "constrained": [-1.0, -2.0]}
    cache = ScoreCache(tmp_path, {"m": 1}, shape=shape)
    cache.put("original", "a" * 64, [good, small])
    lines = [
        json.dumps(
            {"variant": "original", "row": "b" * 64, "scores": [good, {**small, "constrained_pick": 7}]}
        ),
        json.dumps(
            {"variant": "original", "row": "c" * 64, "scores": [good, {**small, "first_token": ["x", 1]}]}
        ),
        json.dumps({"variant": "original", "row": "d" * 64, "scores": "not a list"}),
        json.dumps({"variant": "../x", "row": "e" * 64, "scores": [good, small]}),
        '{"variant": "original", "row": "' + "f" * 64 + '", "scores": [' + "[" * 100_000,
        "\udcff".encode("utf-8", "surrogateescape").decode("latin-1"),
        json.dumps(
            {"variant": "original", "row": "1" * 64, "scores": [good, {**small, "letter": [math.nan, 0]}]}
        ),
    ]
    with cache.path.open("ab") as handle:
        handle.write(b"\xff\xfe garbage\n" + "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n")
    again = ScoreCache(tmp_path, {"m": 1}, shape=shape)
    assert list(again.entries) == [("original", "a" * 64)]
    assert again.skipped == len(lines) + 1
    assert "damaged lines skipped" in again.note()


@pytest.mark.model
def test_reports_stay_valid_json_with_hostile_text_and_a_damaged_cache(eval_model, tmp_path):
    hostile = 'Ticket \u2028 "quoted" \\ </script><!-- \x00\x1b[2J \U0001f600 NaN Infinity'
    data = tmp_path / "rows.jsonl"
    data.write_text(row(hostile) + row("second ticket", sentiment="positive"), encoding="utf-8")
    cache = tmp_path / "cache"
    args = [
        "eval",
        str(SCHEMA),
        "--data",
        str(data),
        "--no-letters",
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--cache-dir",
        str(cache),
        "-f",
        "json",
        "-o",
        str(tmp_path / "r.json"),
        "--write-calibration",
        str(tmp_path / "calib.json"),
    ]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    [entry] = list(cache.glob("*.jsonl"))
    entry.write_bytes(b'{"variant": "original", "row": 5}\n\xff\xfe\n' + entry.read_bytes())
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output

    def refuse(constant):
        raise AssertionError(f"non-standard JSON constant {constant}")

    report = json.loads((tmp_path / "r.json").read_bytes(), parse_constant=refuse)
    json.loads((tmp_path / "calib.json").read_bytes(), parse_constant=refuse)
    assert report["rows"] == 2 and report["cache"]["hits"] == 2
    assert any("2 damaged lines skipped" in note for note in report["notes"]), report["notes"]


def _peak_kb(data) -> tuple[str, int]:
    """(exit status, peak RSS in KiB) of `pcdlint eval` on `data`, in a fresh process."""
    code = (
        "import resource, sys; from auditor.cli.main import main; sys.argv = ['pcdlint', 'eval', "
        f"{str(SCHEMA)!r}, '--data', {str(data)!r}]\n"
        "try:\n    main()\nexcept SystemExit as exit:\n"
        "    print(exit.code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    status, peak_kb = done.stdout.split()
    return status, int(peak_kb)


def test_memory_bound_of_a_refused_huge_label(tmp_path):
    """A 5 MB label is refused in one line, the process growing by less than 100 MB over the
    same refusal of a short label (the label is never copied into a message or a dump)."""
    small, huge = tmp_path / "small.jsonl", tmp_path / "huge.jsonl"
    small.write_text(row("x", sentiment="y"), encoding="utf-8")
    huge.write_text(row("x", sentiment="y" * 5_000_000), encoding="utf-8")
    (small_status, small_kb), (huge_status, huge_kb) = _peak_kb(small), _peak_kb(huge)
    assert small_status == huge_status == "2"
    assert huge_kb - small_kb < 100_000, (small_kb, huge_kb)


def test_every_row_is_checked_before_the_run_and_a_changed_file_refused(tmp_path):
    """`LabeledData` reads the whole file once when made (a bad last row is the error, before
    any row is scored), holds no row, reads it again per iteration, and tells a file that
    changed after its check."""
    fields = load_fields(SCHEMA)
    data = tmp_path / "rows.jsonl"
    data.write_text(row("first") + row("second") + '{"context": "x", "labels": {"sentiment": "angry"}}\n')
    with pytest.raises(UsageError, match=r"rows.jsonl:3: label \"angry\" for field 'sentiment'"):
        LabeledData(data, fields)
    data.write_text(row("first") + row("second") + row("third"))
    rows = LabeledData(data, fields, limit=2)
    assert len(rows) == 2 and not hasattr(rows, "rows")
    assert [r.context for r in rows] == [r.context for r in rows] == ["first", "second"]
    rows.check_unchanged()
    with data.open("a", encoding="utf-8") as handle:
        handle.write(row("fourth"))
    with pytest.raises(
        UsageError, match=r"rows\.jsonl: the file changed during the run; its report is not written"
    ):
        rows.check_unchanged()
