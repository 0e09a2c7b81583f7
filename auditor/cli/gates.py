"""The CI gate options of `verify` and `eval` on served decision models: recorded answers
(``--record`` / ``--replay``, ``auditor.decoder.record``) and the paired comparison of two sides
(``eval --compare``, ``auditor.eval.compare``).

``AnswerSource`` builds what answers a side's requests: the server through the one HTTP client,
wrapped to record every request and answer; or, with ``--replay``, the recording itself (no
client is made, nothing is sent). ``--record`` and ``--replay`` bypass the per-row score cache:
a recording holds every request the run makes, and a replay answers every one from the file.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.backends import BackendOptions
    from auditor.cli.run_options import GateOptions, ServedOptions

# the design rule the scope probe's verdict links to (by name: rules declare their codes)
WAY_OUT_RULE = "no-way-out"

RECORD_OPTIONS = [
    click.option(
        "--record",
        "record_path",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="--backend systemone: write every request and the server's answer here (JSONL, keyed by "
        "the body and the model, never the URL or the API key), to --replay in CI.",
    ),
    click.option(
        "--replay",
        "replay_path",
        metavar="FILE",
        help="--backend systemone: answer every request from a --record file, with no network; a "
        "request it does not hold is an error (exit 2) naming it.",
    ),
]
RECORD_KEYS = ("record_path", "replay_path")

COMPARE_OPTIONS = [
    click.option(
        "--compare",
        is_flag=True,
        help="--backend systemone: run the rows through side A and side B (--request-b, --base-url-b "
        "and/or --model-b) and compare them row by row.",
    ),
    click.option("--request-b", metavar="FILE", help="--compare: side B's request file (default: the same)."),
    click.option(
        "--base-url-b", metavar="URL", help="--compare: side B's server root (default: --base-url)."
    ),
    click.option("--model-b", metavar="NAME", help="--compare: side B's model name (default: --model)."),
    click.option(
        "--fail-if-worse",
        type=click.FloatRange(0.0, 1.0),
        metavar="MARGIN",
        help="--compare: exit 1 when B's accuracy on a question is below A's by more than MARGIN "
        "and McNemar's exact test rejects equal accuracy at --alpha.",
    ),
    click.option(
        "--alpha",
        type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
        default=0.05,
        show_default=True,
        help="--fail-if-worse: the significance level of McNemar's test.",
    ),
]
COMPARE_KEYS = ("compare", "request_b", "base_url_b", "model_b", "fail_if_worse", "alpha")


def check_gate_options(gate: GateOptions, backend: str) -> None:
    """The gate options' own rules, before anything is read or sent (``backend``: its one name)."""
    if gate.record_path and gate.replay_path:
        raise UsageError("--record and --replay exclude each other (record once, then replay)")
    if (gate.record_path or gate.replay_path) and backend != "systemone":
        raise UsageError("--record and --replay are for --backend systemone (served decision models)")
    side_b = [
        flag
        for flag, value in (
            ("--request-b", gate.request_b),
            ("--base-url-b", gate.base_url_b),
            ("--model-b", gate.model_b),
        )
        if value
    ]
    if gate.compare and backend != "systemone":
        raise UsageError("--compare is for --backend systemone (served decision models)")
    if not gate.compare:
        extra = side_b + (["--fail-if-worse"] if gate.fail_if_worse is not None else [])
        if extra:
            raise UsageError(f"{extra[0]} is for eval --compare")


class AnswerSource:
    """What answers a run's requests: the server (recorded with ``--record``) or a recording."""

    def __init__(self, gate: GateOptions, backend: BackendOptions, route: str) -> None:
        from auditor.decoder.record import Recording

        self.backend, self.route = backend, route
        self.record_path: str | None = gate.record_path
        self.replay_path: str | None = gate.replay_path
        self.recording = Recording() if self.record_path else None
        self.replay = Recording.load(self.replay_path) if self.replay_path else None
        self.opened: list[Any] = []  # the backends opened here, closed by close()
        self.engines: list[Any] = []

    def check_target(self, inputs: list[str]) -> None:
        """A --record file that is an input (or unwritable) is refused before anything is sent."""
        from auditor.reporting.outputs import check_outputs

        if self.record_path:
            check_outputs([("--record", self.record_path)], inputs)

    @property
    def bypasses_cache(self) -> bool:
        return bool(self.record_path or self.replay_path)

    def engine(self, base_url: str | None, model: str | None, side: str | None = None) -> Any:
        from auditor.decoder.open import open_backend
        from auditor.decoder.record import RecordingBackend, ReplayBackend

        if self.replay is not None:
            route = self.route if self.route.startswith("/") else "/" + self.route
            endpoint = base_url.rstrip("/") + route if base_url else f"replay of {self.replay_path}"
            engine: Any = ReplayBackend(
                self.replay, str(self.replay_path), model=model, endpoint=endpoint, side=side
            )
        else:
            if not base_url:
                raise UsageError(
                    "--backend systemone needs --base-url URL (the server root, e.g. "
                    "http://127.0.0.1:8080), or --replay FILE"
                )
            engine = open_backend(
                replace(self.backend, backend="systemone", base_url=base_url, model=model, route=self.route),
                decisions=True,
            )
            self.opened.append(engine)
            if self.recording is not None:
                engine = RecordingBackend(engine, self.recording, side)
        self.engines.append(engine)
        return engine

    def answers_block(self) -> dict | None:
        """The report's ``server.answers``: where the answers came from (record or replay)."""
        if self.replay is not None:
            return {
                "mode": "replay",
                "path": self.replay_path,
                "recorded": self.replay.header.get("recorded"),
                "servers": self.replay.header.get("servers"),
                "replayed": sum(getattr(e, "replayed", 0) for e in self.engines),
                "note": self.replay.when(),
            }
        if self.recording is not None:
            return {"mode": "record", "path": self.record_path, "requests": len(self.recording.entries)}
        return None

    def announce(self) -> None:
        if self.replay is not None:
            click.echo(f"pcdlint: replaying {self.replay_path}: {self.replay.when()}", err=True)

    def finish(self, inputs: list[str]) -> None:
        """Write the recording (also after an interruption: what was answered is kept); close."""
        from auditor.cli.common import write_output
        from auditor.version import __version__

        try:
            if self.recording is not None and self.record_path:
                redactors = [getattr(e, "redact", None) for e in self.engines]

                def redact(text: str) -> str:
                    for mask in redactors:
                        text = mask(text) if mask is not None else text
                    return text

                write_output(
                    self.recording.dumps(__version__, redact),
                    self.record_path,
                    inputs,
                    flag="--record",
                    kind="json",
                )
        finally:
            self.close()

    def close(self) -> None:
        for opened in self.opened:
            opened.close()
        self.opened = []


def name_request(error: UsageError, request_path: str) -> UsageError:
    """A replay miss with the request file named."""
    from auditor.decoder.record import NotRecorded

    return UsageError(f"{request_path}: {error}") if isinstance(error, NotRecorded) else error


def eval_compare(
    request_path: str,
    data_path: str,
    served_opts: ServedOptions,
    load_one: Any,
    *,
    model: str | None,
    options: Any,
    limit: int | None,
    output_format: str,
    output: str | None,
    output_json: str | None,
    output_html: str | None,
    quiet: bool = False,
) -> int:
    """`eval --backend systemone --compare`: both sides, the paired report, the exit code.
    ``load_one(path)``: the one decision request of a file (``auditor.cli.served``)."""
    from auditor.cli.common import write_output
    from auditor.eval.compare import compare_reports, render_compare_text
    from auditor.eval.decisions import load_decision_rows, run_decision_eval
    from auditor.reporting.compare_html import render_compare_html
    from auditor.reporting.outputs import check_outputs

    gate = served_opts.gate
    request_b, base_url_b, model_b = gate.request_b, gate.base_url_b, gate.model_b
    if not (request_b or base_url_b or model_b):
        raise UsageError("--compare needs side B: --request-b FILE, --base-url-b URL and/or --model-b NAME")
    inputs = [request_path, data_path] + ([request_b] if request_b else [])
    check_outputs(
        [
            (flag, target)
            for flag, target in (
                ("--output", output),
                ("--output-json", output_json),
                ("--output-html", output_html),
                ("--record", gate.record_path),
            )
            if target
        ],
        inputs,
    )
    items = [load_one(path) for path in (request_path, request_b or request_path)]
    bodies = [item.body for item in items]
    rows = [load_decision_rows(data_path, body) for body in bodies]
    if limit:
        rows = [r[:limit] for r in rows]
    source = AnswerSource(gate, served_opts.backend, served_opts.backend.route)
    if source.bypasses_cache:
        options.cache_dir = None
    source.announce()
    reports = []
    try:
        sides = (
            (request_path, served_opts.base_url, model, None),
            (
                request_b or request_path,
                base_url_b or served_opts.base_url,
                model_b or model,
                "b" if base_url_b else None,
            ),
        )
        for (path, base_url, side_model, side), item, side_rows in zip(sides, items, rows):
            prepare_probes(options, item, len(side_rows), quiet)  # (each side's own design links)
            body = item.body
            engine = source.engine(base_url, side_model, side)
            try:
                report = run_decision_eval(
                    engine, body, side_rows, options, request_path=path, data_path=data_path
                )
            except UsageError as error:
                raise name_request(error, path) from None
            except KeyboardInterrupt:
                where = (
                    ""
                    if options.cache_dir is None
                    else f"; rows answered so far are cached in {options.cache_dir}"
                )
                click.echo(f"pcdlint: eval interrupted{where}: rerun the same command to resume", err=True)
                raise SystemExit(130) from None
            if source.answers_block() is not None:
                report["server"]["answers"] = source.answers_block()
            # the rows are paired in memory: the streamed predictions read back from their spill
            report["predictions"] = list(report["predictions"])
            reports.append(report)
    finally:
        source.finish(inputs)
    compared = compare_reports(
        reports[0],
        reports[1],
        seed=options.seed,
        margin=gate.fail_if_worse,
        alpha=gate.alpha,
    )
    if source.replay is not None:
        compared["replay"] = source.answers_block()
    from auditor.reporting.json_text import dumps_strict_bytes

    def render(name: str) -> str | bytes:
        if name == "json":
            return dumps_strict_bytes(compared)
        if name == "html":
            return render_compare_html(compared)
        text = render_compare_text(compared)
        return (f"{source.replay.when()}\n" if source.replay is not None else "") + text

    write_output(render(output_format), output, inputs, kind="json" if output_format == "json" else "text")
    for name, target in (("json", output_json), ("html", output_html)):
        if target:
            write_output(
                render(name),
                target,
                inputs,
                flag=f"--output-{name}",
                kind="json" if name == "json" else "text",
            )
    failed_rows = any(r["failed"] for r in reports)
    gate_failed = bool(compared["gate"] and compared["gate"]["failed"])
    return 1 if gate_failed or failed_rows else 0


def design_refs(requests: list[Any]) -> dict[str, dict[str, str]]:
    """Per request (its label) and choice question: the no-way-out design finding the scope
    probe's verdict links to ("PCD201 no-way-out: URL"), where the design rule flags the question."""
    from auditor.linter.engine import LintOptions, lint
    from auditor.reporting.sarif import rule_help_uri
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


def prepare_probes(options: Any, item: Any, rows: int, quiet: bool) -> None:
    """`eval --perturb`: the scope probe's design links, and the one line that states how many
    extra requests the probes send, before they send any."""
    from auditor.decoder.probes import announce, planned_requests

    if not options.perturb:
        return
    if "scope" in options.perturb:
        options.design = design_refs([item]).get(item.label, {})
    counts = planned_requests(item.body, list(options.perturb), "order", options.orders)
    per_row = {k: v * rows for k, v in counts.items() if k != "scope"}
    if "scope" in counts:
        per_row["scope"] = counts["scope"]  # once, not per row
    if not quiet:
        click.echo(f"pcdlint: {item.label}: {announce(per_row, f' over {rows} rows')}", err=True)


def schema_probe_note(decision_opts: dict) -> None:
    """`verify` of a schema: the one line saying that decision probes were not run."""
    asked = [p for p in decision_opts.get("probe") or () if p not in ("auto", "off")]
    if asked:
        click.echo(
            f"pcdlint: --probe {', '.join(dict.fromkeys(asked))} needs a decision request "
            "(--backend systemone, or --backend in-process --engine llm2jev); not run on a schema",
            err=True,
        )
    for flag, key in (("--record", "record_path"), ("--replay", "replay_path")):
        if decision_opts.get(key):
            raise UsageError(f"{flag} is for decision requests (--backend systemone)")
