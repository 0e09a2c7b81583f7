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
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.decoder.answers import AnswerError
from auditor.decoder.decision_answers import shown
from auditor.decoder.errors import DecoderError
from auditor.decoder.orderprobe import (
    DEFAULT_ORDERS,
    OrderProbe,
    display_orders,
    order_verdict,
    probed_questions,
    reordered_body,
    summarize,
)
from auditor.decoder.probes import probe_bodies, realign, run_probes
from auditor.decoder.systemone import DecisionRefused, question_keys, read_answers
from auditor.errors import UsageError
from auditor.eval import metrics
from auditor.eval.cache import ScoreCache
from auditor.eval.probes import ROW_PROBES, probe_lines, row_probe_report
from auditor.eval.runner import _method_block
from auditor.version import __version__

REPORT_KIND = "decisions"
METHOD = "served"  # the one method: the service's own probabilities


@dataclass
class DecisionRow:
    number: int
    id: str
    state: object
    labels: dict[str, int]  # question -> gold answer index (request order)

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


def load_decision_rows(path: str | Path, body: dict) -> list[DecisionRow]:
    """Read labeled rows for ``body``'s questions; a label that is no answer is an input error."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    questions = body["questions"]
    keys = {qid: question_keys(q) for qid, q in questions.items()}
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: invalid JSON: {exc.msg}") from None
        if not isinstance(record, dict) or not ("state" in record or isinstance(record.get("context"), str)):
            raise UsageError(
                f'{where}: a row is an object with a "state" (or a string "context") and "labels"'
            )
        raw = record.get("labels", {})
        if not isinstance(raw, dict):
            raise UsageError(f'{where}: "labels" must be an object of question: answer')
        labels = {}
        for qid, value in raw.items():
            if qid not in questions:
                raise UsageError(
                    f"{where}: label for unknown question {qid!r} (questions: {', '.join(questions)})"
                )
            if value is None:
                continue
            gold = _gold(questions[qid], value, keys[qid])
            if gold is None:
                shown = ", ".join(keys[qid][:8])
                raise UsageError(
                    f"{where}: label {json.dumps(value, ensure_ascii=False)} for question {qid!r} "
                    f"is not one of its answers ({shown}{', …' if len(keys[qid]) > 8 else ''})"
                )
            labels[qid] = gold
        state = record["state"] if "state" in record else record["context"]
        rows.append(DecisionRow(number, str(record.get("id", number)), state, labels))
    if not rows:
        raise UsageError(f"{path}: no labeled rows")
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


def _score_one(engine: Any, body: dict, keys: dict[str, list[str]]) -> dict:
    """{question: probabilities in the original request's key order} or {"error": one line}."""
    try:
        answers = read_answers(body, engine.decide(body))
    except DecisionRefused as exc:
        return {"error": f"refused ({exc.status}): {exc.message}"}
    except AnswerError:
        raise  # an answer in another shape than documented: the run stops (exit 2), no row is scored
    except DecoderError as exc:
        redact = getattr(engine, "redact", None)
        return {"error": redact(str(exc)) if redact is not None else str(exc)}
    out = {}
    for answer in answers:
        if answer.probabilities is None:
            return {"error": f"no probabilities for question {answer.name!r}"}
        # a reordered body lists keys as displayed, the names probe's neutral ids by position:
        # realign with the original order
        out[answer.name] = realign(answer, keys[answer.name])
    return {"answers": out}


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


def score_rows(
    engine: Any,
    bodies: dict[str, dict],
    rows: list[DecisionRow],
    cache: ScoreCache,
    options: DecisionEvalOptions,
) -> dict[tuple[str, str], dict]:
    """Every (variant, row) answered, from the cache or with at most ``concurrency`` in flight."""
    variants = list(bodies)
    keys = {qid: question_keys(q) for qid, q in bodies["original"]["questions"].items()}
    results: dict[tuple[str, str], dict] = {}
    todo = []
    for variant in variants:
        for row in rows:
            if (variant, row.key) in results:
                continue
            cached = _from_cache(cache.get(variant, row.key), keys, variant)
            if cached is not None:
                results[(variant, row.key)] = {"answers": cached, "cached": True}
            elif bodies[variant]:
                results[(variant, row.key)] = {}
                todo.append((variant, row))
    from auditor.decoder.progress import Progress

    progress = options.progress if options.progress is not None else Progress(False)
    with progress.stage("eval", len(todo), "row") as tick, ThreadPoolExecutor(options.concurrency) as pool:  # type: ignore[attr-defined]
        pending: dict[Future, tuple[str, DecisionRow]] = {}
        queue = iter(todo)
        try:
            while True:
                while len(pending) < options.concurrency:
                    item = next(queue, None)
                    if item is None:
                        break
                    variant, row = item
                    pending[
                        pool.submit(_score_one, engine, {**bodies[variant], "state": row.state}, keys)
                    ] = item
                if not pending:
                    break
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    variant, row = pending.pop(future)
                    try:
                        result = future.result()
                    except AnswerError as exc:
                        for other in pending:
                            other.cancel()
                        redact = getattr(engine, "redact", None)
                        message = f"row {shown(row.id)} (line {row.number}, {variant}): {exc}"
                        raise AnswerError(redact(message) if redact is not None else message) from None
                    results[(variant, row.key)] = result
                    if "answers" in result:
                        cache.put(variant, row.key, _to_cache(result["answers"]))
                    tick(1)
        except KeyboardInterrupt:
            for future in pending:
                future.cancel()
            raise
    return results


def _order_report(
    qid: str, keys: list[str], plan: list[list[int]], rows: list[DecisionRow], results: dict
) -> dict:
    """The order probe over the rows: per row as ``verify --probe order`` gives it, and summed."""
    by_row = []
    for row in rows:
        got = [results.get(("original" if i == 0 else f"order{i}", row.key), {}) for i in range(len(plan))]
        if not all(qid in g.get("answers", {}) for g in got):
            continue
        probs = [g["answers"][qid] for g in got]
        probe = summarize(
            OrderProbe(
                qid,
                keys,
                [[keys[i] for i in order] for order in plan],
                [keys[metrics.argmax_first(p)] for p in probs],
                probs,
            )
        )
        by_row.append((row, probe))
    count = len(plan)
    wins = [sum(probe.position_wins[i] for _row, probe in by_row) for i in range(len(keys))]
    flipped = sum(1 for _row, probe in by_row if probe.flips)
    requests = sum(probe.flips for _row, probe in by_row)
    swung = max(by_row, key=lambda item: item[1].largest_swing, default=None)
    return {
        "rows": len(by_row),
        "orders": count,
        "flips": {METHOD: flipped},
        "flipped_requests": requests,
        "reordered_requests": len(by_row) * (count - 1),
        "position_wins": wins,
        "largest_swing": swung[1].largest_swing if swung else 0.0,
        "swing_option": swung[1].swing_option if swung else None,
        "swing_row": swung[0].id if swung else None,
        "verdict": order_verdict(
            requests,
            len(by_row) * (count - 1),
            wins,
            len(by_row) * count,
            f"stable: no row's answer changed in {count} orders ({len(by_row)} rows)",
        ),
        "by_row": [
            {
                "id": row.id,
                "answers": probe.answers,
                "flips": probe.flips,
                "position_wins": probe.position_wins,
                "largest_swing": probe.largest_swing,
                "swing_option": probe.swing_option,
                "verdict": probe.verdict,
            }
            for row, probe in by_row
        ],
    }


def _question_report(
    qid: str,
    question: dict,
    rows: list[DecisionRow],
    results: dict,
    options: DecisionEvalOptions,
    plans: dict[str, list[list[int]]],
) -> dict:
    keys = question_keys(question)
    answered = [r for r in rows if qid in r.labels and "answers" in results[("original", r.key)]]
    gold = [r.labels[qid] for r in answered]
    scores = [metrics.log_scores(results[("original", r.key)]["answers"][qid]) for r in answered]
    picks = [metrics.argmax_first(s) for s in scores]
    train, held = metrics.holdout_split(len(answered), options.holdout, options.seed)
    block = _method_block(METHOD, scores, picks, gold, len(keys), train, held)
    report = {
        "name": qid,
        "kind": question["type"],
        "options": keys,
        "labeled": len(gold),
        "label_counts": [gold.count(k) for k in range(len(keys))],
        "methods": {METHOD: block},
        "perturbation": {},
    }
    if qid in plans:
        report["perturbation"]["order"] = _order_report(qid, keys, plans[qid], answered, results)
    for name in ROW_PROBES:
        if name in options.perturb and (
            found := row_probe_report(name, qid, question, keys, answered, results)
        ):
            report["perturbation"][name] = found
    return report


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
    rows: list[DecisionRow],
    options: DecisionEvalOptions,
    *,
    request_path: str,
    data_path: str,
) -> dict:
    """Answer every row (through the cache) and build the JSON report (version 1, kind "decisions")."""
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
    variants = list(bodies)
    results = score_rows(engine, bodies, rows, cache, options)
    hits = sum(1 for result in results.values() if result.get("cached"))
    scored = sum(1 for result in results.values() if "answers" in result and not result.get("cached"))
    failed = [
        {"id": r.id, "line": r.number, "variant": v, "error": results[(v, r.key)]["error"]}
        for v in variants
        for r in rows
        if "error" in results.get((v, r.key), {})
    ]
    questions = [
        _question_report(qid, q, rows, results, options, plans) for qid, q in body["questions"].items()
    ]
    if "scope" in options.perturb:  # not per row: the request with an empty and an off-topic state
        scoped, sent = run_probes(engine, body, [], ["scope"], options.design)
        for question in questions:
            for result in scoped:
                if result.question == question["name"]:
                    question["perturbation"]["scope"] = {**result.to_dict(), "requests": sent}
    stats = getattr(engine, "stats", {}) or {}
    return _finite(
        {
            "version": 1,
            "kind": REPORT_KIND,
            "tool": {"name": "pcdlint", "version": __version__},
            "request": request_path,
            "data": data_path,
            "rows": len(rows),
            "backend": identity,
            "options": {
                "concurrency": options.concurrency,
                "holdout": options.holdout,
                "seed": options.seed,
                "perturb": list(options.perturb),
                "orders": options.orders if plans else None,
                "ece_bins": metrics.ECE_BINS,
            },
            "cache": {
                "path": str(cache.path) if cache.path else None,
                "key": cache.key,
                "hits": hits,
                "scored": scored,
                "failed": len(failed),
            },
            "server": {
                "requests": stats.get("requests"),
                "retries": stats.get("retries"),
                "by_status": {str(k): v for k, v in (stats.get("by_status") or {}).items()},
            },
            "failed": failed,
            "questions": questions,
            "predictions": [
                {
                    "id": r.id,
                    "labels": {q: question_keys(body["questions"][q])[g] for q, g in r.labels.items()},
                    "answers": None
                    if "answers" not in results[("original", r.key)]
                    else {
                        q: question_keys(body["questions"][q])[metrics.argmax_first(p)]
                        for q, p in results[("original", r.key)]["answers"].items()
                    },
                }
                for r in rows
            ],
            "notes": list(options.notes),
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
        out.append(f"failed rows ({len(report['failed'])}; not in the metrics):")
        out.extend(f"  {f['id']} (line {f['line']}, {f['variant']}): {f['error']}" for f in report["failed"])
    out.extend(f"note: {note}" for note in report["notes"])
    return "\n".join(out) + "\n"


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
