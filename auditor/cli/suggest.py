"""`pcdlint suggest`: verified renamings for fields with first-token scoring problems."""

from __future__ import annotations

import json
import sys

import click

from auditor.lint.suggest import FIXED_CODES


def collect(run) -> list[dict]:
    """One entry per (file, field, tokenizer) with a PCD001/PCD002/PCD005 finding."""
    groups: dict[tuple, dict] = {}
    for finding in run.findings:
        if finding.code not in FIXED_CODES:
            continue
        key = (finding.path, finding.site_pointer, finding.tokenizer)
        entry = groups.setdefault(key, {
            "path": finding.path, "pointer": finding.site_pointer, "field": finding.field,
            "line": finding.line, "tokenizer": finding.tokenizer, "codes": [],
            "suggestions": finding.data.get("suggestions", []),
        })
        if finding.code not in entry["codes"]:
            entry["codes"].append(finding.code)
    return list(groups.values())


def format_text(entries: list[dict]) -> str:
    lines = []
    for e in entries:
        lines.append(f"{e['path']}:{e['line']}: {e['field']} [{e['tokenizer']}] {', '.join(e['codes'])}")
        if not e["suggestions"]:
            lines.append("  no renaming tried re-lints clean; see `pcdlint explain` for other fixes")
        for s in e["suggestions"]:
            pairs = ", ".join(f"{m['from']} -> {m['to']}" for m in s["mapping"][:8])
            more = f", … ({len(s['mapping'])} options)" if len(s["mapping"]) > 8 else ""
            lines.append(f"  {s['strategy']} (re-lints clean): {pairs}{more}")
    fixed = sum(1 for e in entries if e["suggestions"])
    lines.append(f"{len(entries)} fields need a fix; {fixed} have a verified suggestion")
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, metavar="SPEC",
              help="Tokenizer to verify with (repeatable). Default: qwen2.5.")
@click.option("-f", "--format", "output_format", type=click.Choice(["text", "json"]),
              default="text", show_default=True)
def suggest(paths, tokenizers, output_format):
    """Propose renamings for fields with PCD001/PCD002/PCD005 findings, verified by re-linting.

    Only suggestions whose renamed field re-lints without warnings or errors under the same
    tokenizer are printed. Input files are never modified. Exit status: 0, or 2 on bad input.
    """
    from auditor.errors import UsageError
    from auditor.lint.engine import LintOptions, lint
    from auditor.reporting.escape import strict_json
    from auditor.reporting.outputs import write_error, write_stdout
    from auditor.tokenizers.loader import DEFAULT_TOKENIZER, load_tokenizers

    try:
        loaded = load_tokenizers(list(tokenizers) or [DEFAULT_TOKENIZER])
        run = lint(list(paths), loaded, LintOptions(select=list(FIXED_CODES)))
        entries = collect(run)
        if run.errors and not run.files:
            pass  # nothing was read: only the error lines below
        elif output_format == "json":
            write_stdout(json.dumps(strict_json(entries), indent=2, ensure_ascii=False,
                                    allow_nan=False) + "\n", "json")
        else:
            write_stdout(format_text(entries), "suggest")
    except UsageError as error:
        write_error(f"pcdlint: error: {error}")
        sys.exit(2)
    for input_error in run.errors:
        write_error(str(input_error))
    sys.exit(2 if run.errors else 0)
