"""Helpers every subcommand shares: option lists, report output, usage errors."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from auditor.exitcodes import EXIT_USAGE
from auditor.reporting.outputs import Chunks, write_error, write_report, write_stdout


def split_values(values: tuple[str, ...]) -> list[str]:
    """`--select PCD001,PCD002 --select too-many-options` → a flat list."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def write_output(
    text: str | bytes | Chunks,
    output: str | None,
    inputs: list[str],
    color: bool = False,
    flag: str = "--output",
    kind: str = "text",
) -> None:
    """The final sink of every report: escaped for `kind` (auditor.reporting.escape), written
    by the one output writer (auditor.reporting.outputs)."""
    if output is None:
        write_stdout(text, kind, color)
        return
    write_report(text, output, flag, inputs, kind, color)


def write_calibration(calibration: dict, target: str, inputs: list[str]) -> None:
    """``--write-calibration``: the fitted temperatures, as JSON by the project's JSON writer."""
    from auditor.reporting.json_text import dumps_strict_bytes

    write_output(dumps_strict_bytes(calibration), target, inputs, flag="--write-calibration", kind="json")


def color_stdout() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return sys.stdout is not None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def fail(message: str) -> NoReturn:
    write_error(f"pcdlint: error: {message}")
    sys.exit(EXIT_USAGE)


def run_io(quiet: bool) -> Any:
    """How a served run (auditor.eval.answer_source.RunIO) reaches the user: lines on stderr (the
    ones announcing work dropped with --quiet) and the --record file by the one output writer."""
    from auditor.eval.answer_source import RunIO

    def write_recording(text: str, path: str, inputs: list[str]) -> None:
        write_output(text, path, inputs, flag="--record", kind="json")

    return RunIO(say=lambda line: click.echo(line, err=True), write_recording=write_recording, quiet=quiet)


MAX_CONCURRENCY = 1024  # requests in flight at most (a thread each; benchmarks/eval_scale.py)


def max_response_option(backends: str) -> Any:
    """``--max-response-bytes``: the most bytes the one HTTP client reads of one server answer."""
    return click.option(
        "--max-response-bytes",
        type=click.IntRange(1024, 2**34),
        default=64 * 1024 * 1024,
        show_default=True,
        help=f"The most bytes read of one server answer ({backends}).",
    )


def client_options(backends: str, concurrency_for: str | None = None) -> list[Any]:
    """The options of the one HTTP client (auditor.decoder.http) that `verify` and `eval` share:
    the key's variable, requests in flight, the per-request deadline and the retries. `backends`
    names the backends they apply to in each help line; `concurrency_for`, where --concurrency
    sends requests side by side for fewer of them."""
    return [
        click.option(
            "--api-key-env",
            metavar="VAR",
            default="OPENAI_API_KEY",
            show_default=True,
            help="Environment variable holding the server's API key (unset: no key sent; never printed).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(1, MAX_CONCURRENCY),
            default=4,
            show_default=True,
            help=f"Requests in flight at once ({concurrency_for or backends}).",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(1, 3600),
            default=120.0,
            show_default=True,
            help=f"Seconds per request, headers and body together ({backends}).",
        ),
        click.option(
            "--retries",
            type=click.IntRange(0, 10),
            default=3,
            show_default=True,
            help="Retries with backoff for unreachable or busy servers (HTTP 429, 500, 502-504), "
            f"honouring Retry-After ({backends}).",
        ),
        click.option(
            "--retry-after-cap",
            type=click.FloatRange(0, 3600),
            default=60.0,
            show_default=True,
            help=f"The longest Retry-After wait honoured; a server asking more is an error ({backends}).",
        ),
    ]
