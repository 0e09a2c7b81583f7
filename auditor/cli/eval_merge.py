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
def eval_merge_command(shards: tuple[str, ...], output_format: str, output: str | None) -> None:
    """Merge the JSON reports of `pcdlint eval --backend systemone --shard I/N` (all N of one run)
    into the report of the whole set: the same metrics, intervals, confusion matrices and
    calibration as one unsharded run.

    Shards of another request, endpoint, model, data file, --limit, --seed, --holdout,
    --perturb or N are refused, and so is a set with a shard missing or given twice.

    Exit status: 0 merged, 1 when a row failed in a shard (it is listed), 2 usage or input error.
    """
    from auditor.cli.common import fail, write_output
    from auditor.eval.decisions import render_decision_text
    from auditor.eval.shards import merge_reports
    from auditor.reporting.json_stream import report_chunks
    from auditor.reporting.outputs import Chunks, check_outputs

    try:
        if output:
            check_outputs([("--output", output)], list(shards))
        report = merge_reports(list(shards))
        if output_format == "text":
            write_output(render_decision_text(report), output, list(shards))
        else:
            write_output(Chunks(report_chunks(report)), output, list(shards), kind="json")
    except UsageError as error:
        fail(str(error))
    sys.exit(1 if report["failed"] else 0)
