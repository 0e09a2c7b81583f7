"""`pcdlint engines`: the engine table's rows, with the upstream version each was read from and
whether a live test checks it against a running server."""

from __future__ import annotations

import json

import click

from auditor.cli.choices import format_option
from auditor.pcd.engines.table import KINDS


@click.command("engines")
@click.option("--kind", type=click.Choice(KINDS), default=None, help="Only the rows of this kind.")
@format_option("engines")
def engines_command(kind: str | None, output_format: str) -> None:
    """List the engine table (auditor/pcd/engines/engines.toml): each engine's kind, the version
    and date its row was read from upstream, whether a live test covers it, and its source."""
    from auditor.pcd.engines.table import ENGINE_ROWS, names_refused

    rows = [row for row in ENGINE_ROWS.values() if kind is None or row.kind == kind]
    if output_format == "json":
        click.echo(json.dumps([row.describe() for row in rows], indent=2, ensure_ascii=False))
        return
    width = max(len(row.name) for row in rows)
    for row in rows:
        live = f"live: {row.live_test}" if row.live_test else "source only"
        limits = ""
        if row.is_decision:
            parts = [
                f"{noun} {limit.phrase()}"
                for noun, limit in (
                    ("options", row.options),
                    ("levels", row.levels),
                    ("questions", row.questions),
                )
                if limit is not None
            ]
            limits = f"    {'; '.join(parts)}; names refused: {names_refused(row)}\n"
        click.echo(
            f"{row.name:<{width}}  {row.kind:<8}  {row.version} (read {row.read_on})  {live}\n"
            f"{limits}    {row.source}"
        )
    covered = sum(1 for row in rows if row.live_test)
    click.echo(f"\n{len(rows)} engines; {covered} checked against a running server (`live:` names the test).")
