"""`pcdlint suggest`: verified renamings for fields with first-token scoring problems, and
`--write` / `--in-place`, which apply the best-ranked one of every field to a copy (or, when
asked, to the input).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from auditor.lint.suggest import FIXED_CODES, choose, rewrite


def write_fixed(run, entries: list[dict], target: str, in_place: bool) -> tuple[str, str | None, int]:
    """Write the fixed copy (and, for letter slots, the legend beside it); returns
    (fixed path, legend path or None, fields renamed)."""
    from auditor.errors import UsageError
    from auditor.reporting.outputs import write_report

    [result] = run.files
    model = result.model
    chosen = choose(entries)
    sites = {site.pointer: site for site in model.sites}
    yaml_file = Path(model.path).suffix.lower() in (".yaml", ".yml")
    renamings = [(sites[p].option_spans, s["options"]) for p, s in chosen.items() if p in sites]
    text = rewrite(model.document.text, yaml_file, renamings)
    inputs = [] if in_place else [model.path]
    write_report(text, target, "--write", inputs)
    legend = {p: {"field": sites[p].field, "slots": {m["to"]: m["from"] for m in s["mapping"]}}
              for p, s in chosen.items() if s["strategy"] == "letter-slots" and p in sites}
    legend_path = None
    if legend:
        legend_path = str(Path(target).with_suffix(".slots.json"))
        if Path(legend_path).resolve() == Path(model.path).resolve():
            raise UsageError(f"--write {target}: the slot legend would overwrite the input")
        write_report(json.dumps(legend, indent=2, ensure_ascii=False) + "\n", legend_path,
                     "--write", [model.path])
    return target, legend_path, len(renamings)


def collect(run) -> list[dict]:
    """One entry per (file, field, tokenizer) with a PCD001/PCD002/PCD005 warning or error."""
    from auditor.lint.registry import load_rules

    offered = set(FIXED_CODES) | {code for code, rule in load_rules().items() if rule.suggests}
    groups: dict[tuple, dict] = {}
    for finding in run.findings:
        if finding.code not in offered or finding.severity == "info":
            continue
        key = (finding.path, finding.site_pointer, finding.tokenizer)
        entry = groups.setdefault(key, {
            "path": finding.path, "pointer": finding.site_pointer, "field": finding.field,
            "line": finding.line, "tokenizer": finding.tokenizer, "engine": finding.engine or run.engines[0].name,
            "codes": [], "suggestions": finding.data.get("suggestions", []),
        })
        if finding.code not in entry["codes"]:
            entry["codes"].append(finding.code)
    return list(groups.values())


def format_text(entries: list[dict]) -> str:
    lines = []
    for e in entries:
        lines.append(f"{e['path']}:{e['line']}: {e['field']} [{e['tokenizer']}] {', '.join(e['codes'])}")
        if not e["suggestions"]:
            lines.append("  no renaming tried re-lints clean and keeps every distinguishing word; "
                         "see `pcdlint explain` for other fixes")
        for rank, s in enumerate(e["suggestions"], 1):
            pairs = ", ".join(f"{m['from']} -> {m['to']}" for m in s["mapping"][:8])
            more = f", … ({len(s['mapping'])} options)" if len(s["mapping"]) > 8 else ""
            kept = ("legend maps letters back" if s["strategy"] == "letter-slots"
                    else f"keeps {round(100 * s.get('words_kept', 1))} % of the words")
            lines.append(f"  {rank}. {s['strategy']} (re-lints clean; {kept}): {pairs}{more}")
    fixed = sum(1 for e in entries if e["suggestions"])
    if entries:
        one = len(entries) == 1
        lines.append(f"{len(entries)} field{'' if one else 's'} need{'s' if one else ''} a fix; "
                     f"{fixed} {'has' if fixed == 1 else 'have'} a verified suggestion"
                     + ("" if fixed == len(entries) else f"; {len(entries) - fixed} have none"))
    else:
        lines.append("No field needs a fix.")
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, metavar="SPEC",
              help="Tokenizer to verify with (repeatable). Default: qwen2.5.")
@click.option("-f", "--format", "output_format", type=click.Choice(["text", "json"]),
              default="text", show_default=True)
@click.option("--write", "write_to", metavar="FILE",
              help="Write a copy of the (single) input with the first suggestion of every field "
                   "applied, and FILE's .slots.json legend when letter slots are used. Never "
                   "the input itself.")
@click.option("--in-place", is_flag=True, help="Apply the fixes to the input file itself.")
@click.option("--engine", "engine", default=None, metavar="NAME",
              help="Engine profile the renamings must re-lint clean under (gather, rlcd-mlx, "
                   "openjev, constrained, full-sequence), or the decision engine whose name "
                   "rules a decision request's renamings follow. Default: gather.")
def suggest(paths, tokenizers, output_format, write_to, in_place, engine):
    """Propose renamings for fields with PCD001/PCD002/PCD005 warnings or errors, verified by
    re-linting.

    Only suggestions whose renamed field re-lints without warnings or errors under the same
    tokenizer, and that keep every word telling an option apart from its siblings, are printed,
    those keeping the most words first. Input files are modified only with --in-place.

    Exit status: 0 every flagged field has a verified fix, 1 some has none, 2 bad input.
    """
    from auditor.errors import UsageError
    from auditor.lint.engine import LintOptions, lint
    from auditor.lint.registry import load_rules
    from auditor.reporting.escape import strict_json
    from auditor.reporting.outputs import write_error, write_stdout
    from auditor.tokenizers.loader import DEFAULT_TOKENIZER, load_tokenizers

    try:
        if write_to and in_place:
            raise UsageError("--write and --in-place exclude each other")
        if (write_to or in_place) and (len(paths) != 1 or not Path(paths[0]).is_file()):
            raise UsageError(f"{'--write' if write_to else '--in-place'} needs exactly one input file")
        loaded = load_tokenizers(list(tokenizers) or [DEFAULT_TOKENIZER])
        options = LintOptions(select=[*FIXED_CODES, *(c for c, r in load_rules().items() if r.suggests)])
        if engine:
            options.engines = [engine]
        run = lint(list(paths), loaded, options)
        entries = collect(run)
        written = None
        if (write_to or in_place) and run.files:
            written = write_fixed(run, entries, write_to or paths[0], in_place)
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
    if written is not None:
        target, legend, count = written
        write_error(f"pcdlint: wrote {target} with {count} field{'s' if count != 1 else ''} renamed"
                    + (f" and the letter-slot legend {legend}" if legend else "")
                    + "; update the code that reads these values")
    for input_error in run.errors:
        write_error(str(input_error))
    if run.errors:
        sys.exit(2)
    sys.exit(1 if any(not e["suggestions"] for e in entries) else 0)
