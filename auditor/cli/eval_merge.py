"""`pcdlint eval-merge SHARD.json …`: the report of a whole labeled set from its shards' reports.

The click command only; the work is in ``auditor.eval.shards``. (Not `eval merge`: `eval`
reads its first argument as the request.)
"""

from __future__ import annotations

import sys

import click

from auditor.cli.choices import format_option
from auditor.errors import UsageError


@click.command("eval-merge")
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.json...")
@format_option("eval-merge")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the merged report here.")
@click.option(
    "--write-calibration",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Write the temperature fitted on the whole set's training rows per question here (JSON; "
    "what `eval --write-calibration` writes for an unsharded run).",
)
def eval_merge_command(
    shards: tuple[str, ...], output_format: str, output: str | None, write_calibration: str | None
) -> None:
    """Merge the JSON reports of `pcdlint eval --backend systemone --shard I/N` (all N of one run)
    into the report of the whole set: the same metrics, intervals, confusion matrices and
    calibration as one unsharded run.

    Shards of another request, endpoint, model, data file, --limit, --seed, --holdout,
    --perturb or N are refused, and so is a set with a shard missing or given twice.

    Exit status: 0 merged, 1 when a row failed in a shard (it is listed), 2 usage or input error.
    """
    from auditor.cli.common import fail, write_output
    from auditor.cli.common import write_calibration as write_fit
    from auditor.eval.decisions import decision_calibration_file, render_decision_text
    from auditor.eval.shards import merge_reports
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.outputs import Chunks, check_outputs

    inputs = list(shards)
    try:
        targets = [("--output", output), ("--write-calibration", write_calibration)]
        check_outputs([(flag, target) for flag, target in targets if target], inputs)
        report = merge_reports(inputs)
        if output_format == "text":
            write_output(render_decision_text(report), output, inputs)
        else:
            write_output(Chunks(report_chunks(report)), output, inputs, kind="json")
        if write_calibration:
            write_fit(decision_calibration_file(report), write_calibration, inputs)
    except UsageError as error:
        fail(str(error))
    sys.exit(1 if report["failed"] else 0)
