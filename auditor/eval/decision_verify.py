"""`verify` of decision requests (``--backend systemone``, or in-process ``--engine llm2jev``): every
request answered and probed, and where pcdlint's static verdict under ``--engine`` (from the
linter's refusal findings) and what the service did disagree.

The run is composed here, above the linter (the static verdict, the scope probe's design links)
and the decoder (the engines and probes); the CLI parses the options, hands in a `RunIO` and
prints the outcomes through auditor.reporting.decisions.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError
from auditor.redaction import masked_by

if TYPE_CHECKING:
    from collections.abc import Iterator

    from auditor.backends import BackendOptions
    from auditor.decoder.inputs import DecisionInput
    from auditor.eval.answer_source import GateOptions, RunIO

# the design rule the scope probe's verdict links to (by name: rules declare their codes)
WAY_OUT_RULE = "no-way-out"


@dataclass(frozen=True)
class DecisionVerify:
    """What a decision verify asks: the backend (``--backend systemone``: the server; in-process:
    ``--engine``'s engine), the engine whose static verdict is compared, the probes and their
    display orders, the recorded-answers gate and the ``--context`` state (already read)."""

    backend: BackendOptions
    engine_name: str | None
    probes: tuple[str, ...]
    orders: int
    gate: GateOptions
    context: str | None = None


@dataclass
class RequestOutcome:
    """One request: what was planned, answered (or refused), predicted and disagreed."""

    item: DecisionInput
    counts: dict[str, int]
    decision: Any = None
    refused: Any = None
    static: dict | None = None
    disagreements: list[dict] | None = None

    @property
    def flagged(self) -> bool:
        """Refused, pcdlint and the service disagree, or a probe flags the verdict (exit 1)."""
        return (
            self.refused is not None
            or bool(self.disagreements)
            or bool(self.decision is not None and self.decision.flagged)
        )


@dataclass
class DecisionVerifyRun:
    identity: dict
    outcomes: list[RequestOutcome] = field(default_factory=list)
    answers: dict | None = None  # the report's `answers`: recorded or replayed
    replay_note: str | None = None

    @property
    def flagged(self) -> bool:
        return any(outcome.flagged for outcome in self.outcomes)


def static_findings(paths: list[str], engines: list[str], tokenizer: Any = None) -> dict[str, list]:
    """pcdlint's findings per file under each engine (one lint run; each finding names its
    engine). ``tokenizer``: a loaded tokenizer or a spec (default: the default tokenizer — the
    refusal rules read counts and fields)."""
    from auditor.linter.engine import LintOptions, lint
    from auditor.tokenizers import DEFAULT_TOKENIZER, load_tokenizer

    if tokenizer is None or isinstance(tokenizer, str):
        tokenizer = load_tokenizer(tokenizer or DEFAULT_TOKENIZER)
    run = lint(list(paths), [tokenizer], LintOptions(engines=engines, suggestions=False, details=False))
    for error in run.errors:
        raise UsageError(str(error))
    return {str(Path(result.model.path)): list(result.findings) for result in run.files}


def _within(pointer: str, request_pointer: str) -> bool:
    return not request_pointer or pointer == request_pointer or pointer.startswith(request_pointer + "/")


def static_verdict(findings: list, engine: str, request_pointer: str) -> dict:
    """What pcdlint predicts the engine does with one request: refuse when a finding under that
    engine says with which HTTP status the engine refuses (its ``data.status``)."""
    refusing = [
        f
        for f in findings
        if f.engine == engine
        and isinstance(f.data, dict)
        and isinstance(f.data.get("status"), int)
        and _within(f.site_pointer or f.pointer, request_pointer)
    ]
    return {
        "engine": engine,
        "predicted": "refuse" if refusing else "accept",
        "findings": [{"code": f.code, "message": f.message, "status": f.data["status"]} for f in refusing],
    }


def compare_static_live(static: dict, refused: Any) -> list[dict]:
    """The disagreement between pcdlint's prediction and what the service did (empty: they agree)."""
    live = "refuse" if refused is not None else "accept"
    if static["predicted"] == live:
        return []
    if refused is not None:
        message = (
            f"pcdlint called the request valid for {static['engine']}, the server refused it "
            f"({refused.status}): {refused.message}"
        )
    else:
        first = static["findings"][0]
        message = (
            f"pcdlint predicted a refusal ({first['code']}: {first['message']}), "
            "the server answered the request"
        )
    return [
        {
            "pcdlint": static["predicted"],
            "server": live,
            "status": None if refused is None else refused.status,
            "server_message": None if refused is None else refused.message,
            "message": message,
        }
    ]


def design_refs(requests: list[DecisionInput]) -> dict[str, dict[str, str]]:
    """Per request (its label) and choice question: the no-way-out design finding the scope
    probe's verdict links to ("PCD201 no-way-out: URL"), where the design rule flags the question."""
    from auditor.linter.engine import LintOptions, lint
    from auditor.linter.pages import rule_help_uri
    from auditor.tokenizers import DEFAULT_TOKENIZER, load_tokenizer

    paths = list(dict.fromkeys(item.path for item in requests))
    run = lint(
        paths,
        [load_tokenizer(DEFAULT_TOKENIZER)],
        LintOptions(select=[WAY_OUT_RULE], suggestions=False, details=False),
    )
    found: dict[str, dict[str, str]] = {}
    for result in run.files:
        for f in result.findings:
            if f.name == WAY_OUT_RULE:
                found.setdefault(str(result.model.path), {})[f.site_pointer or f.pointer] = (
                    f"{f.code} {f.name}: {rule_help_uri(f.code)}"
                )
    refs: dict[str, dict[str, str]] = {}
    for item in requests:
        pointers = found.get(str(item.path), {})
        for qid in item.body["questions"]:
            escaped = str(qid).replace("~", "~0").replace("/", "~1")
            ref = pointers.get(f"{item.pointer}/questions/{escaped}")
            if ref is not None:
                refs.setdefault(item.label, {})[qid] = ref
    return refs


@contextmanager
def _redacted(engine: Any, label: str = "") -> Iterator[None]:
    """A DecoderError quoting a server's answer, with the API key masked, naming the request."""
    from auditor.decoder.errors import DecoderError

    try:
        yield
    except DecoderError as exc:
        text = f"{label}: {exc}" if label else str(exc)
        raise DecoderError(masked_by(engine, text)) from None


def verify_requests(
    paths: list[str], options: DecisionVerify, *, allow_download: bool, progress: Any, io: RunIO
) -> DecisionVerifyRun:
    """Answer and probe every request of the files. Each request's probes state (``io.announce``)
    how many extra requests they send before sending; a refusal is an outcome, not an error."""
    from auditor.decoder.inputs import load_requests
    from auditor.decoder.open import open_backend
    from auditor.decoder.probes import announce as probe_line
    from auditor.decoder.probes import planned_requests, probe_decision, resolve_probes
    from auditor.decoder.systemone import DecisionRefused
    from auditor.eval.answer_source import AnswerSource, name_request

    probes, order_mode = resolve_probes(options.probes)
    requests = load_requests(paths, options.context)
    engine_name = options.engine_name
    source = None
    if options.backend.name == "systemone":
        source = AnswerSource(options.gate, options.backend, options.backend.route, io)
        source.announce()
        engine = source.engine(options.backend.base_url, options.backend.model)
    else:
        if options.backend.name == "openai":
            raise UsageError(f"--engine {engine_name} is for --backend in-process or --backend systemone")
        opened = replace(options.backend, engine=engine_name, allow_download=allow_download)
        engine = open_backend(opened, decisions=True, progress=progress)
    run = DecisionVerifyRun(identity=engine.identity())
    try:
        by_file: dict[str, list] = {}
        if engine_name is not None:  # the model's own tokenizer when it runs here
            loaded = getattr(engine, "loaded", None)
            by_file = static_findings(paths, [engine_name], loaded.linter_tokenizer if loaded else None)
        design = design_refs(requests) if "scope" in probes else {}
        for item in requests:
            outcome = RequestOutcome(item, planned_requests(item.body, probes, order_mode, options.orders))
            io.announce(f"pcdlint: {item.label}: {probe_line(outcome.counts)}")
            try:
                with progress.stage(f"decide {Path(item.path).name}"), _redacted(engine, item.label):
                    outcome.decision = probe_decision(
                        engine,
                        item.body,
                        probes,
                        order_mode,
                        orders=options.orders,
                        design=design.get(item.label, {}),
                    )
            except DecisionRefused as exc:
                outcome.refused = exc
            except UsageError as error:
                raise name_request(error, item.label) from None
            if engine_name is not None:
                findings = by_file.get(str(Path(item.path)), [])
                outcome.static = static_verdict(findings, engine_name, item.pointer)
                outcome.disagreements = compare_static_live(outcome.static, outcome.refused)
            run.outcomes.append(outcome)
    finally:
        if source is not None:
            source.finish(list(paths))
        else:
            engine.close()
    if source is not None:
        run.answers, run.replay_note = source.answers_block(), source.replay_note()
    return run
