"""``run_eval``: score every labeled row (through the cache), then measure each field and method.

The result is the versioned JSON report (a plain dict, ``REPORT_VERSION``); the text and HTML
writers read only that dict.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.eval import metrics
from auditor.eval.backends import METHODS, FieldStructure, ScoringBackend
from auditor.eval.cache import ScoreCache
from auditor.eval.data import EvalField, Row
from auditor.softmax import softmax
from auditor.version import __version__

REPORT_VERSION = 1
PERTURBATIONS = ("order",)
VARIANT_OF = {"order": "reversed"}


@dataclass
class EvalOptions:
    holdout: float = 0.3
    seed: int = 0
    perturb: tuple[str, ...] = ()
    letters: bool = True
    cache_dir: Path | None = None  # None: no cache file (scores kept in memory)
    progress: bool | None = None
    notes: list[str] = field(default_factory=list)


def _bar(enabled: bool, total: int) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="eval", unit="row", file=sys.stderr)


def score_rows(
    fields: list[EvalField],
    rows: list[Row],
    backend: ScoringBackend,
    cache: ScoreCache,
    variants: list[str],
    *,
    letters: bool,
    progress: bool,
    failed: dict[tuple[str, str], str] | None = None,
) -> dict[str, list[list[dict] | None]]:
    """Scores per variant and row, from the cache where present; new rows are cached one by one.

    A backend with ``row_failures`` (a server) may fail a row after its client's retries: the
    error goes into ``failed`` under (variant, row key), the row's scores are None, the run goes on.
    """
    from auditor.decoder.errors import DecoderError

    todo = [(v, r) for v in variants for r in rows if cache.get(v, r.key) is None]
    bar = _bar(progress, len({(v, r.key) for v, r in todo}))
    tolerate = failed is not None and getattr(backend, "row_failures", False)
    try:
        for variant, row in todo:
            if cache.get(variant, row.key) is not None or (variant, row.key) in (failed or {}):
                continue  # a duplicate context scored (or failed) just now
            try:
                scores = backend.score(
                    fields, row.context, reverse_order=variant == "reversed", letters=letters
                )
            except DecoderError as exc:
                if not tolerate or failed is None:
                    raise
                redact = getattr(getattr(getattr(backend, "server", None), "http", None), "redact", str)
                failed[(variant, row.key)] = redact(str(exc))
                continue
            cache.put(variant, row.key, scores)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return {v: [cache.get(v, r.key) for r in rows] for v in variants}


def pick(method: str, scores: dict) -> int:
    if method == "constrained":
        return scores["constrained_pick"]
    return metrics.argmax_first(scores[method])


def _confidence(scores: list[float], chosen: int, temperature: float = 1.0) -> float:
    return softmax(scores, temperature)[chosen]


def _calibration_block(
    scores: list[list[float]], picks: list[int], gold: list[int], temperature: float
) -> dict:
    confidences = [_confidence(s, p, temperature) for s, p in zip(scores, picks)]
    correct = [p == g for p, g in zip(picks, gold)]
    return {
        "ece": metrics.expected_calibration_error(confidences, correct),
        "nll": metrics.nll(scores, gold, temperature),
        "reliability": [b.to_dict() for b in metrics.reliability_bins(confidences, correct)],
    }


def _calibration(
    scores: list[list[float]], picks: list[int], gold: list[int], train: list[int], held: list[int]
) -> dict:
    def take(values: list, indices: list[int]) -> list:
        return [values[i] for i in indices]

    temperature = metrics.fit_temperature(take(scores, train), take(gold, train))
    before = _calibration_block(take(scores, held), take(picks, held), take(gold, held), 1.0)
    after = _calibration_block(take(scores, held), take(picks, held), take(gold, held), temperature)
    note = None
    if not held or not train:
        note = "too few rows for a train/held-out split"
    elif after["ece"] > before["ece"] + 1e-12:
        nll_part = "held-out NLL fell" if after["nll"] < before["nll"] else "held-out NLL rose too"
        note = (
            f"ECE rose from {before['ece']:.3f} to {after['ece']:.3f} on {len(held)} held-out rows; {nll_part} "
            f"({before['nll']:.3f} -> {after['nll']:.3f}): T is fit to minimise NLL on {len(train)} training rows, "
            "not ECE, and 10-bin ECE on this few rows is noisy"
        )
    if temperature >= metrics.T_UPPER * 0.99:
        bound = (
            f"T reached the search bound {temperature:.0f}: on the training rows the scores carry almost no "
            "information about the gold option, so the best fit flattens them to uniform"
        )
        note = bound if note is None else f"{note}; {bound}"
    elif temperature <= metrics.T_LOWER * 1.01:
        bound = f"T reached the search bound {temperature:.2f}: on the training rows the picks are almost always right"
        note = bound if note is None else f"{note}; {bound}"
    return {
        "temperature": temperature,
        "train_rows": len(train),
        "heldout_rows": len(held),
        "before": before,
        "after": after,
        "ece_improved": after["ece"] <= before["ece"] + 1e-12,
        "note": note,
    }


def _method_block(
    method: str,
    scores: list[list[float]],
    picks: list[int],
    gold: list[int],
    classes: int,
    train: list[int],
    held: list[int],
) -> dict:
    correct = sum(p == g for p, g in zip(picks, gold))
    total = len(gold)
    low, high = metrics.wilson_interval(correct, total)
    block: dict[str, Any] = {
        "available": True,
        "n": total,
        "correct": correct,
        "accuracy": correct / total if total else None,
        "wilson95": [low, high],
        "macro_f1": metrics.macro_f1(gold, picks, classes),
        "confusion": metrics.confusion_matrix(gold, picks, classes),
    }
    block.update({"all_rows": _calibration_block(scores, picks, gold, 1.0)})
    block["calibration"] = _calibration(scores, picks, gold, train, held)
    return block


def _field_report(
    spec: EvalField,
    structure: FieldStructure,
    rows: list[Row],
    variants: dict,
    index: int,
    options: EvalOptions,
) -> tuple[dict, dict[str, list[int]], list[int]]:
    labeled = [i for i, row in enumerate(rows) if spec.name in row.labels]
    gold = [rows[i].labels[spec.name] for i in labeled]
    classes = len(spec.options)
    train_pos, held_pos = metrics.holdout_split(len(labeled), options.holdout, options.seed)
    original = [variants["original"][i][index] for i in labeled]
    methods: dict[str, dict] = {}
    picks_by_method: dict[str, list[int]] = {}
    for method in METHODS:
        if method == "letter" and (not options.letters or not structure.letter_viable):
            reason = "letter scoring off (--no-letters)" if not options.letters else structure.letter_note
            methods[method] = {"available": False, "reason": reason}
            continue
        scores = [s[method] for s in original]
        picks = [pick(method, s) for s in original]
        picks_by_method[method] = picks
        methods[method] = _method_block(method, scores, picks, gold, classes, train_pos, held_pos)

    first, full = picks_by_method["first_token"], picks_by_method["full_sequence"]
    unreachable = [not metrics.first_token_reachable(structure.buckets, g) for g in gold]
    flipped = [f != g and s == g for f, s, g in zip(first, full, gold)]
    tokenization = {
        "gold_unreachable": sum(unreachable),
        "first_token_wrong_full_sequence_right": sum(flipped),
        "either": sum(a or b for a, b in zip(unreachable, flipped)),
        "first_token_ceiling": metrics.first_token_ceiling(structure.buckets, gold),
        "ceiling_rows": sum(not u for u in unreachable),
    }
    report: dict = {
        "name": spec.name,
        "kind": structure.kind,
        "options": list(spec.options),
        "labeled": len(gold),
        "label_counts": [gold.count(k) for k in range(classes)],
        "structure": structure.to_dict(),
        "methods": methods,
        "tokenization": tokenization,
        "perturbation": {},
    }
    for name in options.perturb:
        perturbed = [variants[VARIANT_OF[name]][i][index] for i in labeled]
        flips, accuracy = {}, {}
        for method, picks in picks_by_method.items():
            moved = [pick(method, s) for s in perturbed]
            flips[method] = sum(a != b for a, b in zip(picks, moved))
            accuracy[method] = sum(m == g for m, g in zip(moved, gold)) / len(gold) if gold else None
        report["perturbation"][name] = {"rows": len(gold), "flips": flips, "accuracy": accuracy}
    return report, picks_by_method, labeled


def _finite(value: Any) -> Any:
    """NaN/inf (a metric over no rows) as None, so the JSON stays strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def run_eval(
    fields: list[EvalField],
    rows: list[Row],
    backend: ScoringBackend,
    options: EvalOptions,
    *,
    schema_path: str,
    data_path: str,
) -> dict:
    """Score (or read from cache) every row and build the JSON report (version ``REPORT_VERSION``).
    A row that could not be read (``Row.error``: over the byte limit) is a failed row."""
    unread = [row for row in rows if row.error is not None]
    rows = [row for row in rows if row.error is None]
    identity = backend.identity()
    material = {
        "schema": [[f.name, f.options, f.description, f.label] for f in fields],
        "backend": identity,
        "scoring": backend.fingerprint(fields),
        "letters": options.letters,
    }
    cache = ScoreCache(options.cache_dir, material, shape=[len(f.options) for f in fields])
    if cache.skipped:  # a damaged line is rescored, and said
        options.notes.append(cache.note())
    variants = ["original"] + [VARIANT_OF[name] for name in options.perturb]
    before = len(cache.entries)
    progress = sys.stderr.isatty() if options.progress is None else options.progress
    structures = backend.structure(fields)
    errors: dict[tuple[str, str], str] = {}
    scored = score_rows(
        fields, rows, backend, cache, variants, letters=options.letters, progress=progress, failed=errors
    )
    wanted = {(v, r.key) for v in variants for r in rows}
    hits = len(wanted) - (len(cache.entries) - before) - len(errors)
    # a row that failed in any variant is left out of every metric, and listed
    kept = [i for i in range(len(rows)) if all(scored[v][i] is not None for v in variants)]
    kept_rows = [rows[i] for i in kept]
    kept_scores = {v: [scored[v][i] for i in kept] for v in variants}
    failed = [
        {"id": row.id, "line": row.number, "variant": v, "error": errors[(v, row.key)]}
        for v in variants
        for row in rows
        if (v, row.key) in errors
    ] + [{"id": row.id, "line": row.number, "variant": "original", "error": row.error} for row in unread]
    if unread:
        options.notes.append(
            f"{len(unread)} row(s) could not be read and are left out of the metrics: "
            + "; ".join(f"line {row.number}: {row.error}" for row in unread[:5])
            + ("; …" if len(unread) > 5 else "")
        )
    if errors:
        options.notes.append(
            f"{len(errors)} row request(s) failed after the client's retries and are left out of the "
            "metrics: "
            + "; ".join(f"{f['id']} ({f['variant']}): {f['error']}" for f in failed[:5])
            + ("; …" if len(errors) > 5 else "")
        )
    for note in getattr(backend, "notes", []) if getattr(backend, "row_failures", False) else []:
        if note not in options.notes:
            options.notes.append(note)

    field_reports: list[dict] = []
    row_picks: list[dict] = [{} for _ in rows]
    for index, (spec, structure) in enumerate(zip(fields, structures, strict=True)):
        report, picks_by_method, labeled = _field_report(
            spec, structure, kept_rows, kept_scores, index, options
        )
        field_reports.append(report)
        for position, row_index in enumerate(labeled):
            row_picks[kept[row_index]][spec.name] = {
                m: spec.options[p[position]] for m, p in picks_by_method.items()
            }
    server = None
    if getattr(backend, "row_failures", False):
        stats = getattr(backend, "stats", {}) or {}
        server = {
            "requests": stats.get("requests"),
            "retries": stats.get("retries"),
            "by_status": {str(k): v for k, v in (stats.get("by_status") or {}).items()},
            "tokenization_mismatches": getattr(backend, "mismatches", 0),
        }
    return _finite(
        {
            "version": REPORT_VERSION,
            "tool": {"name": "pcdlint", "version": __version__},
            "schema": schema_path,
            "data": data_path,
            "rows": len(rows) + len(unread),
            "backend": identity,
            "options": {
                "holdout": options.holdout,
                "seed": options.seed,
                "perturb": list(options.perturb),
                "letters": options.letters,
                "ece_bins": metrics.ECE_BINS,
            },
            "cache": {
                "path": str(cache.path) if cache.path else None,
                "key": cache.key,
                "hits": hits,
                "scored": len(wanted) - hits - len(errors),
                "failed": len(errors),
            },
            "server": server,
            "failed": failed,
            "fields": field_reports,
            "predictions": [
                {
                    "id": row.id,
                    "context_sha256": row.key,
                    "labels": {f.name: f.options[row.labels[f.name]] for f in fields if f.name in row.labels},
                    "picks": row_picks[i],
                }
                for i, row in enumerate(rows)
            ],
            "notes": list(options.notes),
        }
    )


def calibration_file(report: dict) -> dict:
    """The fitted temperatures as a file an engine can load (``--write-calibration``)."""
    return {
        "version": 1,
        "kind": "pcdlint-temperature-calibration",
        "backend": report["backend"],
        "schema": report["schema"],
        "apply": "p = softmax(log_scores / T) over a field's options; log_scores are the method's log-probabilities "
        "(first_token: the gathered first-token softmax; full_sequence: summed option log-probs)",
        "split": {"holdout": report["options"]["holdout"], "seed": report["options"]["seed"]},
        "fields": {
            f["name"]: {
                method: {
                    "temperature": block["calibration"]["temperature"],
                    "heldout_ece_before": block["calibration"]["before"]["ece"],
                    "heldout_ece_after": block["calibration"]["after"]["ece"],
                }
                for method, block in f["methods"].items()
                if block.get("available")
            }
            for f in report["fields"]
        },
    }
