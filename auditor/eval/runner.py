"""``run_eval``: score every labeled row (through the cache), then measure each field and method.

The rows come as a stream and are kept as compact per-field tallies (``FieldTally``) and
predictions spilled to disk, so memory does not grow with the rows. The result is the versioned
JSON report (a plain dict, ``REPORT_VERSION``, its ``predictions`` a ``Spill``); the text and
HTML writers read only that dict, and none of them the per-row predictions.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.eval import metrics
from auditor.eval.backends import METHODS, FieldStructure, ScoringBackend
from auditor.eval.cache import ScoreCache
from auditor.eval.data import EvalField, Row
from auditor.redaction import masked_by
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


def pick(method: str, scores: dict) -> int:
    if method == "constrained":
        return scores["constrained_pick"]
    return metrics.argmax_first(scores[method])


def _confidence(scores: list[float], chosen: int, temperature: float = 1.0) -> float:
    return softmax(scores, temperature)[chosen]


def _calibration_block(
    scores: list[list[float]] | metrics.ScoreRows, picks: list[int], gold: list[int], temperature: float
) -> dict:
    confidences = array("d", (_confidence(s, p, temperature) for s, p in zip(scores, picks)))
    correct = [p == g for p, g in zip(picks, gold)]
    return {
        "ece": metrics.expected_calibration_error(confidences, correct),
        "nll": metrics.nll(scores, gold, temperature),
        "reliability": [b.to_dict() for b in metrics.reliability_bins(confidences, correct)],
    }


def _calibration(
    scores: list[list[float]] | metrics.ScoreRows,
    picks: list[int],
    gold: list[int],
    train: Sequence[int],
    held: Sequence[int],
) -> dict:
    def take(values: Any, indices: Sequence[int]) -> Any:
        if isinstance(values, metrics.ScoreRows):
            return values.take(indices)
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
    scores: list[list[float]] | metrics.ScoreRows,
    picks: list[int],
    gold: list[int],
    classes: int,
    train: Sequence[int],
    held: Sequence[int],
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


class FieldTally:
    """What a schema eval keeps of each labeled, scored row of one field, in the file's order:
    compact arrays (the gold option, the held-out side, each method's log-scores and pick) and
    the order perturbation's counts, so a run's memory does not hold its rows."""

    def __init__(self, spec: EvalField, structure: FieldStructure, options: EvalOptions):
        self.spec, self.structure, self.options = spec, structure, options
        self.width = len(spec.options)
        self.methods = [m for m in METHODS if self.unavailable(m) is None]
        self.gold = array("l")
        self.held = array("b")
        self.scores = {m: array("d") for m in self.methods}
        self.picks = {m: array("l") for m in self.methods}
        # per perturbation and method: rows whose pick moved, rows the moved pick got right
        self.flips = {name: dict.fromkeys(self.methods, 0) for name in options.perturb}
        self.moved_right = {name: dict.fromkeys(self.methods, 0) for name in options.perturb}

    def unavailable(self, method: str) -> str | None:
        """Why ``method`` is not measured on this field, or None."""
        if method == "letter" and (not self.options.letters or not self.structure.letter_viable):
            return (
                "letter scoring off (--no-letters)"
                if not self.options.letters
                else self.structure.letter_note
            )
        return None

    def add(self, gold: int, held: bool, scores: dict, perturbed: dict[str, dict]) -> dict[str, int]:
        """One row: its gold option, its side of the split, its scores (``perturbed``: per
        perturbation, the variant's scores). Returns the row's pick per method."""
        self.gold.append(gold)
        self.held.append(1 if held else 0)
        picks = {}
        for method in self.methods:
            picks[method] = chosen = pick(method, scores)
            self.scores[method].extend(scores[method])
            self.picks[method].append(chosen)
            for name, moved_scores in perturbed.items():
                moved = pick(method, moved_scores)
                self.flips[name][method] += moved != chosen
                self.moved_right[name][method] += moved == gold
        return picks

    def report(self) -> dict:
        """The field's block of the report, over its rows in file order."""
        spec, structure, width = self.spec, self.structure, self.width
        gold = list(self.gold)
        held = array("q", (i for i, h in enumerate(self.held) if h))
        train = array("q", (i for i, h in enumerate(self.held) if not h))
        methods: dict[str, dict] = {}
        for method in METHODS:
            reason = self.unavailable(method)
            if reason is not None:
                methods[method] = {"available": False, "reason": reason}
                continue
            scores = metrics.ScoreRows(self.scores[method], width)  # the tally's array, not a list a row
            methods[method] = _method_block(
                method, scores, list(self.picks[method]), gold, width, train, held
            )
        first, full = self.picks["first_token"], self.picks["full_sequence"]
        unreachable = [not metrics.first_token_reachable(structure.buckets, g) for g in gold]
        flipped = [f != g and s == g for f, s, g in zip(first, full, gold)]
        return {
            "name": spec.name,
            "kind": structure.kind,
            "options": list(spec.options),
            "labeled": len(gold),
            "label_counts": [gold.count(k) for k in range(width)],
            "structure": structure.to_dict(),
            "methods": methods,
            "tokenization": {
                "gold_unreachable": sum(unreachable),
                "first_token_wrong_full_sequence_right": sum(flipped),
                "either": sum(a or b for a, b in zip(unreachable, flipped)),
                "first_token_ceiling": metrics.first_token_ceiling(structure.buckets, gold),
                "ceiling_rows": sum(not u for u in unreachable),
            },
            "perturbation": {
                name: {
                    "rows": len(gold),
                    "flips": self.flips[name],
                    "accuracy": {
                        m: right / len(gold) if gold else None for m, right in self.moved_right[name].items()
                    },
                }
                for name in self.options.perturb
            },
        }


def _finite(value: Any) -> Any:
    """NaN/inf (a metric over no rows) as None, so the JSON stays strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


class _Scorer:
    """A row's scores per variant: from the cache, or the backend (then appended to the cache
    file in batches, never kept in memory: a context that comes twice in one run is scored
    twice). A backend with ``row_failures`` (a server) may fail a row after its client's
    retries: the row's error per variant is returned, the run goes on."""

    def __init__(self, backend: ScoringBackend, cache: ScoreCache, fields: list[EvalField], letters: bool):
        self.backend, self.cache, self.fields, self.letters = backend, cache, fields, letters
        self.tolerate = getattr(backend, "row_failures", False)
        self.hits = self.scored = 0

    def score(self, row: Row, variants: list[str]) -> tuple[dict[str, list[dict]], dict[str, str]]:
        from auditor.decoder.errors import DecoderError

        scores: dict[str, list[dict]] = {}
        errors: dict[str, str] = {}
        for variant in variants:
            cached = self.cache.get(variant, row.key)
            if cached is not None:
                scores[variant] = cached
                self.hits += 1
                continue
            try:
                got = self.backend.score(
                    self.fields, row.context, reverse_order=variant == "reversed", letters=self.letters
                )
            except DecoderError as exc:
                if not self.tolerate:
                    raise
                errors[variant] = masked_by(
                    getattr(getattr(self.backend, "server", None), "http", None), str(exc)
                )
                continue
            self.cache.put(variant, row.key, got, remember=False)
            self.scored += 1
            scores[variant] = got
        return scores, errors


def run_eval(
    fields: list[EvalField],
    rows: Iterable[Row],
    backend: ScoringBackend,
    options: EvalOptions,
    *,
    schema_path: str,
    data_path: str,
) -> dict:
    """Score (or read from cache) every row and build the JSON report (version ``REPORT_VERSION``).

    ``rows`` is read once, as a stream (``auditor.eval.data.LabeledData``, or a list): each row is
    scored, its labeled fields tallied (``FieldTally``) and its prediction spilled to disk
    (``auditor.eval.spill``: the report's ``predictions`` is a ``Spill``, written by
    ``auditor.reporting.json_stream``), so memory does not grow with the rows. A row is held out
    of the temperature fit by its id (``metrics.held_out``). A row that could not be
    read (``Row.error``: over the byte limit) is a failed row; so is one whose request failed
    (a server backend) in any variant, left out of every metric."""
    from auditor.eval.spill import Spill

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
    progress = sys.stderr.isatty() if options.progress is None else options.progress
    tallies = [
        FieldTally(spec, structure, options)
        for spec, structure in zip(fields, backend.structure(fields), strict=True)
    ]
    scorer = _Scorer(backend, cache, fields, options.letters)
    predictions = Spill()
    errors: dict[str, list[dict]] = {v: [] for v in variants}  # request failures, by variant
    unread: list[Row] = []
    count = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(rows) if isinstance(rows, Sized) else None, desc="eval", unit="row", file=sys.stderr
        )
    try:
        for row in rows:
            if row.error is not None:
                unread.append(Row(row.number, row.id, "", {}, error=row.error))
                continue
            count += 1
            scores, failed_variants = scorer.score(row, variants)
            for variant, error in failed_variants.items():
                errors[variant].append({"id": row.id, "line": row.number, "variant": variant, "error": error})
            picks: dict[str, dict] = {}
            if not failed_variants:
                held = metrics.held_out(row.id, options.holdout, options.seed)
                for index, tally in enumerate(tallies):
                    name = tally.spec.name
                    if name not in row.labels:
                        continue
                    perturbed = {p: scores[VARIANT_OF[p]][index] for p in options.perturb}
                    chosen = tally.add(row.labels[name], held, scores["original"][index], perturbed)
                    picks[name] = {m: tally.spec.options[p] for m, p in chosen.items()}
            predictions.append(
                {
                    "id": row.id,
                    "context_sha256": row.key,
                    "labels": {f.name: f.options[row.labels[f.name]] for f in fields if f.name in row.labels},
                    "picks": picks,
                }
            )
            if bar is not None:
                bar.update(1)
    finally:
        cache.flush()
        if bar is not None:
            bar.close()
    failed = [entry for v in variants for entry in errors[v]] + [
        {"id": row.id, "line": row.number, "variant": "original", "error": row.error} for row in unread
    ]
    requests_failed = sum(len(entries) for entries in errors.values())
    if unread:
        options.notes.append(
            f"{len(unread)} row(s) could not be read and are left out of the metrics: "
            + "; ".join(f"line {row.number}: {row.error}" for row in unread[:5])
            + ("; …" if len(unread) > 5 else "")
        )
    if requests_failed:
        options.notes.append(
            f"{requests_failed} row request(s) failed after the client's retries and are left out of the "
            "metrics: "
            + "; ".join(f"{f['id']} ({f['variant']}): {f['error']}" for f in failed[:5])
            + ("; …" if requests_failed > 5 else "")
        )
    for note in getattr(backend, "notes", []) if getattr(backend, "row_failures", False) else []:
        if note not in options.notes:
            options.notes.append(note)
    server = None
    if getattr(backend, "row_failures", False):
        stats = getattr(backend, "stats", {}) or {}
        server = {
            "requests": stats.get("requests"),
            "retries": stats.get("retries"),
            "by_status": {str(k): v for k, v in (stats.get("by_status") or {}).items()},
            "tokenization_mismatches": getattr(backend, "mismatches", 0),
        }
    report = _finite(
        {
            "version": REPORT_VERSION,
            "tool": {"name": "pcdlint", "version": __version__},
            "schema": schema_path,
            "data": data_path,
            "rows": count + len(unread),
            "backend": identity,
            "options": {
                "holdout": options.holdout,
                "seed": options.seed,
                "perturb": list(options.perturb),
                "letters": options.letters,
                "ece_bins": metrics.ECE_BINS,
                "split": "row-id",
            },
            "cache": {
                "path": str(cache.path) if cache.path else None,
                "key": cache.key,
                "hits": scorer.hits,
                "scored": scorer.scored,
                "failed": requests_failed,
            },
            "server": server,
            "failed": failed,
            "fields": [tally.report() for tally in tallies],
            "predictions": None,
            "notes": list(options.notes),
        }
    )
    report["predictions"] = predictions  # after _finite: the Spill is streamed as it is
    return report


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
