"""`verify` on decision requests: a served System One endpoint, or llm2jev's service in process.

``verify --backend systemone --base-url URL`` POSTs each request (a System One body) to the
server; ``verify --backend local --engine llm2jev`` computes what a served llm2jev computes, on
pcdlint's decoder model. Both print every question's answer and probabilities and run the
option-order probe (``auditor.decoder.orderprobe``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from auditor.cli.common import client_options, options_client
from auditor.errors import UsageError

IN_PROCESS_ENGINES = ("llm2jev",)  # decision engines pcdlint can compute in this process

DECISION_OPTIONS = [
    click.option(
        "--engine",
        "engine_name",
        metavar="NAME",
        help="The decision engine the request is for. With --backend local: compute that engine's "
        "answer in this process (llm2jev).",
    ),
    click.option(
        "--route",
        metavar="PATH",
        default="/v1/systemone",
        show_default=True,
        help="--backend systemone: the path after --base-url (OpenRouter /api/alpha/decisions, "
        "Fireworks /inference/v1/systemone, Perplexity /v1/decisions).",
    ),
    click.option(
        "--probe",
        type=click.Choice(["auto", "order", "off"]),
        default="auto",
        show_default=True,
        help="Option-order probe of decision requests: auto = choices with 3 or more options, "
        "order = every choice, off = none.",
    ),
    click.option(
        "--orders",
        type=click.IntRange(2, 24),
        default=4,
        show_default=True,
        help="Display orders per probed question (original, reversed, rotated by 1, 2, …).",
    ),
]
DECISION_KEYS = ("engine_name", "route", "probe", "orders")


def decision_options(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(DECISION_OPTIONS):
        func = option(func)
    return func


def wants_decisions(verify_opts: dict, decision_opts: dict) -> bool:
    return verify_opts["backend"] == "systemone" or decision_opts["engine_name"] is not None


@dataclass
class DecisionInput:
    """One request to ask: the file, where in it the request sits, and its System One body."""

    path: str
    pointer: str  # "" for a file that is one request, or a schema's fields
    body: dict

    @property
    def label(self) -> str:
        return self.path if not self.pointer else f"{self.path}#{self.pointer}"


def load_requests(paths: list[str], context: str | None) -> list[DecisionInput]:
    """Every decision request in the files (any of the three shapes), as a System One body; a file
    with none asks its schema's enum fields as choice questions. ``--context`` is the state of a
    request that has none."""
    from auditor.decoder.systemone import check_body
    from auditor.schema.cache import analyse_file
    from auditor.schema.decisions import locate_requests, system_one_body
    from auditor.schema.documents import resolve_pointer

    inputs = []
    for name in paths:
        model = analyse_file(Path(name), name)
        data = model.document.data
        located = locate_requests(data)
        for request in located:
            node = resolve_pointer(data, request.pointer)
            body = system_one_body(node, context if context is not None else "")
            inputs.append(DecisionInput(name, request.pointer if len(located) > 1 else "", body))
        if located:
            continue
        if not model.sites:
            raise UsageError(
                f"{name}: no decision request and no enum or boolean fields (format: {model.format})"
            )
        questions: dict = {}
        for site in model.sites:
            questions.update(system_one_body(site, context or "")["questions"])
        inputs.append(DecisionInput(name, "", {"state": context or "", "questions": questions}))
    for item in inputs:
        try:
            check_body(item.body)
        except Exception as exc:  # DecoderError: the body's outline
            raise UsageError(f"{item.label}: {exc}") from None
    return inputs


def http_client(verify_opts: dict) -> Any:
    """The one HTTP client for --base-url, with the key from --api-key-env (never from argv)."""
    return options_client(
        verify_opts["base_url"], verify_opts, max_connections=max(4, verify_opts.get("concurrency") or 4)
    )


def decision_engine(
    verify_opts: dict, engine_name: str | None, route: str, allow_download: bool, progress: Any
) -> Any:
    """What answers the requests: a SystemOneBackend, or an in-process engine."""
    from auditor.decoder import load_model
    from auditor.decoder.systemone import SystemOneBackend

    if verify_opts["backend"] == "systemone":
        if not verify_opts["base_url"]:
            raise UsageError(
                "--backend systemone needs --base-url URL (the server root, e.g. http://127.0.0.1:8080)"
            )
        return SystemOneBackend(
            http_client(verify_opts), verify_opts["base_url"], route, verify_opts["model_spec"]
        )
    if verify_opts["backend"] != "local":
        raise UsageError(f"--engine {engine_name} is for --backend local or --backend systemone")
    if engine_name not in IN_PROCESS_ENGINES:
        raise UsageError(
            f"--backend local has no in-process reference for engine {engine_name!r} "
            f"(available: {', '.join(IN_PROCESS_ENGINES)}); use --backend systemone to ask its server"
        )
    if verify_opts["base_url"]:
        raise UsageError("--base-url is for --backend openai or systemone")
    from auditor.decoder.llm2jev import Llm2jevEngine

    with progress.stage("model load"):
        loaded = load_model(
            verify_opts["model_spec"],
            device=verify_opts["device"],
            dtype=verify_opts["dtype"],
            allow_download=allow_download,
            progress=progress.enabled,
        )
    return Llm2jevEngine(loaded)


@contextmanager
def _redacted(engine: Any) -> Iterator[None]:
    """A DecoderError quoting a server's answer, with the API key masked."""
    from auditor.decoder.errors import DecoderError

    try:
        yield
    except DecoderError as exc:
        redact = getattr(engine, "redact", None)
        raise DecoderError(redact(str(exc)) if redact is not None else str(exc)) from None


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
    verify_opts: dict,
    decision_opts: dict,
    context: str | None,
    *,
    allow_download: bool,
    output_format: str,
    output: str | None,
    progress: Any,
) -> int:
    """Answer and probe every request; write the report; return the exit code."""
    from auditor.cli.common import write_output
    from auditor.decoder.orderprobe import probe_request
    from auditor.decoder.systemone import DecisionRefused
    from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS
    from auditor.reporting.decisions import (
        compare_static_live,
        decision_to_dict,
        format_decision,
        static_verdict,
    )

    requests = load_requests(paths, context)
    engine_name = decision_opts["engine_name"]
    if engine_name is not None:
        from auditor.linter.engine import LintOptions

        LintOptions(engines=[engine_name]).engine_names()  # an unknown name: a usage error first
    engine = decision_engine(verify_opts, engine_name, decision_opts["route"], allow_download, progress)
    identity = engine.identity()
    by_file = static_findings(paths, engine_name, engine) if engine_name is not None else {}
    entries, texts, findings = [], [], False
    for item in requests:
        decision, refused = None, None
        try:
            with progress.stage(f"decide {Path(item.path).name}"), _redacted(engine):
                decision = probe_request(
                    engine, item.body, mode=decision_opts["probe"], orders=decision_opts["orders"]
                )
        except DecisionRefused as exc:
            refused = exc
        static = disagreements = None
        if engine_name is not None:
            static = static_verdict(by_file.get(str(Path(item.path)), []), engine_name, item.pointer)
            disagreements = compare_static_live(static, refused)
        findings = (
            findings or refused is not None or bool(disagreements) or bool(decision and decision.flipped)
        )
        entries.append(
            decision_to_dict(item.path, item.pointer, identity, decision, refused, static, disagreements)
        )
        texts.append(format_decision(item.label, identity, decision, refused, static, disagreements))
    if output_format == "json":
        from auditor.reporting.escape import strict_json

        report = {"version": 1, "lint": None, "verify": [], "decisions": entries}
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
        default="/v1/systemone",
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
)


def openai_scorer(served_opts: dict, model: str | None, allow_download: bool) -> Any:
    """`eval --backend openai`: verify's ``OpenAIBackend`` on the one HTTP client, built from the
    shared client options. One prompt per request (``batch_size`` 1), so ``--concurrency`` bounds
    the scored prompts in flight; the key comes from ``--api-key-env`` only."""
    from auditor.decoder.backends import OpenAIBackend
    from auditor.decoder.errors import DecoderError
    from auditor.decoder.http import parse_origin
    from auditor.decoder.model import load_tokenizer_only
    from auditor.paths import resolve_text

    if not served_opts["base_url"]:
        raise UsageError("--backend openai needs --base-url URL (e.g. http://127.0.0.1:8000/v1)")
    spec = served_opts["server_tokenizer"] or model
    if not spec:
        raise UsageError("--backend openai needs --tokenizer SPEC (or --model NAME that is a cached hub id)")
    spec = resolve_text(spec, "--tokenizer")
    try:
        parse_origin(served_opts["base_url"])  # the URL as written, checked before /v1 is appended
        tokenizer, tokenizer_name = load_tokenizer_only(spec, allow_download=allow_download)
        client = options_client(OpenAIBackend.api_base(served_opts["base_url"]), served_opts)
        return OpenAIBackend(
            client.base_url,
            model,
            tokenizer,
            tokenizer_name,
            concurrency=served_opts["concurrency"],
            batch_size=1,
            client=client,
        )
    except DecoderError as exc:
        raise UsageError(str(exc)) from None


def eval_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The served-eval options; the command receives them as one ``served_opts`` dict."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["served_opts"] = {key: kwargs.pop(key) for key in EVAL_KEYS}
        return func(*args, **kwargs)

    for option in reversed(EVAL_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def eval_decisions(
    request_path: str,
    data_path: str,
    served_opts: dict,
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
    max_row_bytes: int | None = None,
    shard: tuple[int, int] | None = None,
) -> bool:
    """`eval --backend systemone`: the request's questions on labeled rows, through the server.
    The data is read twice as a stream (auditor.eval.stream): once to check every row before any
    request (bad input: exit 2), then row by row while answering. Returns whether a row failed
    (after the client's retries, or over the row limit)."""
    from auditor.cli.common import write_output
    from auditor.decoder.progress import Progress
    from auditor.decoder.systemone import SystemOneBackend
    from auditor.eval.decisions import (
        DecisionEvalOptions,
        DecisionSelection,
        render_decision_text,
        run_decision_eval,
        selected_rows,
    )
    from auditor.eval.stream import DEFAULT_MAX_ROW_BYTES, DataStream, data_identity
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.outputs import Chunks

    if not served_opts["base_url"]:
        raise UsageError(
            "--backend systemone needs --base-url URL (the server root, e.g. http://127.0.0.1:8080)"
        )
    if output_format == "html":
        raise UsageError("-f html is for schema evals; a decision eval writes text or json")
    requests = load_requests([request_path], None)
    if len(requests) != 1:
        raise UsageError(
            f"{request_path}: holds {len(requests)} decision requests; eval takes a file with one"
        )
    body = requests[0].body
    if shard is not None and output_format != "json" and not output_json:
        raise UsageError("--shard writes a JSON report for eval-merge: add -f json or --output-json FILE")
    stream = DataStream(data_path, max_row_bytes or DEFAULT_MAX_ROW_BYTES)
    selection = DecisionSelection(limit=limit, shard=shard)
    stamp = stream.stamp()
    total = sum(1 for _row in selected_rows(stream, body, selection))  # every row checked first
    if not total and shard is None:
        raise UsageError(f"{stream.display}: no labeled rows")
    stream.file_digest()
    client = options_client(served_opts["base_url"], served_opts)
    engine = SystemOneBackend(client, client.base_url, served_opts["route"], model)
    options = DecisionEvalOptions(
        concurrency=served_opts["concurrency"],
        holdout=holdout,
        seed=seed,
        perturb=perturb,
        orders=served_opts["orders"],
        cache_dir=cache_dir,
        progress=Progress(False if quiet else None),
    )
    try:
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
    except KeyboardInterrupt:
        where = "" if cache_dir is None else f"; rows answered so far are cached in {cache_dir}"
        click.echo(f"pcdlint: eval interrupted{where}: rerun the same command to resume", err=True)
        raise SystemExit(130) from None
    finally:
        client.close()
    if stream.stamp() != stamp:
        raise UsageError(f"{stream.display}: the file changed during the run; its report is not written")
    inputs = [request_path, data_path]
    if output_format == "text":
        write_output(render_decision_text(report), output, inputs)
    else:
        write_output(Chunks(report_chunks(report)), output, inputs, kind="json")
    if output_json:
        write_output(Chunks(report_chunks(report)), output_json, inputs, flag="--output-json", kind="json")
    return bool(report["failed"])
