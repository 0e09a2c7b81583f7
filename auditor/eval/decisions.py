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
"""

from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from auditor.decoder.errors import DecoderError
from auditor.decoder.orderprobe import reordered_body
from auditor.decoder.systemone import DecisionRefused, question_keys, read_answers
from auditor.errors import UsageError
from auditor.eval import metrics
from auditor.eval.cache import ScoreCache
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
    cache_dir: Path | None = None
    progress: object = None  # auditor.decoder.progress.Progress, or None
    notes: list[str] = field(default_factory=list)


def _gold(question: dict, value, keys: list[str]) -> int | None:
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


def _reversed(body: dict) -> dict:
    """Every choice question with its options in reverse order (the other questions left out)."""
    orders = {
        qid: list(range(len(q["criteria"])))[::-1]
        for qid, q in body["questions"].items()
        if q.get("type") == "choice" and isinstance(q.get("criteria"), dict) and len(q["criteria"]) > 1
    }
    return reordered_body(body, orders) if orders else {}


def _score_one(engine, body: dict, keys: dict[str, list[str]]) -> dict:
    """{question: probabilities in the original request's key order} or {"error": one line}."""
    try:
        answers = read_answers(body, engine.decide(body))
    except DecisionRefused as exc:
        return {"error": f"refused ({exc.status}): {exc.message}"}
    except DecoderError as exc:
        redact = getattr(engine, "redact", None)
        return {"error": redact(str(exc)) if redact is not None else str(exc)}
    out = {}
    for answer in answers:
        if answer.probabilities is None:
            return {"error": f"no probabilities for question {answer.name!r}"}
        # a reordered body lists keys as displayed: realign with the original order
        out[answer.name] = [answer.probability_of(key) or 0.0 for key in keys[answer.name]]
    return {"answers": out}


def _to_cache(answers: dict[str, list[float]]) -> list[dict]:
    """The cache's line shape (auditor.eval.cache): one object per question."""
    return [{"question": qid, METHOD: probs} for qid, probs in answers.items()]


def _from_cache(blocks, keys: dict[str, list[str]], variant: str) -> dict[str, list[float]] | None:
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
    engine,
    body: dict,
    rows: list[DecisionRow],
    cache: ScoreCache,
    variants: list[str],
    options: DecisionEvalOptions,
) -> dict[tuple[str, str], dict]:
    """Every (variant, row) answered, from the cache or with at most ``concurrency`` in flight."""
    bodies = {"original": body, "reversed": _reversed(body)}
    keys = {qid: question_keys(q) for qid, q in body["questions"].items()}
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
                    result = future.result()
                    results[(variant, row.key)] = result
                    if "answers" in result:
                        cache.put(variant, row.key, _to_cache(result["answers"]))
                    tick(1)
        except KeyboardInterrupt:
            for future in pending:
                future.cancel()
            raise
    return results


def _question_report(qid: str, question: dict, rows: list[DecisionRow], results, options) -> dict:
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
    if "order" in options.perturb and question["type"] == "choice":
        moved = [results.get(("reversed", r.key), {}) for r in answered]
        pairs = [(p, metrics.argmax_first(m["answers"][qid])) for p, m in zip(picks, moved) if "answers" in m]
        report["perturbation"]["order"] = {
            "rows": len(pairs),
            "flips": {METHOD: sum(a != b for a, b in pairs)},
        }
    return report


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def run_decision_eval(
    engine,
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
    variants = ["original"] + (["reversed"] if "order" in options.perturb else [])
    results = score_rows(engine, body, rows, cache, variants, options)
    hits = sum(1 for result in results.values() if result.get("cached"))
    scored = sum(1 for result in results.values() if "answers" in result and not result.get("cached"))
    failed = [
        {"id": r.id, "line": r.number, "variant": v, "error": results[(v, r.key)]["error"]}
        for v in variants
        for r in rows
        if "error" in results.get((v, r.key), {})
    ]
    questions = [_question_report(qid, q, rows, results, options) for qid, q in body["questions"].items()]
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
        f"{'NLL':>5} {'NLL(T)':>6} {'T':>5}" + "".join(f" {'flips:' + p:>11}" for p in perturb)
    )
    out += [header, "-" * len(header)]

    def num(value) -> str:
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
        for name in perturb:
            moved = question["perturbation"].get(name)
            line += f" {'' if moved is None else str(moved['flips'][METHOD]) + '/' + str(moved['rows']):>11}"
        out.append(line)
    if report["failed"]:
        out.append("")
        out.append(f"failed rows ({len(report['failed'])}; not in the metrics):")
        out.extend(f"  {f['id']} (line {f['line']}, {f['variant']}): {f['error']}" for f in report["failed"])
    out.extend(f"note: {note}" for note in report["notes"])
    return "\n".join(out) + "\n"
