"""`verify` and `check --verify` of schemas: lint with the model's own tokenizer, run the reference
decoder (auditor.decoder) on the model, and attach what it measured to the findings.

Each file is one request: all its enum-like fields are decoded together, as a PCD engine would;
verdicts are given for the fields the linter flagged. The CLI parses the options and prints; the
run is composed here, above the linter and the decoder.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError

if TYPE_CHECKING:  # `pcdlint check` without --verify loads neither the decoder nor the linter here
    from auditor.backends import BackendOptions
    from auditor.decoder.progress import Progress
    from auditor.decoder.result import FieldResult, VerifyResult
    from auditor.linter.engine import LintRun


@dataclass(frozen=True)
class SchemaVerify:
    """What a schema verify asks of the model: the backend to open, the document (``--context``,
    already read), which fields to re-prefill (``--coupling``) and the cache-parity check."""

    backend: BackendOptions
    context: str | None
    coupling: bool | list[str]
    parity: str


@dataclass
class SchemaVerifyRun:
    """A finished verify of schema files: the lint run and each verified file's measurements."""

    lint: LintRun
    results: list[tuple[str, VerifyResult]]

    @property
    def deciding(self) -> bool:
        """A flagged flaw decides a field's answer on this context (verify's exit 1)."""
        return any(result.deciding for _path, result in self.results)


def coupling_fields(coupling_arg: str | None) -> bool | list[str]:
    """``--coupling``: off (None), every field ("*"), or the fields named (FIELD,…)."""
    if coupling_arg is None:
        return False
    if coupling_arg == "*":
        return True
    return [name.strip() for name in coupling_arg.split(",") if name.strip()]


def open_field_backend(options: BackendOptions, allow_download: bool, progress: Progress) -> Any:
    """The field backend the options name (the model in-process, or an OpenAI-compatible server),
    by the decoder's one factory; its failure to open is a usage error."""
    from auditor.decoder import DecoderError
    from auditor.decoder.open import open_backend

    try:
        return open_backend(replace(options, allow_download=allow_download), progress=progress)
    except DecoderError as exc:
        raise UsageError(str(exc)) from None


def verify_schemas(
    paths: list[str], options: SchemaVerify, *, allow_download: bool, progress: Progress
) -> SchemaVerifyRun:
    """`pcdlint verify` of schema files: every file linted with the model's tokenizer, every field
    of every file measured, the verdicts attached to the findings."""
    from auditor.linter.engine import LintOptions, lint

    backend = open_field_backend(options.backend, allow_download, progress)
    run = lint(list(paths), [backend.linter_tokenizer], LintOptions())
    for error in run.errors:
        raise UsageError(str(error))
    return SchemaVerifyRun(run, verify_run(run, backend, options, only_flagged=False, progress=progress))


def verify_flagged(run: LintRun, options: SchemaVerify, *, allow_download: bool, progress: Progress) -> None:
    """`check --verify`: the flagged fields of every file of a finished lint run measured on the
    model, their findings given the measurements."""
    from auditor.decoder import DecoderError

    try:
        backend = open_field_backend(options.backend, allow_download, progress)
        verify_run(run, backend, options, only_flagged=True, progress=progress)
    except DecoderError as exc:
        raise UsageError(str(exc)) from None


def verify_run(
    run: LintRun, loaded: Any, options: SchemaVerify, *, only_flagged: bool, progress: Progress | None = None
) -> list[tuple[str, VerifyResult]]:
    """Verify each file of a finished lint run; attach verdicts to its findings.

    Returns (path, VerifyResult) per verified file. Findings of a verified field get
    `finding.verification` = that field's measured result (any tokenizer's finding: the
    result says which model and tokenizer measured it).
    """
    from auditor.decoder import specs_for_sites, verify_fields
    from auditor.decoder.prompt import preset_context
    from auditor.eval.verdicts import annotate, confirmation_labels

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
            preset_context(result.model.document.data) or options.context or "",
            model=loaded,
            coupling=options.coupling,
            parity=options.parity,
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
