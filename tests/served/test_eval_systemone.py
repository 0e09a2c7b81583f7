"""eval --backend systemone against the real local llm2jev server (SmolLM2-135M, float32).

The labeled rows (fixtures/served/ticket_triage.jsonl, 64 support tickets) are test data for
the eval path, not a benchmark of any model. A small proxy in front of the real server injects
429 (with Retry-After) and 500 answers, and a row that keeps failing, to test retries and
failure reporting; the API key is grepped for in every output and cache file.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import FIXTURES as ALL_FIXTURES
from support import row_requests

pytestmark = [pytest.mark.model, pytest.mark.slow]

REQUEST = str(ALL_FIXTURES / "served" / "ticket_triage.json")
ROWS = str(ALL_FIXTURES / "served" / "ticket_triage.jsonl")
KEY = "sk-pcdlint-test-7c1f0e55d2a94b0c"  # a made-up key; it must appear in no output or file


def _eval(url: str, cache: Path, *extra: str, env: dict | None = None):
    args = [
        "eval",
        REQUEST,
        "--data",
        ROWS,
        "--backend",
        "systemone",
        "--base-url",
        url,
        "--cache-dir",
        str(cache),
        "--quiet",
        *extra,
    ]
    return CliRunner(env=env).invoke(cli, args, catch_exceptions=False)


@pytest.fixture(scope="module")
def resumed(served_llm2jev, tmp_path_factory):
    """An eval interrupted (SIGINT) after a few rows, then run again to the end."""
    cache = tmp_path_factory.mktemp("eval-cache")
    command = [
        sys.executable,
        "-m",
        "auditor",
        "eval",
        REQUEST,
        "--data",
        ROWS,
        "--backend",
        "systemone",
        "--base-url",
        served_llm2jev,
        "--cache-dir",
        str(cache),
        "--concurrency",
        "2",
        "--quiet",
    ]
    # SIGINT as a terminal delivers it: a child of a shell's background job would inherit it ignored
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 600
    cached = 0
    while time.monotonic() < deadline and process.poll() is None:
        files = list(cache.glob("*.jsonl"))
        cached = len(files[0].read_text().splitlines()) if files else 0
        if cached >= 4:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=600)
    interrupted = {"returncode": process.returncode, "stderr": err.decode(), "cached": cached}
    result = _eval(served_llm2jev, cache, "--concurrency", "2", "-f", "json")
    assert result.exit_code == 0, result.output
    return interrupted, json.loads(result.stdout)


def test_an_interrupted_eval_resumes_from_the_cache(resumed):
    interrupted, report = resumed
    assert interrupted["returncode"] == 130, interrupted
    assert "rerun the same command to resume" in interrupted["stderr"]
    assert report["rows"] == 64 and report["failed"] == []
    assert report["cache"]["hits"] >= interrupted["cached"] >= 4
    assert report["cache"]["hits"] + report["cache"]["scored"] == 64


def test_eval_reports_every_question_with_the_metrics(resumed):
    _interrupted, report = resumed
    assert report["version"] == 1 and report["kind"] == "decisions"
    assert report["backend"]["endpoint"].endswith("/v1/systemone")
    team, urgent = report["questions"]
    assert (team["name"], team["kind"], team["options"]) == (
        "team",
        "choice",
        ["billing", "shipping", "technical"],
    )
    assert (urgent["name"], urgent["kind"], urgent["options"]) == ("urgent", "noul", ["true", "false"])
    for question in (team, urgent):
        block = question["methods"]["served"]
        assert block["n"] == question["labeled"] == 64
        assert sum(map(sum, block["confusion"])) == 64
        assert block["correct"] == sum(block["confusion"][i][i] for i in range(len(question["options"])))
        low, high = block["wilson95"]
        assert low <= block["accuracy"] <= high
        assert block["calibration"]["train_rows"] + block["calibration"]["heldout_rows"] == 64
    predictions = report["predictions"]
    assert len(predictions) == 64 and all(p["answers"] for p in predictions)
    assert team["methods"]["served"]["correct"] == sum(
        p["answers"]["team"] == p["labels"]["team"] for p in predictions
    )


def test_eval_text_table(served_llm2jev, resumed, tmp_path):
    # every row is in the module's cache now: the table comes without a request
    cache = Path(resumed[1]["cache"]["path"]).parent
    result = _eval(served_llm2jev, cache, "--concurrency", "2")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"pcdlint eval: {REQUEST} on {ROWS} (64 rows)"
    assert "cache: 64 hit(s), 0 scored" in lines[1]
    assert any(line.startswith("team ") and " choice " in line for line in lines)
    assert any(line.startswith("urgent ") and " noul " in line for line in lines)


def test_injected_429_and_500_are_retried_and_a_failing_row_is_reported(fault_proxy, tmp_path):
    proxy = fault_proxy(faults={1: (429, {"Retry-After": "1"}), 3: (500, {})}, fail_when="Iceland")
    env = {"PCDLINT_TEST_KEY": KEY}
    out_json = tmp_path / "report.json"
    result = _eval(
        proxy.url,
        tmp_path / "cache",
        "--limit",
        "30",
        "--concurrency",
        "2",
        "--retries",
        "2",
        "--api-key-env",
        "PCDLINT_TEST_KEY",
        "--output-json",
        str(out_json),
        env=env,
    )
    assert result.exit_code == 1, result.output  # a row failed
    report = json.loads(out_json.read_text())
    by_status = report["server"]["by_status"]
    assert by_status["429"] == 1
    assert by_status["500"] == 1 + 3  # the injected one, and the failing row's three tries
    assert report["server"]["retries"] == 1 + 1 + 2
    (failed,) = report["failed"]
    assert failed["id"] == "t26" and "500" in failed["error"]
    assert "t26 (line 26, original):" in result.output
    assert report["questions"][0]["labeled"] == 29  # the failed row is out of the metrics, not dropped
    # the key went to the server on every request and nowhere else
    assert proxy.authorizations and set(proxy.authorizations) == {f"Bearer {KEY}"}
    leaked = [str(p) for p in tmp_path.rglob("*") if p.is_file() and KEY in p.read_text(errors="replace")]
    assert leaked == [] and KEY not in result.output
    assert KEY not in json.dumps(report)


def test_perturb_order_is_verify_probe_on_every_row(served_llm2jev, tmp_path):
    """`eval --perturb order --orders 3` asks each row in the probe's display orders; per row it
    reports what `verify --probe order --orders 3` reports for that row's request."""
    limit = 3
    result = _eval(
        served_llm2jev,
        tmp_path / "cache",
        "--limit",
        str(limit),
        "--perturb",
        "order",
        "--orders",
        "3",
        "--concurrency",
        "2",
        "-f",
        "json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["options"]["orders"] == 3
    team, urgent = report["questions"]
    assert "order" not in urgent["perturbation"]  # a noul has no options to reorder
    probe = team["perturbation"]["order"]
    assert probe["orders"] == 3 and probe["rows"] == limit and probe["reordered_requests"] == limit * 2
    by_row = probe["by_row"]
    assert [r["id"] for r in by_row] == ["t01", "t02", "t03"]
    assert probe["position_wins"] == [sum(r["position_wins"][i] for r in by_row) for i in range(3)]
    assert sum(probe["position_wins"]) == limit * 3
    assert probe["flips"]["served"] == sum(1 for r in by_row if r["flips"])
    assert probe["flipped_requests"] == sum(r["flips"] for r in by_row)
    assert probe["largest_swing"] == max(r["largest_swing"] for r in by_row)
    assert probe["verdict"].startswith(("triage: ", "stable: no row's answer changed in 3 orders"))
    # 3 rows in 3 orders (the original and two reordered bodies), nothing else
    assert report["cache"]["scored"] == limit * 3 and report["server"]["requests"] == limit * 3

    paths = row_requests(REQUEST, ROWS, limit, tmp_path)
    verified = CliRunner().invoke(
        cli,
        ["verify", "--backend", "systemone", "--base-url", served_llm2jev, *paths]
        + ["--probe", "order", "--orders", "3", "-f", "json", "--quiet"],
        catch_exceptions=False,
    )
    assert verified.exit_code in (0, 1), verified.output
    decisions = json.loads(verified.stdout)["decisions"]
    for entry, row in zip(decisions, by_row, strict=True):
        (live,) = entry["order_probe"]
        assert live["question"] == "team" and len(live["orders"]) == 3 and entry["requests"] == 3
        assert live["answers"] == row["answers"], row["id"]
        assert live["flips"] == row["flips"] and live["position_wins"] == row["position_wins"]
        assert live["largest_swing"] == pytest.approx(row["largest_swing"], abs=1e-6)
        assert live["verdict"] == row["verdict"]

    text = _eval(
        served_llm2jev, tmp_path / "cache", "--limit", str(limit), "--perturb", "order", "--orders", "3"
    )
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert "cache: 9 hit(s), 0 scored" in lines[1]
    assert (
        f"order probe team (3 orders, {limit} rows): answer changed in {probe['flips']['served']} row(s)"
        in text.output
    )
    assert f"  {probe['verdict']}" in lines
