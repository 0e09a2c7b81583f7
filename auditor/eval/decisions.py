"""`pcdlint eval` of a decision request on a served decision model (``--backend systemone``).

Labeled rows are JSONL ``{"id", "state" | "context", "labels": {question: answer}}``: each row
is the request with its state replaced by the row's, and the answer is a choice's option key, a
score's level (its index, or its text) or a noul's ``true`` / ``false``. Rows are sent with at
most ``concurrency`` requests in flight through the engine's ``decide`` (the one HTTP client,
which retries 429 and 5xx honouring ``Retry-After``); a row that still fails is reported with
its error, never dropped. Answers are cached per row (``cache.ScoreCache``: the key is the
endpoint, the model and the request's fingerprint, never the API key), so an interrupted run
resumes. Per question: the existing metrics (accuracy with a Wilson interval, macro-F1, the
confusion matrix, ECE and NLL before and after temperature scaling).

Rows come as a stream (``iter_decision_rows`` over ``auditor.eval.stream``) and are handed to a
collector as they finish, in the file's order: per question a compact tally (auditor.eval.tally:
the metrics are made at the end over the rows sorted by line, the held-out split by row id),
predictions spilled to disk (auditor.eval.spill), so memory does not grow with the rows.
``--shard I/N`` takes the rows whose id hashes to I (``in_shard``); a shard's report carries its
tallies, which ``auditor.eval.shards`` merges into the unsharded report.

``--perturb order`` is verify's option-order probe (``auditor.decoder.orderprobe``) on every
row: each row is asked again once per extra display order (reversed, rotated by 1, by 2, …;
``orders`` in all), every choice question reordered together, and per question the report
gives the rows whose answer changed, the win histogram by displayed position, the largest
probability swing and a verdict, with each row's probe beside them. ``--perturb criteria`` and
``names`` are per-row variants too (``auditor.eval.probes``); ``--perturb scope`` asks the
request once with an empty and an off-topic state (``auditor.decoder.probes``). Two sides of
``eval --compare`` are two runs of ``run_decision_eval`` paired by ``auditor.eval.compare``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from queue import SimpleQueue
from typing import Any

from auditor.decoder.answers import AnswerError
from auditor.decoder.decision_answers import shown
from auditor.decoder.errors import DecoderError, ServerUnreachable
from auditor.decoder.orderprobe import (
    DEFAULT_ORDERS,
    OrderProbe,
    display_orders,
    probed_questions,
    reordered_body,
    summarize,
)
from auditor.decoder.probes import probe_bodies, realign, run_probes
from auditor.decoder.systemone import DecisionRefused, question_keys, read_answers
from auditor.errors import UsageError
from auditor.eval import metrics
from auditor.eval.cache import ScoreCache
from auditor.eval.probes import ROW_PROBES, probe_lines, row_probe_entry, row_probe_summary
from auditor.eval.stream import DEFAULT_MAX_ROW_BYTES, DataStream, Oversized
from auditor.redaction import masked_by
from auditor.shown import shorten
from auditor.shown import shown as shown_value
from auditor.version import __version__

REPORT_KIND = "decisions"
METHOD = "served"  # the one method: the service's own probabilities


@dataclass
class DecisionRow:
    number: int
    id: str
    state: object
    labels: dict[str, int]  # question -> gold answer index (request order)
    error: str | None = None  # a row that could not be read (over the byte limit): a failed row

    @property
    def key(self) -> str:
        text = json.dumps(self.state, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class DecisionEvalOptions:
    concurrency: int = 4
    holdout: float = 0.3
    seed: int = 0
    perturb: tuple[str, ...] = ()
    orders: int = DEFAULT_ORDERS  # display orders per probed question, the original included
    cache_dir: Path | None = None
    progress: object = None  # auditor.decoder.progress.Progress, or None
    notes: list[str] = field(default_factory=list)
    # --perturb scope: the design finding (PCD201) per question the scope verdict links to
    design: dict[str, str] = field(default_factory=dict)


def _gold(question: dict, value: Any, keys: list[str]) -> int | None:
    if question["type"] == "noul":
        text = str(value).lower() if isinstance(value, (bool, str)) else None
        return {"true": 0, "false": 1}.get(text) if text is not None else None
    if question["type"] == "score":
        if isinstance(value, int) and not isinstance(value, bool):
            return value if 0 <= value < len(keys) else None
        levels = question.get("criteria") or []
        for index, level in enumerate(levels):
            if value == level or value == str(index):
                return index
        return None
    return keys.index(value) if isinstance(value, str) and value in keys else None


def _decision_row(
    number: int, record: object, where: str, body: dict, keys: dict[str, list[str]]
) -> DecisionRow:
    questions = body["questions"]
    if not isinstance(record, dict) or not ("state" in record or isinstance(record.get("context"), str)):
        raise UsageError(f'{where}: a row is an object with a "state" (or a string "context") and "labels"')
    raw = record.get("labels", {})
    if not isinstance(raw, dict):
        raise UsageError(f'{where}: "labels" must be an object of question: answer')
    labels = {}
    for qid, value in raw.items():
        if qid not in questions:
            raise UsageError(
                f"{where}: label for unknown question {shorten(repr(qid))} "
                f"(questions: {shorten(', '.join(questions))})"
            )
        if value is None:
            continue
        gold = _gold(questions[qid], value, keys[qid])
        if gold is None:
            shown = ", ".join(shorten(k, 40) for k in keys[qid][:8])
            raise UsageError(
                f"{where}: label {shown_value(value, limit=80)} for question {shorten(repr(qid))} "
                f"is not one of its answers ({shown}{', …' if len(keys[qid]) > 8 else ''})"
            )
        labels[qid] = gold
    state = record["state"] if "state" in record else record["context"]
    return DecisionRow(number, str(record.get("id", number)), state, labels)


def iter_decision_rows(stream: DataStream, body: dict) -> Iterator[DecisionRow]:
    """Every row of a JSONL file, read as a stream (auditor.eval.stream); a row over the byte
    limit as a DecisionRow with ``error``. Raises UsageError on the first row that is bad input."""
    keys = {qid: question_keys(q) for qid, q in body["questions"].items()}
    for number, record in stream.json_lines():
        if isinstance(record, Oversized):
            yield DecisionRow(number, str(number), None, {}, error=record.error)
        else:
            yield _decision_row(number, record, f"{stream.display}:{number}", body, keys)


def load_decision_rows(
    path: str | Path, body: dict, *, max_row_bytes: int = DEFAULT_MAX_ROW_BYTES, limit: int | None = None
) -> list[DecisionRow]:
    """Read labeled rows for ``body``'s questions; a label that is no answer is an input error."""
    stream = DataStream(path, max_row_bytes)
    rows = list(islice(iter_decision_rows(stream, body), limit))
    if not rows:
        raise UsageError(f"{stream.display}: no labeled rows")
    return rows


def fingerprint(body: dict) -> str:
    """The request without its state: what every row's answers depend on besides the row."""
    text = json.dumps({k: v for k, v in body.items() if k != "state"}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def order_plans(body: dict, options: DecisionEvalOptions) -> dict[str, list[list[int]]]:
    """Per probed choice question, its display orders (the first is the original); none without
    ``--perturb order``."""
    if "order" not in options.perturb:
        return {}
    return {
        qid: display_orders(len(body["questions"][qid]["criteria"]), options.orders)
        for qid in probed_questions(body, "order")
    }


def variant_bodies(body: dict, plans: dict[str, list[list[int]]]) -> dict[str, dict]:
    """The request per variant: "original", then "order1", "order2", … with every probed question
    in its next display order, as ``probe_request`` asks them (one request per order)."""
    bodies = {"original": body}
    rounds = max((len(plan) for plan in plans.values()), default=1)
    for index in range(1, rounds):
        bodies[f"order{index}"] = reordered_body(
            body, {qid: plan[index] for qid, plan in plans.items() if index < len(plan)}
        )
    return bodies


def _score_one(
    engine: Any, body: dict | bytes, keys: dict[str, list[str]], request: dict | None = None
) -> dict:
    """{question: probabilities in the original request's key order} or {"error": one line}.
    ``body``: the request, or its bytes (``SystemOneBackend.encoder``) with ``request`` the dict."""
    try:
        if isinstance(body, bytes):
            answers = read_answers(request or {}, engine.decide_content(body))
        else:
            answers = read_answers(body, engine.decide(body))
    except DecisionRefused as exc:
        return {"error": f"refused ({exc.status}): {exc.message}"}
    except AnswerError:
        raise  # an answer in another shape than documented: the run stops (exit 2), no row is scored
    except ServerUnreachable as exc:
        return {"error": masked_by(engine, str(exc)), "unreachable": True}
    except DecoderError as exc:
        return {"error": masked_by(engine, str(exc))}
    out = {}
    for answer in answers:
        if answer.probabilities is None:
            return {"error": f"no probabilities for question {answer.name!r}"}
        # a reordered body lists keys as displayed, the names probe's neutral ids by position:
        # realign with the original order
        out[answer.name] = realign(answer, keys[answer.name])
    return {"answers": out}


def _sender(engine: Any, bodies: dict[str, dict], keys: dict[str, list[str]]) -> Callable[[str, Any], dict]:
    """``send(variant, state)``: the row's answer to one variant (``_score_one``), the request
    encoded once per variant and the state spliced in where the engine can (a served one)."""
    encoder = getattr(engine, "encoder", None)
    if encoder is None or not hasattr(engine, "decide_content"):
        return lambda variant, state: _score_one(engine, {**bodies[variant], "state": state}, keys)
    encoders = {variant: encoder(body) for variant, body in bodies.items()}

    def send(variant: str, state: Any) -> dict:
        try:
            content = encoders[variant](state)
        except DecoderError as exc:
            return {"error": str(exc)}
        return _score_one(engine, content, keys, bodies[variant])

    return send


def _to_cache(answers: dict[str, list[float]]) -> list[dict]:
    """The cache's line shape (auditor.eval.cache): one object per question."""
    return [{"question": qid, METHOD: probs} for qid, probs in answers.items()]


def _from_cache(blocks: Any, keys: dict[str, list[str]], variant: str) -> dict[str, list[float]] | None:
    """Cached answers when they hold a probability per key of every question asked; else None
    (the row is asked again)."""
    if not isinstance(blocks, list):
        return None
    answers = {}
    for block in blocks:
        probs = block.get(METHOD) if isinstance(block, dict) else None
        qid = block.get("question") if isinstance(block, dict) else None
        if qid not in keys or not isinstance(probs, list) or len(probs) != len(keys[qid]):
            return None
        if not all(type(p) in (int, float) and 0.0 <= p <= 1.0 for p in probs):
            return None
        answers[qid] = [float(p) for p in probs]
    wanted = set(keys) if variant == "original" else None
    return answers if answers and (wanted is None or set(answers) == wanted) else None


@dataclass
class DecisionSelection:
    """Which rows of the file a run answers: the first ``limit``, then its shard's share."""

    limit: int | None = None
    shard: tuple[int, int] | None = None  # (I, N), 1-based: the rows whose id hash is I-1 mod N

    def takes(self, row: DecisionRow) -> bool:
        return self.shard is None or in_shard(row.id, *self.shard)


def in_shard(row_id: str, index: int, count: int) -> bool:
    """Whether the row with this id belongs to shard ``index`` of ``count`` (1-based): by the
    SHA-256 of the id, so any run over the same file splits it the same way."""
    digest = hashlib.sha256(row_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count == index - 1


def selected_rows(stream: DataStream, body: dict, selection: DecisionSelection) -> Iterator[DecisionRow]:
    """The rows a run answers, read as a stream (the first ``limit`` rows of the file, then the
    shard's share of them)."""
    rows = islice(iter_decision_rows(stream, body), selection.limit)
    return (row for row in rows if selection.takes(row))


class _Collector:
    """What a decision eval keeps of every finished row (auditor.eval.tally): per question the
    labeled answered rows, the order probes, the failed rows and the predictions (spilled to
    disk, auditor.eval.spill)."""

    def __init__(self, body: dict, plans: dict[str, list[list[int]]], options: DecisionEvalOptions):
        from auditor.eval.spill import Spill
        from auditor.eval.tally import QuestionTally

        self.body, self.plans, self.options = body, plans, options
        self.keys = {qid: question_keys(q) for qid, q in body["questions"].items()}
        self.tallies = {
            qid: QuestionTally(qid, q["type"], self.keys[qid]) for qid, q in body["questions"].items()
        }
        self.failed: list[dict] = []
        self.predictions = Spill()
        self.rows = self.hits = self.scored = 0
        # eval --perturb criteria|names: (question, probe) → one small entry per labeled row
        self.row_probes: dict[tuple[str, str], list[dict]] = {}

    def add(self, row: DecisionRow, got: dict[str, dict]) -> None:
        from auditor.eval.tally import held_out

        self.rows += 1
        for variant, result in got.items():
            if result.get("skipped"):
                continue
            if "error" in result:
                self.failed.append(
                    {"id": row.id, "line": row.number, "variant": variant, "error": result["error"]}
                )
            elif result.get("cached"):
                self.hits += 1
            else:
                self.scored += 1
        original = got.get("original", {}).get("answers")
        labels = {q: self.keys[q][g] for q, g in row.labels.items()}
        self.predictions.append(
            {
                "id": row.id,
                "line": row.number,
                "labels": labels,
                "answers": None
                if original is None
                else {q: self.keys[q][metrics.argmax_first(p)] for q, p in original.items()},
            }
        )
        if original is None:
            return
        held = held_out(row.id, self.options.holdout, self.options.seed)
        for qid, gold in row.labels.items():
            if qid not in original:
                continue
            tally = self.tallies[qid]
            tally.add(row.number, gold, held, original[qid])
            if qid in self.plans:
                self._probe(row, qid, got)
            for name in ROW_PROBES:
                changed = got.get(name, {}).get("answers") or {}
                if name in self.options.perturb and qid in changed:
                    kind = self.body["questions"][qid]["type"]
                    self.row_probes.setdefault((qid, name), []).append(
                        row_probe_entry(kind, self.keys[qid], row, original[qid], changed[qid], gold)
                    )

    def _probe(self, row: DecisionRow, qid: str, got: dict[str, dict]) -> None:
        plan, keys = self.plans[qid], self.keys[qid]
        answers = [
            got.get("original" if i == 0 else f"order{i}", {}).get("answers") or {} for i in range(len(plan))
        ]
        if not all(qid in a for a in answers):
            return
        probs = [a[qid] for a in answers]
        probe = summarize(
            OrderProbe(
                qid,
                keys,
                [[keys[i] for i in order] for order in plan],
                [keys[metrics.argmax_first(p)] for p in probs],
                probs,
            )
        )
        self.tallies[qid].probes.append(
            {
                "id": row.id,
                "line": row.number,
                "answers": probe.answers,
                "flips": probe.flips,
                "position_wins": probe.position_wins,
                "largest_swing": probe.largest_swing,
                "swing_option": probe.swing_option,
                "verdict": probe.verdict,
            }
        )


def score_stream(
    engine: Any,
    bodies: dict[str, dict],
    rows: Iterator[DecisionRow],
    cache: ScoreCache,
    options: DecisionEvalOptions,
    collect: Any,
    total: int | None = None,
) -> None:
    """Answer every (variant, row) from the cache or the server, at most ``concurrency``
    requests in flight, and hand each row to ``collect(row, {variant: result})`` once all its
    variants are in, in the order of the file (a few finished rows wait for a slow one)."""
    from auditor.decoder.progress import Progress

    variants = list(bodies)
    keys = {qid: question_keys(q) for qid, q in bodies["original"]["questions"].items()}
    window = max(1024, 64 * options.concurrency)  # finished rows waiting for an earlier one
    progress = options.progress if options.progress is not None else Progress(False)
    waiting: dict[int, tuple[DecisionRow, dict[str, dict]]] = {}
    # rows answered so far, and the requests that found no server before any answer came: as many
    # as are in flight (at least 4) and the run stops, rather than retrying every row of the file
    state = {"next": 0, "answered": 0, "unreachable": 0}
    give_up = max(4, options.concurrency)

    def release() -> None:
        while state["next"] in waiting and len(waiting[state["next"]][1]) == len(variants):
            row, got = waiting.pop(state["next"])
            collect(row, got)
            state["next"] += 1

    send = _sender(engine, bodies, keys)
    finished: SimpleQueue[Future] = SimpleQueue()  # futures as they complete (no wait() over all)
    with progress.stage("eval", total, "row") as tick, ThreadPoolExecutor(options.concurrency) as pool:  # type: ignore[attr-defined]
        pending: dict[Future, tuple[int, str]] = {}

        def drain(until: int) -> None:
            while len(pending) > until:
                future = finished.get()
                seq, variant = pending.pop(future)
                row, got = waiting[seq]
                try:
                    result = future.result()
                except AnswerError as exc:
                    for other in pending:
                        other.cancel()
                    message = f"row {shown(row.id)} (line {row.number}, {variant}): {exc}"
                    raise AnswerError(masked_by(engine, message)) from None
                got[variant] = result
                if "answers" in result:
                    state["answered"] += 1
                elif result.get("unreachable") and not state["answered"]:
                    state["unreachable"] += 1
                    if state["unreachable"] >= give_up:
                        for other in pending:
                            other.cancel()
                        raise DecoderError(
                            f"no answer from the server for the first {give_up} requests, so the run "
                            f"stopped before its other rows: {result['error']}"
                        )
                if "answers" in result and cache.path is not None:
                    cache.put(variant, row.key, _to_cache(result["answers"]), remember=False)
                if len(got) == len(variants):
                    tick(1)
                    release()

        try:
            for seq, row in enumerate(rows):
                got: dict[str, dict] = {}
                waiting[seq] = (row, got)
                if row.error is not None:
                    got.update({"original": {"error": row.error}})
                    got.update({v: {"skipped": True} for v in variants if v != "original"})
                else:
                    for variant in variants:
                        cached = (
                            _from_cache(cache.get(variant, row.key), keys, variant) if cache.entries else None
                        )
                        if cached is not None:
                            got[variant] = {"answers": cached, "cached": True}
                        elif not bodies[variant]:
                            got[variant] = {"skipped": True}
                    for variant in variants:
                        if variant in got:
                            continue
                        drain(options.concurrency - 1)
                        if options.concurrency == 1:  # one in flight: no hand-over to a thread
                            future: Future = Future()
                            pending[future] = (seq, variant)
                            future.add_done_callback(finished.put)
                            try:
                                future.set_result(send(variant, row.state))
                            except AnswerError as exc:  # raised with the row's place by drain()
                                future.set_exception(exc)
                            continue
                        future = pool.submit(send, variant, row.state)
                        pending[future] = (seq, variant)
                        future.add_done_callback(finished.put)
                if len(got) == len(variants):
                    tick(1)
                    release()
                if len(waiting) > window:
                    drain(0)
            drain(0)
        except KeyboardInterrupt:
            for future in pending:
                future.cancel()
            raise
        finally:
            cache.flush()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def run_decision_eval(
    engine: Any,
    body: dict,
    rows: Any,
    options: DecisionEvalOptions,
    *,
    request_path: str,
    data_path: str,
    total: int | None = None,
    data: dict | None = None,
    shard: tuple[int, int] | None = None,
) -> dict:
    """Answer every row (through the cache) and build the JSON report (version 1, kind
    "decisions"). ``rows``: any iterable of DecisionRow, read once (a stream); ``data``: the
    data file's identity (auditor.eval.stream.data_identity); ``shard``: (I, N) of a sharded
    run, whose report then carries its rows' answers for ``eval-merge``."""
    identity = engine.identity()
    # probabilities are cached in the request's key order (a reordered variant's realigned)
    material = {
        "kind": REPORT_KIND,
        "order": "request-keys",
        "backend": identity,
        "request": fingerprint(body),
    }
    cache = ScoreCache(options.cache_dir, material)
    plans = order_plans(body, options)
    bodies = variant_bodies(body, plans)
    bodies.update(probe_bodies(body, options.perturb))
    collector = _Collector(body, plans, options)
    score_stream(engine, bodies, iter(rows), cache, options, collector.add, total)
    scoped: list = []
    sent = 0
    if "scope" in options.perturb:  # not per row: the request with an empty and an off-topic state
        scoped, sent = run_probes(engine, body, [], ["scope"], options.design)
    stats = getattr(engine, "stats", {}) or {}
    report = build_report(
        list(body["questions"]),
        collector,
        options,
        plans,
        request_path=request_path,
        data_path=data_path,
        identity=identity,
        cache={"path": str(cache.path) if cache.path else None, "key": cache.key},
        server={
            "requests": stats.get("requests"),
            "retries": stats.get("retries"),
            "by_status": {str(k): v for k, v in (stats.get("by_status") or {}).items()},
        },
    )
    for question in report["questions"]:
        for name in ROW_PROBES:
            entries = collector.row_probes.get((question["name"], name))
            found = row_probe_summary(name, body["questions"][question["name"]], entries or [])
            if found is not None:
                question["perturbation"][name] = found
    if "scope" in options.perturb:  # asked before the report took the server's counts
        for question in report["questions"]:
            for result in scoped:
                if result.question == question["name"]:
                    question["perturbation"]["scope"] = {**result.to_dict(), "requests": sent}
    if data is not None:
        report["data_file"] = data
    if shard is not None:
        report["shard"] = {
            "index": shard[0],
            "count": shard[1],
            "request_sha256": fingerprint(body),
            "body": body,
        }
        report["tallies"] = {
            qid: {**tally.to_dict(), "probes": tally.probes} for qid, tally in collector.tallies.items()
        }
    return report


def build_report(
    order: list[str],
    collector: Any,
    options: DecisionEvalOptions,
    plans: dict,
    *,
    request_path: str,
    data_path: str,
    identity: dict,
    cache: dict,
    server: dict,
) -> dict:
    """The report of the rows a collector holds (a run's, or merged shards')."""
    questions = [collector.tallies[qid].report(len(plans[qid]) if qid in plans else None) for qid in order]
    failed = sorted(collector.failed, key=lambda f: (f["line"], f["variant"]))
    unread = sum(1 for f in failed if f["error"].startswith("row is ") and "--max-row-bytes" in f["error"])
    notes = list(options.notes)
    if unread:
        notes.append(f"{unread} row(s) over --max-row-bytes were not read; they are listed as failed rows")
    return _finite(
        {
            "version": 1,
            "kind": REPORT_KIND,
            "tool": {"name": "pcdlint", "version": __version__},
            "request": request_path,
            "data": data_path,
            "rows": collector.rows,
            "backend": identity,
            "options": {
                "concurrency": options.concurrency,
                "holdout": options.holdout,
                "seed": options.seed,
                "perturb": list(options.perturb),
                "orders": options.orders if plans else None,
                "ece_bins": metrics.ECE_BINS,
                "split": "row-id",
            },
            "cache": {**cache, "hits": collector.hits, "scored": collector.scored, "failed": len(failed)},
            "server": server,
            "failed": failed,
            "questions": questions,
            "predictions": collector.predictions,
            "notes": notes,
        }
    )


def render_decision_text(report: dict) -> str:
    """The per-question table, the order probe per question, the failed rows and the notes."""
    backend = report["backend"]
    cache, server = report["cache"], report["server"]
    out = [
        f"pcdlint eval: {report['request']} on {report['data']} ({report['rows']} rows)",
        f"backend: {backend.get('endpoint') or backend.get('engine')}"
        + (f", model {backend['model']}" if backend.get("model") else "")
        + f"; concurrency {report['options']['concurrency']}; cache: {cache['hits']} hit(s), {cache['scored']} scored",
        f"server: {server['requests']} request(s), {server['retries']} retried; by status "
        + (", ".join(f"{k}: {v}" for k, v in sorted(server["by_status"].items())) or "-"),
        "",
    ]
    perturb = report["options"]["perturb"]
    header = (
        f"{'question':<22} {'kind':<7} {'n':>4} {'acc':>5}  {'95% CI':<13} {'F1':>5}  {'ECE':>5} {'ECE(T)':>6} "
        f"{'NLL':>5} {'NLL(T)':>6} {'T':>5}"
        + "".join(f" {'flips:' + p:>11}" for p in perturb if p != "scope")
    )
    out += [header, "-" * len(header)]

    def num(value: float | None) -> str:
        return "    -" if value is None else f"{value:5.3f}"

    for question in report["questions"]:
        block = question["methods"][METHOD]
        calibration = block["calibration"]
        low, high = block["wilson95"]
        line = (
            f"{question['name']:<22} {question['kind']:<7} {block['n']:>4} {num(block['accuracy'])}  "
            f"[{low:.3f},{high:.3f}] {num(block['macro_f1'])}  {num(calibration['before']['ece'])} "
            f"{num(calibration['after']['ece']):>6} {num(calibration['before']['nll'])} "
            f"{num(calibration['after']['nll']):>6} {calibration['temperature']:>5.2f}"
        )
        for name in (p for p in perturb if p != "scope"):
            moved = question["perturbation"].get(name)
            shown = (
                "" if moved is None or "flips" not in moved else f"{moved['flips'][METHOD]}/{moved['rows']}"
            )
            line += f" {shown:>11}"
        out.append(line)
    for question in report["questions"]:
        probe = question["perturbation"].get("order")
        if probe is None:
            continue
        size = len(question["options"])
        wins = ", ".join(
            f"#{i + 1}{' (last)' if i == size - 1 else ''} {n}" for i, n in enumerate(probe["position_wins"])
        )
        swing = (
            f"; largest swing {probe['largest_swing']:.3f} ({probe['swing_option']}, row {probe['swing_row']})"
            if probe["swing_row"] is not None
            else ""
        )
        out += [
            "",
            f"order probe {question['name']} ({probe['orders']} orders, {probe['rows']} rows): answer changed "
            f"in {probe['flips'][METHOD]} row(s), {probe['flipped_requests']} of {probe['reordered_requests']} "
            "reordered requests",
            f"  wins by displayed position: {wins}{swing}",
            f"  {probe['verdict']}",
        ]
    out.extend(probe_lines(report))
    if report["failed"]:
        out.append("")
        out.extend(failed_lines(report["failed"]))
    out.extend(f"note: {note}" for note in report["notes"])
    return "\n".join(out) + "\n"


def failed_lines(failed: list[dict], errors: int = 5, rows: int = 3) -> list[str]:
    """The failed rows for a reader: grouped by their error, the most frequent first (at most
    ``errors`` of them, each with its first ``rows`` rows), so a server that cannot be reached is
    one line, not one a row; the JSON report lists every failed row."""
    by_error: dict[str, list[dict]] = {}
    for row in failed:
        by_error.setdefault(row["error"], []).append(row)
    ranked = sorted(by_error.items(), key=lambda item: -len(item[1]))  # ties: first seen first
    out = [f"failed rows ({len(failed)}; not in the metrics; the JSON report lists each):"]
    for error, members in ranked[:errors]:
        where = [f"{row['id']} (line {row['line']}, {row['variant']})" for row in members[:rows]]
        if len(members) == 1:
            out.append(f"  {where[0]}: {error}")
            continue
        more = f" and {len(members) - rows} more" if len(members) > rows else ""
        out.append(f"  {len(members)} rows: {error}")
        out.append(f"    {', '.join(where)}{more}")
    if len(ranked) > errors:
        left = sum(len(members) for _error, members in ranked[errors:])
        out.append(f"  and {left} row(s) with {len(ranked) - errors} other error(s)")
    return out


def decision_calibration_file(report: dict) -> dict:
    """``--write-calibration`` of a decision eval: the temperature fitted per question on the
    served probabilities (the file ``eval`` writes for schema fields, keyed by question)."""
    return {
        "version": 1,
        "kind": "pcdlint-temperature-calibration",
        "backend": report["backend"],
        "request": report["request"],
        "apply": "p = softmax(log(p_served) / T) over a question's options (p_served: the server's probabilities)",
        "split": {"holdout": report["options"]["holdout"], "seed": report["options"]["seed"]},
        "questions": {
            question["name"]: {METHOD: _temperature(question["methods"][METHOD]["calibration"])}
            for question in report["questions"]
        },
    }


def _temperature(calibration: dict) -> dict:
    return {
        "temperature": calibration["temperature"],
        "heldout_ece_before": calibration["before"]["ece"],
        "heldout_ece_after": calibration["after"]["ece"],
    }
