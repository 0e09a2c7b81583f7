"""The `pcdlint` command line: check, rules, explain."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from auditor.cli.choices import engine_option, format_option
from auditor.cli.common import color_stdout, fail, write_output
from auditor.cli.verify import attach_to_check, model_options
from auditor.distribution import package_hint
from auditor.errors import UsageError
from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from auditor.linter.registry import SEVERITIES, load_rules, severity_rank
from auditor.linter.selection import close_rules, find_rule
from auditor.reporting.outputs import check_outputs, write_error, write_report, write_stdout
from auditor.version import __version__

if TYPE_CHECKING:
    from auditor.cli.check_options import CheckOptions
    from auditor.linter.engine import LintRun


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pcdlint")
def cli() -> None:
    """Lint enum schemas against LLM tokenizers before parallel constrained decoding runs."""
    from auditor import redaction

    redaction.clear()  # the keys of this run only (one process may run several: the tests)


@cli.command()
@click.argument("paths", nargs=-1)
@click.option(
    "-t",
    "--tokenizer",
    "tokenizers",
    multiple=True,
    metavar="SPEC",
    help="Built-in name (see `pcdlint tokenizers`; 'all' = every installed one), "
    "tokenizer.json, model dir, .gguf, .model, tekken .json, .tiktoken or cached "
    "hub id. Repeatable. Default: qwen2.5.",
)
@click.option("--allow-download", is_flag=True, help="Let hub ids download (default: cache only).")
@engine_option(
    "--engine",
    "engines",
    multiple=True,
    help="Engine whose consequences to report (`pcdlint engines`): {engines}. Repeatable.",
)
@click.option(
    "--tiktoken-pattern",
    metavar="cl100k|o200k|qwen2|REGEX",
    default=None,
    help="Split regex for .tiktoken files: a named one (cl100k, o200k, qwen2) or a regex of "
    "your own (default: o200k for >= 180,000 ranks, qwen2 for Qwen's 151,643, else cl100k).",
)
@click.option(
    "--chat-template",
    "chat_template",
    metavar="FILE",
    default=None,
    help="Chat template decision engines render questions in when checking labels: a "
    "Jinja file, tokenizer_config.json, chat_template.json or .gguf (default: the "
    "tokenizer's own, where it ships one).",
)
@format_option(
    "check",
    default=None,
    help="Output format. Default: text (github when GITHUB_ACTIONS=true). Config: format.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--output-sarif", type=click.Path(dir_okay=False), help="Also write SARIF 2.1.0 here.")
@click.option("--output-html", type=click.Path(dir_okay=False), help="Also write the HTML report here.")
@click.option("--output-json", type=click.Path(dir_okay=False), help="Also write the JSON report here.")
@click.option("--select", multiple=True, help="Rule codes, code prefixes or names to enable.")
@click.option("--ignore", multiple=True, help="Rule codes, code prefixes or names to disable.")
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="error",
    show_default=True,
    help="Lowest severity that makes the exit code 1.",
)
@click.option(
    "--max-warnings",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Exit 1 when more than N warning findings remain after suppressions and the baseline "
    "(errors still fail by --fail-on). Config: max-warnings.",
)
@click.option("--exit-zero", is_flag=True, help="Report findings but exit 0 (2 still means bad input).")
@click.option(
    "--show-info", is_flag=True, help="Also print info findings (text and github; implied by --fail-on info)."
)
@click.option(
    "--cost",
    "show_cost",
    is_flag=True,
    help="Print the cost model (PCD vs naive forward passes) in text output.",
)
@click.option("--statistics", is_flag=True, help="Print finding counts per rule instead of findings.")
@click.option("-q", "--quiet", is_flag=True, help="Only findings and errors, no summary.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Re-parse and re-encode every file (skip the analysis and encoding caches).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    metavar="N",
    help="Worker processes over files (default: one per core from 16 files on; 1: "
    "none). The output is the same either way.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    help="Config file (default: nearest .pcdlint.toml or pyproject.toml [tool.pcdlint]).",
)
@click.option("--show-config", is_flag=True, help="Print the effective configuration and exit.")
@click.option(
    "--baseline", "baseline_file", metavar="FILE", help="Report only findings not recorded in this baseline."
)
@click.option("--write-baseline", metavar="FILE", help="Record today's findings here; exit 0.")
@click.option(
    "--stdin-filename",
    metavar="NAME",
    help="Name for `-` (standard input) in messages and config matching; its suffix picks JSON or YAML.",
)
@click.option(
    "--allow-unrecognized/--no-allow-unrecognized",
    default=None,
    help="A file named here that holds no schema is listed, not an error (exit 2). "
    "Config: allow-unrecognized.",
)
@click.option(
    "--verify",
    "run_verify",
    is_flag=True,
    help="Run the flagged fields through a real model (see `pcdlint verify`).",
)
@model_options("check")
def check(**params: Any) -> NoReturn:
    """Lint schema files, directories of *.json, *.yaml, *.yml, `-` (stdin) or a Python
    object `pkg.module:Name` (Pydantic model, Enum, Literal alias, TypedDict, dataclass).

    By default the default rule set runs (`pcdlint rules`), info findings are counted but not
    printed, and the last line says what to do next.

    Exit status: 0 nothing at or above --fail-on (or --exit-zero), 1 findings, 2 usage or input error.
    """
    from auditor.cli.check_options import parse_check_options

    try:
        options = parse_check_options(params, click.get_current_context().get_parameter_source)
        run, unrecognized_error = _run_check(options)
    except UsageError as error:
        fail(str(error))
    for notice in run.skipped:
        write_error(f"{notice.path}: note: {str(notice).removeprefix(notice.path + ': ')}")
    for input_error in run.errors:
        write_error(str(input_error))
    if unrecognized_error:
        write_error(f"pcdlint: error: {unrecognized_error}")
    if run.errors or unrecognized_error:
        sys.exit(EXIT_USAGE)
    if options.write_baseline or options.exit_zero:
        sys.exit(EXIT_CLEAN)
    worst = run.max_severity()
    if worst is not None and severity_rank(worst) >= severity_rank(options.fail_on):
        sys.exit(EXIT_FINDINGS)
    if options.max_warnings is not None:
        warnings = sum(1 for finding in run.findings if finding.severity == "warning")
        if warnings > options.max_warnings:
            write_error(
                f"pcdlint: {warnings} warning{'s' if warnings != 1 else ''}, "
                f"more than --max-warnings {options.max_warnings}"
            )
            sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


def _run_check(options: CheckOptions) -> tuple[LintRun, str | None]:
    """Lint, verify, apply the baseline and write every report; the run and why it exits 2 (if
    it does for want of a schema). A usage error raises `UsageError`."""
    from auditor.linter import baseline
    from auditor.linter.engine import lint, validate_selectors
    from auditor.reporting import formatters, render_output
    from auditor.tokenizers.loader import load_tokenizers

    config, paths, output_format = options.config, list(options.paths), options.output_format
    if options.show_config:
        write_stdout(config.render(), "text")
        sys.exit(EXIT_CLEAN)
    if not paths:
        raise UsageError("missing argument PATH... (files or directories to lint)")
    outputs = options.outputs
    check_outputs(outputs, paths)
    lint_options = config.lint_options()
    lint_options.engine_profiles()  # an unknown --engine is a usage error before any work
    shown = [
        formatters()[name] for name in {output_format} | {n for n, target in options.extra_outputs if target}
    ]
    lint_options.suggestions = any(shown_format.suggestions for shown_format in shown)
    lint_options.details = any(shown_format.details for shown_format in shown)
    lint_options.jobs = options.jobs
    if options.chat_template is not None:
        from auditor.pcd.chat import ChatTemplateError, check_template
        from auditor.tokenizers.templates import read_chat_template

        lint_options.chat_template = read_chat_template(options.chat_template)
        for template in (lint_options.chat_template.source, lint_options.chat_template.systemone or ""):
            try:
                check_template(template)
            except ChatTemplateError as error:
                raise UsageError(f"--chat-template {options.chat_template}: {error}") from None
    validate_selectors(list(options.select), "--select")
    validate_selectors(list(options.ignore), "--ignore")
    baseline_entries = baseline.load_baseline(options.baseline_file) if options.baseline_file else None
    loaded = load_tokenizers(list(options.tokenizers), options.allow_download, options.tiktoken_pattern)
    if paths.count("-") > 1:
        raise UsageError("'-' (standard input) can be named only once")
    run = lint(
        paths,
        loaded,
        lint_options,
        use_cache=options.use_cache,
        stdin_filename=options.stdin_filename,
        max_bytes=options.max_bytes,
        max_depth=options.max_depth,
    )
    # files found inside linted directories are inputs too: never overwritten
    inputs = paths + [r.model.path for r in run.files]
    check_outputs(outputs, inputs)  # every output, before any report (stdout included) is written
    if options.run_verify:
        attach_to_check(run, options.verify, options.allow_download, options.quiet)
    if options.write_baseline:
        text, count = baseline.baseline_text(run)
        write_report(text, options.write_baseline, "--write-baseline", inputs)
        write_error(f"pcdlint: wrote {count} finding(s) to baseline {options.write_baseline}")
    if baseline_entries is not None:
        applied = baseline.apply_baseline(run, baseline_entries)
        stale = len(applied.stale)
        write_error(
            f"pcdlint: baseline {options.baseline_file}: {applied.hidden} known finding(s) hidden; "
            f"{stale} baseline entr{'y' if stale == 1 else 'ies'} no longer occur"
        )
    color = options.output is None and output_format == "text" and color_stdout()
    unrecognized_error = run.unrecognized_error(options.allow_unrecognized)
    # a run that exits 2 has no verdict: its findings (if any) are shown, never a summary that
    # says the fields are fine
    failed = bool(run.errors or unrecognized_error)
    report = render_output(
        output_format,
        run,
        # (text: the summary still ends the output, with the files in error, and no verdict)
        quiet=options.quiet or (failed and output_format != "text"),
        failed=failed,
        color=color,
        show_info=options.show_info,
        cost=options.show_cost,
        statistics=options.statistics,
        fail_on=options.fail_on,
    )
    write_output(report, options.output, inputs, color, kind=output_format)
    for name, target in options.extra_outputs:
        if target is not None:
            write_output(render_output(name, run), target, inputs, flag=f"--output-{name}", kind=name)
    return run, unrecognized_error


@cli.command("rules")
def rules_command() -> None:
    """List every rule: code, name, default severity, whether it is on by default, and why."""
    from auditor.linter.registry import DEFAULT_REASON

    rules = load_rules().values()
    for rule in rules:
        on = "default" if rule.default else "opt-in"
        click.echo(f"{rule.code}  {rule.name:<28} {rule.severity:<8} {on:<8} {rule.summary}")
    click.echo(f"\ndefault: on unless deselected; these {DEFAULT_REASON}.")
    for rule in rules:
        if not rule.default:
            click.echo(f"opt-in {rule.code}: {rule.opt_in_reason}")
    click.echo("Bring opt-in rules in with `--select ALL`, `--select CODE` or extend-select in the config.")


@cli.command("tokenizers")
@format_option("tokenizers")
def tokenizers_command(output_format: str) -> None:
    """List the built-in tokenizers: installed or not, source package, vocab size, cache state."""
    import json

    from auditor.tokenizers.builtins import describe_builtins

    rows = describe_builtins()
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(f"{'name':<15} {'installed':<9} {'package':<19} {'vocab':>7}  {'cache':<13} aliases")
    for row in rows:
        click.echo(
            f"{row['name']:<15} {'yes' if row['installed'] else 'no':<9} {row['package']:<19} "
            f"{row['vocab_size']:>7}  {row['cache']:<13} {', '.join(row['aliases'])}"
        )
    missing = sorted({row["package"] for row in rows if not row["installed"]})
    if missing:
        click.echo(f"not installed: {'; '.join(package_hint(package) for package in missing)}")
    click.echo("`-t all` lints with every installed one.")


@cli.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Print a rule's documentation (by code or name)."""
    found = find_rule(rule)
    if found is None:
        guesses = close_rules(rule)
        hint = f"; did you mean {' or '.join(guesses)}?" if guesses else ""
        fail(f"unknown rule '{rule}'{hint} (see `pcdlint rules`)")
    click.echo(found.doc_markdown, nl=False)


from auditor.cli.conform import conform  # noqa: E402  (subcommands in their own modules)
from auditor.cli.editor import mcp_command, server_command  # noqa: E402
from auditor.cli.engines import engines_command  # noqa: E402
from auditor.cli.eval import eval_command  # noqa: E402
from auditor.cli.eval_merge import eval_merge_command  # noqa: E402
from auditor.cli.suggest import suggest  # noqa: E402
from auditor.cli.verify import verify  # noqa: E402

cli.add_command(conform)
cli.add_command(engines_command)
cli.add_command(eval_command)
cli.add_command(eval_merge_command)
cli.add_command(mcp_command)
cli.add_command(server_command)
cli.add_command(suggest)
cli.add_command(verify)


def main() -> None:
    try:
        cli(prog_name="pcdlint")
    except SystemExit as done:
        _exit_now(done.code)
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # a bug must still be one line; PCDLINT_DEBUG=1 shows the traceback
        if os.environ.get("PCDLINT_DEBUG"):
            raise
        fail(f"internal error: {type(exc).__name__}: {exc} (rerun with PCDLINT_DEBUG=1 and report it)")


def _exit_now(code: object) -> None:
    """End the process with `code` at once, its output flushed, where nothing is left to run at
    exit (no atexit callback, no weakref finalizer, no other thread): the interpreter's teardown
    only frees memory, and freeing a run's objects (a vocabulary's tables, the memo, the models)
    took 35-60 ms of a check (docs/benchmarks.md). Otherwise, or where the flush fails, the
    normal exit goes on."""
    import atexit
    import weakref

    if code is not None and type(code) is not int:
        return
    threading = sys.modules.get("threading")
    callbacks = getattr(atexit, "_ncallbacks", None)
    registry = getattr(weakref.finalize, "_registry", None)
    if callbacks is None or callbacks() or registry is None or registry:
        return
    if threading is not None and threading.active_count() != 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code or 0)
