"""`eval --backend systemone`: a decision request's questions on labeled rows through a served
model (or a ``--replay`` recording), and ``--compare``'s two sides paired row by row.

The runs are composed here — the request loaded, the data checked as a stream before any request,
the probes prepared and announced, the answers' source opened and closed, the file's stamp
checked after — so the CLI only parses the options, hands in a `RunIO` and writes the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.backends import BackendOptions
    from auditor.decoder.inputs import DecisionInput
    from auditor.eval.answer_source import GateOptions, RunIO
    from auditor.eval.decisions import DecisionEvalOptions


class Interrupted(Exception):
    """The run was interrupted (Ctrl-C); the message says where its answers are kept."""


@dataclass(frozen=True)
class RequestEval:
    """What `eval --backend systemone` asks: the request and the data, the server (its settings,
    ``--model``), the gate, the split, the probes and which rows (``--limit``, ``--shard``)."""

    request_path: str
    data_path: str
    backend: BackendOptions
    model: str | None
    gate: GateOptions
    holdout: float = 0.3
    seed: int = 0
    perturb: tuple[str, ...] = ()
    orders: int = 4
    limit: int | None = None
    max_row_bytes: int | None = None
    shard: tuple[int, int] | None = None
    cache_dir: Path | None = None


@dataclass
class EvalOutcome:
    """A finished run: its report (per-row lists streamed from disk), and the replay's note."""

    report: dict
    replay_note: str | None = None

    @property
    def failed(self) -> bool:
        """A row failed (after the client's retries, or over the row limit): exit 1."""
        return bool(self.report["failed"])


@dataclass
class CompareOutcome:
    compared: dict
    reports: list[dict]
    replay_note: str | None = None

    @property
    def failed(self) -> bool:
        """A row failed on either side, or the gate (``--fail-if-worse``) failed: exit 1."""
        gate_failed = bool(self.compared["gate"] and self.compared["gate"]["failed"])
        return gate_failed or any(r["failed"] for r in self.reports)


def load_one(path: str) -> DecisionInput:
    """The one decision request of a file (eval takes a file with one)."""
    from auditor.decoder.inputs import load_requests

    requests = load_requests([path], None)
    if len(requests) != 1:
        raise UsageError(f"{path}: holds {len(requests)} decision requests; eval takes a file with one")
    return requests[0]


def _options(spec: RequestEval, progress: Any) -> DecisionEvalOptions:
    from auditor.eval.decisions import DecisionEvalOptions

    return DecisionEvalOptions(
        concurrency=spec.backend.concurrency,
        holdout=spec.holdout,
        seed=spec.seed,
        perturb=spec.perturb,
        orders=spec.orders,
        cache_dir=spec.cache_dir,
        progress=progress,
    )


def prepare_probes(options: DecisionEvalOptions, item: DecisionInput, rows: int, io: RunIO) -> None:
    """`eval --perturb`: the scope probe's design links, and the one line that states how many
    extra requests the probes send, before they send any."""
    from auditor.decoder.probes import announce, planned_requests
    from auditor.eval.decision_verify import design_refs

    if not options.perturb:
        return
    if "scope" in options.perturb:
        options.design = design_refs([item]).get(item.label, {})
    counts = planned_requests(item.body, list(options.perturb), "order", options.orders)
    per_row = {k: v * rows for k, v in counts.items() if k != "scope"}
    if "scope" in counts:
        per_row["scope"] = counts["scope"]  # once, not per row
    io.announce(f"pcdlint: {item.label}: {announce(per_row, f' over {rows} rows')}")


def _interrupted(cache_dir: Path | None) -> Interrupted:
    where = "" if cache_dir is None else f"; rows answered so far are cached in {cache_dir}"
    return Interrupted(f"eval interrupted{where}: rerun the same command to resume")


def evaluate_request(spec: RequestEval, io: RunIO, progress: Any) -> EvalOutcome:
    """One request on the data: every row checked first (bad input: a UsageError before any
    request), then answered row by row; the data file must not change during the run."""
    from auditor.eval.answer_source import AnswerSource, name_request
    from auditor.eval.decisions import DecisionSelection, run_decision_eval, selected_rows
    from auditor.eval.stream import DEFAULT_MAX_ROW_BYTES, DataStream, data_identity

    options = _options(spec, progress)
    item = load_one(spec.request_path)
    body = item.body
    stream = DataStream(spec.data_path, spec.max_row_bytes or DEFAULT_MAX_ROW_BYTES)
    selection = DecisionSelection(limit=spec.limit, shard=spec.shard)
    stamp = stream.stamp()
    total = sum(1 for _row in selected_rows(stream, body, selection))  # every row checked first
    if not total and spec.shard is None:
        raise UsageError(f"{stream.display}: no labeled rows")
    stream.file_digest()
    prepare_probes(options, item, total, io)
    inputs = [spec.request_path, spec.data_path]
    source = AnswerSource(spec.gate, spec.backend, spec.backend.route, io)
    if source.bypasses_cache:
        options.cache_dir = None
    source.announce()
    try:
        engine = source.engine(spec.backend.base_url, spec.model)
        report = run_decision_eval(
            engine,
            body,
            selected_rows(stream, body, selection),
            options,
            request_path=spec.request_path,
            data_path=spec.data_path,
            total=total,
            data={**data_identity(stream), "limit": spec.limit},
            shard=spec.shard,
        )
    except UsageError as error:
        raise name_request(error, spec.request_path) from None
    except KeyboardInterrupt:
        raise _interrupted(options.cache_dir) from None
    finally:
        source.finish(inputs)
    if stream.stamp() != stamp:
        raise UsageError(f"{stream.display}: the file changed during the run; its report is not written")
    if source.answers_block() is not None:
        report["server"]["answers"] = source.answers_block()
    return EvalOutcome(report, source.replay_note())


def compare_requests(spec: RequestEval, io: RunIO, progress: Any) -> CompareOutcome:
    """`--compare`: the rows through side A and side B (``--request-b``, ``--base-url-b``,
    ``--model-b``), paired row by row (auditor.eval.compare)."""
    from auditor.eval.answer_source import AnswerSource, name_request
    from auditor.eval.compare import compare_reports
    from auditor.eval.decisions import load_decision_rows, run_decision_eval

    gate = spec.gate
    request_b, base_url_b, model_b = gate.request_b, gate.base_url_b, gate.model_b
    if not (request_b or base_url_b or model_b):
        raise UsageError("--compare needs side B: --request-b FILE, --base-url-b URL and/or --model-b NAME")
    options = _options(spec, progress)
    inputs = [spec.request_path, spec.data_path] + ([request_b] if request_b else [])
    items = [load_one(path) for path in (spec.request_path, request_b or spec.request_path)]
    rows = [load_decision_rows(spec.data_path, item.body) for item in items]
    if spec.limit:
        rows = [r[: spec.limit] for r in rows]
    source = AnswerSource(gate, spec.backend, spec.backend.route, io)
    if source.bypasses_cache:
        options.cache_dir = None
    source.announce()
    reports = []
    base_url = spec.backend.base_url
    sides = (
        (spec.request_path, base_url, spec.model, None),
        (
            request_b or spec.request_path,
            base_url_b or base_url,
            model_b or spec.model,
            "b" if base_url_b else None,
        ),
    )
    try:
        for (path, side_url, side_model, side), item, side_rows in zip(sides, items, rows, strict=True):
            prepare_probes(options, item, len(side_rows), io)  # (each side's own design links)
            engine = source.engine(side_url, side_model, side)
            try:
                report = run_decision_eval(
                    engine, item.body, side_rows, options, request_path=path, data_path=spec.data_path
                )
            except UsageError as error:
                raise name_request(error, path) from None
            except KeyboardInterrupt:
                raise _interrupted(options.cache_dir) from None
            if source.answers_block() is not None:
                report["server"]["answers"] = source.answers_block()
            # the rows are paired in memory: the streamed predictions read back from their spill
            report["predictions"] = list(report["predictions"])
            reports.append(report)
    finally:
        source.finish(inputs)
    compared = compare_reports(
        reports[0], reports[1], seed=options.seed, margin=gate.fail_if_worse, alpha=gate.alpha
    )
    if source.replay is not None:
        compared["replay"] = source.answers_block()
    return CompareOutcome(compared, reports, source.replay_note())
