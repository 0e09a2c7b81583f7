"""The CI gate options of `verify` and `eval` on served decision models, and their rules:
recorded answers (``--record`` / ``--replay``; what answers a run is auditor.eval.answer_source)
and the paired comparison of two sides (``eval --compare``, auditor.eval.decision_runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.cli.run_options import DecisionFlags
    from auditor.eval.answer_source import GateOptions

RECORD_OPTIONS = [
    click.option(
        "--record",
        "record_path",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="--backend systemone: write every request and the server's answer here (JSONL, keyed by "
        "the body and the model, never the URL or the API key), to --replay in CI.",
    ),
    click.option(
        "--replay",
        "replay_path",
        metavar="FILE",
        help="--backend systemone: answer every request from a --record file, with no network; a "
        "request it does not hold is an error (exit 2) naming it.",
    ),
]
RECORD_KEYS = ("record_path", "replay_path")

COMPARE_OPTIONS = [
    click.option(
        "--compare",
        is_flag=True,
        help="--backend systemone: run the rows through side A and side B (--request-b, --base-url-b "
        "and/or --model-b) and compare them row by row.",
    ),
    click.option("--request-b", metavar="FILE", help="--compare: side B's request file (default: the same)."),
    click.option(
        "--base-url-b", metavar="URL", help="--compare: side B's server root (default: --base-url)."
    ),
    click.option("--model-b", metavar="NAME", help="--compare: side B's model name (default: --model)."),
    click.option(
        "--fail-if-worse",
        type=click.FloatRange(0.0, 1.0),
        metavar="MARGIN",
        help="--compare: exit 1 when B's accuracy on a question is below A's by more than MARGIN "
        "and McNemar's exact test rejects equal accuracy at --alpha.",
    ),
    click.option(
        "--alpha",
        type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
        default=0.05,
        show_default=True,
        help="--fail-if-worse: the significance level of McNemar's test.",
    ),
]
COMPARE_KEYS = ("compare", "request_b", "base_url_b", "model_b", "fail_if_worse", "alpha")


def check_gate_options(gate: GateOptions, backend: str) -> None:
    """The gate options' own rules, before anything is read or sent (``backend``: its one name)."""
    if gate.record_path and gate.replay_path:
        raise UsageError("--record and --replay exclude each other (record once, then replay)")
    if (gate.record_path or gate.replay_path) and backend != "systemone":
        raise UsageError("--record and --replay are for --backend systemone (served decision models)")
    side_b = [
        flag
        for flag, value in (
            ("--request-b", gate.request_b),
            ("--base-url-b", gate.base_url_b),
            ("--model-b", gate.model_b),
        )
        if value
    ]
    if gate.compare and backend != "systemone":
        raise UsageError("--compare is for --backend systemone (served decision models)")
    if not gate.compare:
        extra = side_b + (["--fail-if-worse"] if gate.fail_if_worse is not None else [])
        if extra:
            raise UsageError(f"{extra[0]} is for eval --compare")


def schema_probe_note(decision: DecisionFlags) -> None:
    """`verify` of a schema: the one line saying that decision probes were not run."""
    asked = [p for p in decision.probes if p not in ("auto", "off")]
    if asked:
        click.echo(
            f"pcdlint: --probe {', '.join(dict.fromkeys(asked))} needs a decision request "
            "(--backend systemone, or --backend in-process --engine llm2jev); not run on a schema",
            err=True,
        )
    for flag, value in (("--record", decision.gate.record_path), ("--replay", decision.gate.replay_path)):
        if value:
            raise UsageError(f"{flag} is for decision requests (--backend systemone)")
