"""`verify` on decision requests: a served System One endpoint, or llm2jev's service in process.

``verify --backend systemone --base-url URL`` POSTs each request (a System One body) to the
server; ``verify --backend in-process --engine llm2jev`` computes what a served llm2jev computes, on
pcdlint's decoder model. Both print every question's answer and probabilities and run the
option-order probe (``auditor.decoder.orderprobe``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from auditor.backends import BACKENDS, DEFAULT_BACKEND, DEFAULT_ROUTE
from auditor.cli.choices import engine_option, probe_choice, probe_list
from auditor.cli.common import client_options
from auditor.cli.gates import COMPARE_KEYS, COMPARE_OPTIONS, RECORD_KEYS, RECORD_OPTIONS
from auditor.cli.run_options import parse_served_options
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.cli.run_options import ServedOptions, VerifyOptions

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
    for option in reversed(DECISION_OPTIONS):
        func = option(func)
    return func


def wants_decisions(verify_opts: VerifyOptions, decision_opts: dict) -> bool:
    return verify_opts.backend.name == "systemone" or decision_opts["engine_name"] is not None


def decision_engine(
    verify_opts: VerifyOptions, engine_name: str | None, route: str, allow_download: bool, progress: Any
) -> Any:
    """What answers the requests: a SystemOneBackend, or an in-process engine."""
    from auditor.decoder.open import open_backend

    options = replace(verify_opts.backend, engine=engine_name, route=route, allow_download=allow_download)
    if options.name == "openai":
        raise UsageError(f"--engine {engine_name} is for --backend in-process or --backend systemone")
    return open_backend(options, decisions=True, progress=progress)


@contextmanager
def _redacted(engine: Any, label: str = "") -> Iterator[None]:
    """A DecoderError quoting a server's answer, with the API key masked, naming the request."""
    from auditor.decoder.errors import DecoderError

    try:
        yield
    except DecoderError as exc:
        redact = getattr(engine, "redact", None)
        text = f"{label}: {exc}" if label else str(exc)
        raise DecoderError(redact(text) if redact is not None else text) from None


def static_findings(paths: list[str], engine_name: str, engine: Any) -> dict[str, list]:
    """pcdlint's findings under ``--engine`` per file (lint with the model's tokenizer when the
    model runs here, else the default tokenizer: the refusal rules read counts and fields)."""
    from auditor.linter.engine import LintOptions, lint
    from auditor.tokenizers import DEFAULT_TOKENIZER, load_tokenizer

    loaded = getattr(engine, "loaded", None)
    tokenizer = loaded.linter_tokenizer if loaded is not None else load_tokenizer(DEFAULT_TOKENIZER)
    run = lint(list(paths), [tokenizer], LintOptions(engines=[engine_name], suggestions=False, details=False))
    for error in run.errors:
        raise UsageError(str(error))
    return {str(Path(result.model.path)): list(result.findings) for result in run.files}


def verify_decisions(
    paths: list[str],
    verify_opts: VerifyOptions,
    decision_opts: dict,
    context: str | None,
    *,
    allow_download: bool,
    output_format: str,
    output: str | None,
    progress: Any,
    quiet: bool = False,
) -> int:
    """Answer and probe every request; write the report; return the exit code. Each request's
    probes state on stderr how many extra requests they send before sending (not with --quiet;
    the report has the counts as ``probe_requests``)."""
    from auditor.cli.common import write_output
    from auditor.cli.gates import AnswerSource, check_gate_options, design_refs, name_request
    from auditor.cli.run_options import parse_gate_options
    from auditor.decoder.inputs import load_requests
    from auditor.decoder.probes import announce, planned_requests, probe_decision, resolve_probes
    from auditor.decoder.systemone import DecisionRefused
    from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS
    from auditor.reporting.decisions import (
        compare_static_live,
        decision_to_dict,
        format_decision,
        static_verdict,
    )

    probes, order_mode = resolve_probes(decision_opts["probe"])
    requests = load_requests(paths, context)
    engine_name = decision_opts["engine_name"]  # checked against the engine table by --engine's choice
    gate = parse_gate_options(decision_opts)
    check_gate_options(gate, verify_opts.backend.name)
    source = None
    if verify_opts.backend.name == "systemone":
        source = AnswerSource(gate, verify_opts.backend, decision_opts["route"])
        source.check_target(list(paths))
        source.announce()
        engine = source.engine(verify_opts.base_url, verify_opts.backend.model)
    else:
        engine = decision_engine(verify_opts, engine_name, decision_opts["route"], allow_download, progress)
    identity = engine.identity()
    by_file = static_findings(paths, engine_name, engine) if engine_name is not None else {}
    design = design_refs(requests) if "scope" in probes else {}
    entries, texts, findings = [], [], False
    try:
        for item in requests:
            decision, refused = None, None
            counts = planned_requests(item.body, probes, order_mode, decision_opts["orders"])
            if not quiet:
                click.echo(f"pcdlint: {item.label}: {announce(counts)}", err=True)
            try:
                with progress.stage(f"decide {Path(item.path).name}"), _redacted(engine, item.label):
                    decision = probe_decision(
                        engine,
                        item.body,
                        probes,
                        order_mode,
                        orders=decision_opts["orders"],
                        design=design.get(item.label, {}),
                    )
            except DecisionRefused as exc:
                refused = exc
            except UsageError as error:
                raise name_request(error, item.label) from None
            static = disagreements = None
            if engine_name is not None:
                static = static_verdict(by_file.get(str(Path(item.path)), []), engine_name, item.pointer)
                disagreements = compare_static_live(static, refused)
            findings = (
                findings or refused is not None or bool(disagreements) or bool(decision and decision.flagged)
            )
            entry = decision_to_dict(
                item.path, item.pointer, identity, decision, refused, static, disagreements
            )
            entry["probe_requests"] = counts
            entries.append(entry)
            texts.append(format_decision(item.label, identity, decision, refused, static, disagreements))
    finally:
        if source is not None:
            source.finish(list(paths))
        else:
            engine.close()
    if source is not None and source.replay is not None:
        texts.insert(0, f"{source.replay.when()}\n")
    if output_format == "json":
        from auditor.reporting.escape import strict_json

        report: dict = {"version": 1, "lint": None, "verify": [], "decisions": entries}
        if source is not None and source.answers_block() is not None:
            report["answers"] = source.answers_block()
        text = json.dumps(strict_json(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    else:
        text = "".join(texts)
    write_output(text, output, list(paths), kind="json" if output_format == "json" else "verify")
    return EXIT_FINDINGS if findings else EXIT_CLEAN


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
    click.option(
        "--max-response-bytes",
        type=click.IntRange(1024, 2**34),
        default=64 * 1024 * 1024,
        show_default=True,
        help="The most bytes read of one server answer (--backend systemone or openai).",
    ),
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
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["served_opts"] = parse_served_options({key: kwargs.pop(key) for key in EVAL_KEYS})
        return func(*args, **kwargs)

    for option in reversed(EVAL_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def eval_decisions(
    request_path: str,
    data_path: str,
    served_opts: ServedOptions,
    *,
    model: str | None,
    holdout: float,
    seed: int,
    perturb: tuple[str, ...],
    limit: int | None,
    cache_dir: Path | None,
    output_format: str,
    output: str | None,
    output_json: str | None,
    quiet: bool,
    write_calibration: str | None = None,
    output_html: str | None = None,
    max_row_bytes: int | None = None,
    shard: tuple[int, int] | None = None,
) -> int:
    """`eval --backend systemone`: the request's questions on labeled rows, through the server
    (or a ``--replay`` recording); with ``--compare``, two sides paired (``auditor.cli.gates``).
    The data is read twice as a stream (auditor.eval.stream): once to check every row before any
    request (bad input: exit 2), then row by row while answering. Returns the exit code: 1 when a
    row failed (after the client's retries, or over the row limit) or the gate failed."""
    from auditor.cli.common import write_output
    from auditor.cli.gates import AnswerSource, eval_compare, name_request, prepare_probes
    from auditor.decoder.inputs import DecisionInput, load_requests
    from auditor.decoder.progress import Progress
    from auditor.eval.decisions import (
        DecisionEvalOptions,
        DecisionSelection,
        decision_calibration_file,
        render_decision_text,
        run_decision_eval,
        selected_rows,
    )
    from auditor.eval.stream import DEFAULT_MAX_ROW_BYTES, DataStream, data_identity
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.json_text import dumps_strict_bytes
    from auditor.reporting.outputs import Chunks

    gate = served_opts.gate
    if not served_opts.base_url and not gate.replay_path:
        raise UsageError(
            "--backend systemone needs --base-url URL (the server root, e.g. http://127.0.0.1:8080), "
            "or --replay FILE"
        )
    options = DecisionEvalOptions(
        concurrency=served_opts.backend.concurrency,
        holdout=holdout,
        seed=seed,
        perturb=perturb,
        orders=served_opts.orders,
        cache_dir=cache_dir,
        progress=Progress(False if quiet else None),
    )

    def load_one(path: str) -> DecisionInput:
        requests = load_requests([path], None)
        if len(requests) != 1:
            raise UsageError(f"{path}: holds {len(requests)} decision requests; eval takes a file with one")
        return requests[0]

    if gate.compare:
        if shard is not None:
            raise UsageError("--shard and --compare exclude each other (compare the merged reports' runs)")
        return eval_compare(
            request_path,
            data_path,
            served_opts,
            load_one,
            model=model,
            options=options,
            limit=limit,
            output_format=output_format,
            output=output,
            output_json=output_json,
            output_html=output_html,
            quiet=quiet,
        )
    if output_format == "html" or output_html:
        raise UsageError(
            "-f html is for schema evals and eval --compare; a decision eval writes text or json"
        )
    item = load_one(request_path)
    body = item.body
    if shard is not None and output_format != "json" and not output_json:
        raise UsageError("--shard writes a JSON report for eval-merge: add -f json or --output-json FILE")
    row_probes = [p for p in perturb if p != "order"]
    if shard is not None and row_probes:
        raise UsageError(f"--shard takes --perturb order only; --perturb {row_probes[0]} runs unsharded")
    stream = DataStream(data_path, max_row_bytes or DEFAULT_MAX_ROW_BYTES)
    selection = DecisionSelection(limit=limit, shard=shard)
    stamp = stream.stamp()
    total = sum(1 for _row in selected_rows(stream, body, selection))  # every row checked first
    if not total and shard is None:
        raise UsageError(f"{stream.display}: no labeled rows")
    stream.file_digest()
    prepare_probes(options, item, total, quiet)
    inputs = [request_path, data_path]
    source = AnswerSource(gate, served_opts.backend, served_opts.backend.route)
    source.check_target(inputs)
    if source.bypasses_cache:
        options.cache_dir = None
    source.announce()
    try:
        engine = source.engine(served_opts.base_url, model)
        report = run_decision_eval(
            engine,
            body,
            selected_rows(stream, body, selection),
            options,
            request_path=request_path,
            data_path=data_path,
            total=total,
            data={**data_identity(stream), "limit": limit},
            shard=shard,
        )
    except UsageError as error:
        raise name_request(error, request_path) from None
    except KeyboardInterrupt:
        where = "" if options.cache_dir is None else f"; rows answered so far are cached in {cache_dir}"
        click.echo(f"pcdlint: eval interrupted{where}: rerun the same command to resume", err=True)
        raise SystemExit(130) from None
    finally:
        source.finish(inputs)
    if stream.stamp() != stamp:
        raise UsageError(f"{stream.display}: the file changed during the run; its report is not written")
    if source.answers_block() is not None:
        report["server"]["answers"] = source.answers_block()
    # JSON by the project's JSON writer (every string escaped for JSON, not for a terminal), the
    # per-row lists streamed from disk (auditor.reporting.json_stream)
    if output_format == "text":
        replayed = "" if source.replay is None else source.replay.when() + "\n"
        write_output(replayed + render_decision_text(report), output, inputs)
    else:
        write_output(Chunks(report_chunks(report)), output, inputs, kind="json")
    if output_json:
        write_output(Chunks(report_chunks(report)), output_json, inputs, flag="--output-json", kind="json")
    if write_calibration:
        write_output(
            dumps_strict_bytes(decision_calibration_file(report)),
            write_calibration,
            inputs,
            flag="--write-calibration",
            kind="json",
        )
    return 1 if report["failed"] else 0
