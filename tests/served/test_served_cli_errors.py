"""verify and eval on decision requests: usage and input errors are one line and exit 2 (no server)."""

from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import FIXTURES

REQUEST = str(FIXTURES / "served" / "invoice.json")
TRIAGE = str(FIXTURES / "served" / "ticket_triage.json")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends: nothing listens there


def _run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["verify", "--backend", "systemone", REQUEST], "--backend systemone needs --base-url URL"),
        (
            ["verify", "--backend", "local", "--engine", "sglang-decisions", REQUEST],
            # (`local`: the older spelling of in-process, still accepted)
            "--backend in-process computes no answers of engine 'sglang-decisions' (available: llm2jev)",
        ),
        (
            [
                "verify",
                "--backend",
                "systemone",
                "--base-url",
                "http://127.0.0.1:9",
                "--engine",
                "no-such",
                REQUEST,
            ],
            "--engine: unknown engine 'no-such'",
        ),
        (["verify", "--backend", "systemone", "--base-url", "ftp://127.0.0.1:9", REQUEST], "ftp"),
        (
            ["eval", TRIAGE, "--data", REQUEST, "--backend", "systemone"],
            "--backend systemone needs --base-url URL",
        ),
    ],
)
def test_usage_errors(args, message):
    result = _run(*args)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line]
    assert line.startswith("pcdlint: error: ") and message in line


def test_an_unreachable_server_is_one_line(tmp_path):
    result = _run(
        "verify",
        "--backend",
        "systemone",
        "--base-url",
        f"http://127.0.0.1:{_closed_port()}",
        REQUEST,
        "--retries",
        "0",
        "--quiet",
    )
    assert result.exit_code == 2, result.output
    assert result.output.startswith("pcdlint: error: ") and "Traceback" not in result.output


def test_a_label_that_is_no_answer_is_an_input_error(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "a", "state": "x", "labels": {"team": "sales"}}) + "\n")
    result = _run(
        "eval", TRIAGE, "--data", str(rows), "--backend", "systemone", "--base-url", "http://127.0.0.1:9"
    )
    assert result.exit_code == 2
    assert (
        "label \"sales\" for question 'team' is not one of its answers (billing, shipping, technical)"
        in result.output
    )


def test_eval_html_is_refused_for_a_decision_eval(tmp_path):
    result = _run(
        "eval",
        TRIAGE,
        "--data",
        str(FIXTURES / "served" / "ticket_triage.jsonl"),
        "--backend",
        "systemone",
        "--base-url",
        "http://127.0.0.1:9",
        "-f",
        "html",
    )
    assert result.exit_code == 2 and "-f html is for schema evals" in result.output
