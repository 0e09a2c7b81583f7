"""`verify` on decision requests: a served System One endpoint, or llm2jev's service in process.

``verify --backend systemone --base-url URL`` POSTs each request (a System One body) to the
server; ``verify --backend in-process --engine llm2jev`` computes what a served llm2jev computes, on
pcdlint's decoder model. Both print every question's answer and probabilities and run the
option-order probe (``auditor.decoder.orderprobe``). `eval --backend systemone` asks a request
on labeled rows. The runs are composed in the eval layer (auditor.eval.decision_verify,
auditor.eval.decision_runs); here the options are parsed, the run built and its report printed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from auditor.backends import BACKENDS, DEFAULT_BACKEND, DEFAULT_ROUTE
from auditor.cli.choices import engine_option, probe_choice, probe_list
from auditor.cli.common import client_options, max_response_option, run_io, write_calibration, write_output
from auditor.cli.gates import COMPARE_KEYS, COMPARE_OPTIONS, RECORD_KEYS, RECORD_OPTIONS
from auditor.cli.run_options import parse_decision_flags, parse_served_options
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.cli.run_options import DecisionFlags, EvalCommandOptions, ServedOptions, VerifyOptions

IN_PROCESS_ENGINES = BACKENDS[DEFAULT_BACKEND].decision_engines  # computed in this process

DECISION_OPTIONS = [
    engine_option(
        "--engine",
        "engine_name",
        kinds=("decision",),
        help="The decision engine the request is for ({engines}). With --backend in-process: "
        "compute that engine's answer in this process (" + ", ".join(IN_PROCESS_ENGINES) + ").",
    ),
    click.option(
        "--route",
        metavar="PATH",
        default=DEFAULT_ROUTE,
        show_default=True,
        help="--backend systemone: the path after --base-url (OpenRouter /api/alpha/decisions, "
        "Fireworks /inference/v1/systemone, Perplexity /v1/decisions).",
    ),
    click.option(
        "--probe",
        multiple=True,
        type=probe_choice(),
        help="What to probe in decision requests, repeatable (--probe order --probe scope; "
        f"default: auto): {probe_list()}.",
    ),
    click.option(
        "--orders",
        type=click.IntRange(2, 24),
        default=4,
        show_default=True,
        help="Display orders per probed question (original, reversed, rotated by 1, 2, …).",
    ),
    *RECORD_OPTIONS,
]
DECISION_KEYS = ("engine_name", "route", "probe", "orders", *RECORD_KEYS)


def decision_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The decision-request options; the command receives them as one ``decision``, a
    `DecisionFlags`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["decision"] = parse_decision_flags({key: kwargs.pop(key) for key in DECISION_KEYS})
        return func(*args, **kwargs)

    for option in reversed(DECISION_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def wants_decisions(verify_opts: VerifyOptions, decision: DecisionFlags) -> bool:
    return verify_opts.backend.name == "systemone" or decision.engine_name is not None


def verify_decisions(
    paths: list[str],
    verify_opts: VerifyOptions,
    decision: DecisionFlags,
    *,
    allow_download: bool,
    output_format: str,
    output: str | None,
    progress: Any,
    quiet: bool = False,
) -> int:
    """Answer and probe every request (auditor.eval.decision_verify); write the report; return
    the exit code. Each request's probes state on stderr how many extra requests they send before
    sending (not with --quiet; the report has the counts as ``probe_requests``)."""
    from auditor.cli.gates import check_gate_options
    from auditor.decoder.inputs import read_context
    from auditor.eval.decision_verify import DecisionVerify, verify_requests
    from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS
    from auditor.reporting.decisions import decision_to_dict, format_decision
    from auditor.reporting.outputs import check_outputs

    check_gate_options(decision.gate, verify_opts.backend.name)
    targets = [("--output", output), ("--record", decision.gate.record_path)]
    check_outputs([(flag, target) for flag, target in targets if target], list(paths))
    options = DecisionVerify(
        backend=replace(verify_opts.backend, route=decision.route),
        engine_name=decision.engine_name,  # checked against the engine table by --engine's choice
        probes=decision.probes,
        orders=decision.orders,
        gate=decision.gate,
        context=read_context(verify_opts.context_arg),
    )
    run = verify_requests(
        list(paths), options, allow_download=allow_download, progress=progress, io=run_io(quiet)
    )
    entries, texts = [], []
    for o in run.outcomes:
        entry = decision_to_dict(
            o.item.path, o.item.pointer, run.identity, o.decision, o.refused, o.static, o.disagreements
        )
        entry["probe_requests"] = o.counts
        entries.append(entry)
        texts.append(
            format_decision(o.item.label, run.identity, o.decision, o.refused, o.static, o.disagreements)
        )
    if output_format == "json":
        from auditor.reporting.escape import strict_json

        report: dict = {"version": 1, "lint": None, "verify": [], "decisions": entries}
        if run.answers is not None:
            report["answers"] = run.answers
        text = json.dumps(strict_json(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    else:
        text = "".join(([f"{run.replay_note}\n"] if run.replay_note is not None else []) + texts)
    write_output(text, output, list(paths), kind="json" if output_format == "json" else "verify")
    return EXIT_FINDINGS if run.flagged else EXIT_CLEAN


EVAL_OPTIONS = [
    click.option(
        "--base-url",
        metavar="URL",
        help="--backend systemone: the server root, e.g. http://127.0.0.1:8080; --backend openai: "
        "the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1 (/v1 is appended when missing).",
    ),
    click.option(
        "--tokenizer",
        "server_tokenizer",
        metavar="SPEC",
        help="--backend openai: the served model's tokenizer (HF directory, hub id or .gguf); "
        "default: --model as a locally cached hub id.",
    ),
    click.option(
        "--route",
        metavar="PATH",
        default=DEFAULT_ROUTE,
        show_default=True,
        help="--backend systemone: the path after --base-url.",
    ),
    click.option(
        "--orders",
        type=click.IntRange(2, 24),
        default=4,
        show_default=True,
        help="--backend systemone with --perturb order: display orders per choice question "
        "(original, reversed, rotated by 1, 2, …), as verify's option-order probe.",
    ),
    *client_options("--backend systemone or openai"),
    *RECORD_OPTIONS,
    *COMPARE_OPTIONS,
    click.option(
        "--run-timeout",
        "run_timeout_s",
        type=click.FloatRange(1, 864000),
        default=None,
        help="Seconds for all requests of the run together (--backend systemone or openai; "
        "default: no limit — an interrupted run resumes from the cache).",
    ),
    max_response_option("--backend systemone or openai"),
]
EVAL_KEYS = (
    "base_url",
    "server_tokenizer",
    "route",
    "orders",
    "api_key_env",
    "concurrency",
    "timeout_s",
    "retries",
    "retry_after_cap",
    "run_timeout_s",
    "max_response_bytes",
    *RECORD_KEYS,
    *COMPARE_KEYS,
)


def served_backend(served_opts: ServedOptions, name: str, model: str | None, allow_download: bool) -> Any:
    """`eval --backend openai|systemone`'s backend, opened by the decoder's one factory: for
    openai verify's ``OpenAIBackend`` with one prompt per request (``batch_size`` 1), so
    ``--concurrency`` bounds the scored prompts in flight; the key comes from ``--api-key-env`` only."""
    from auditor.decoder.errors import DecoderError
    from auditor.decoder.open import open_backend

    options = replace(
        served_opts.backend, backend=name, model=model, allow_download=allow_download, batch_size=1
    )
    try:
        return open_backend(options, decisions=options.name == "systemone")
    except DecoderError as exc:
        raise UsageError(str(exc)) from None


def eval_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The served-eval options; the command receives them as one ``served_opts``, a `ServedOptions`."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["served_opts"] = parse_served_options({key: kwargs.pop(key) for key in EVAL_KEYS})
        return func(*args, **kwargs)

    for option in reversed(EVAL_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def eval_decisions(opts: EvalCommandOptions) -> int:
    """`eval --backend systemone`: the request's questions on labeled rows, through the server
    (or a ``--replay`` recording); with ``--compare``, two sides paired (auditor.eval.decision_runs).
    Returns the exit code: 1 when a row failed (after the client's retries, or over the row limit)
    or the gate failed."""
    from auditor.decoder.progress import Progress
    from auditor.eval.decision_runs import Interrupted, RequestEval, compare_requests, evaluate_request

    served, gate = opts.served, opts.served.gate
    if not gate.compare and (opts.output_format == "html" or opts.output_html):
        flag = "--output-html" if opts.output_html else "-f html"
        raise UsageError(
            f"{flag} is for schema evals and eval --compare; a decision eval writes text or json"
        )
    if not served.base_url and not gate.replay_path:
        raise UsageError(
            "--backend systemone needs --base-url URL (the server root, e.g. http://127.0.0.1:8080), "
            "or --replay FILE"
        )
    if gate.compare and opts.shard is not None:
        raise UsageError("--shard and --compare exclude each other (compare the merged reports' runs)")
    if opts.shard is not None and opts.output_format != "json" and not opts.output_json:
        raise UsageError("--shard writes a JSON report for eval-merge: add -f json or --output-json FILE")
    if opts.shard is not None and opts.write_calibration:
        raise UsageError(
            "--write-calibration with --shard would fit one shard's rows: write it with "
            "`pcdlint eval-merge SHARD.json … --write-calibration FILE`"
        )
    row_probes = [p for p in opts.perturb if p != "order"]
    if opts.shard is not None and row_probes:
        raise UsageError(f"--shard takes --perturb order only; --perturb {row_probes[0]} runs unsharded")
    spec = RequestEval(
        request_path=opts.schema,
        data_path=opts.data_path,
        backend=served.backend,
        model=opts.model,
        gate=gate,
        holdout=opts.holdout,
        seed=opts.seed,
        perturb=opts.perturb,
        orders=served.orders,
        limit=opts.limit,
        max_row_bytes=opts.max_row_bytes,
        shard=opts.shard,
        cache_dir=opts.cache_dir,
    )
    io, progress = run_io(opts.quiet), Progress(False if opts.quiet else None)
    try:
        if gate.compare:
            compared = compare_requests(spec, io, progress)
            _write_compare(opts, compared.compared, compared.replay_note)
            return 1 if compared.failed else 0
        outcome = evaluate_request(spec, io, progress)
    except Interrupted as stop:
        click.echo(f"pcdlint: {stop}", err=True)
        raise SystemExit(130) from None
    _write_decision_eval(opts, outcome.report, outcome.replay_note)
    return 1 if outcome.failed else 0


def _write_decision_eval(opts: EvalCommandOptions, report: dict, replay_note: str | None) -> None:
    """The decision eval's report: text, or JSON by the project's JSON writer (every string
    escaped for JSON, not for a terminal) with the per-row lists streamed from disk."""
    from auditor.eval.decisions import decision_calibration_file, render_decision_text
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.outputs import Chunks

    inputs = opts.inputs
    if opts.output_format == "text":
        replayed = "" if replay_note is None else replay_note + "\n"
        write_output(replayed + render_decision_text(report), opts.output, inputs)
    else:
        write_output(Chunks(report_chunks(report)), opts.output, inputs, kind="json")
    if opts.output_json:
        write_output(
            Chunks(report_chunks(report)), opts.output_json, inputs, flag="--output-json", kind="json"
        )
    if opts.write_calibration:
        write_calibration(decision_calibration_file(report), opts.write_calibration, inputs)


def _write_compare(opts: EvalCommandOptions, compared: dict, replay_note: str | None) -> None:
    from auditor.eval.compare import render_compare_text
    from auditor.reporting.compare_html import render_compare_html
    from auditor.reporting.json_text import dumps_strict_bytes

    def render(name: str) -> str | bytes:
        if name == "json":
            return dumps_strict_bytes(compared)
        if name == "html":
            return render_compare_html(compared)
        return (f"{replay_note}\n" if replay_note is not None else "") + render_compare_text(compared)

    inputs = opts.inputs
    kind = "json" if opts.output_format == "json" else "text"
    write_output(render(opts.output_format), opts.output, inputs, kind=kind)
    for name, target in (("json", opts.output_json), ("html", opts.output_html)):
        if target:
            write_output(
                render(name),
                target,
                inputs,
                flag=f"--output-{name}",
                kind="json" if name == "json" else "text",
            )
