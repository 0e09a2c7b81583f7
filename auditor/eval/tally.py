"""What a decision eval keeps of each answered row, and the metrics made from it at the end.

A ``QuestionTally`` holds, per labeled and answered row of one question, its line in the data
file, its gold answer, whether it is held out and the served probabilities: compact arrays, a
few dozen bytes a row, so a run's memory stays small at a million rows. The metrics are computed
once, at the end, over the rows sorted by line: the same rows give the same numbers in the same
order whether they came from one run or from merged shards (``auditor.eval.shards``).

The held-out split is by row id (``held_out``): a row is held out when the SHA-256 of the seed
and its id, read as a number in [0, 1), is below the holdout share; so every shard of a run
agrees on it, and a row keeps its side whatever rows are around it.
"""

from __future__ import annotations

from array import array
from typing import Any

from auditor.decoder.orderprobe import order_verdict
from auditor.eval import metrics
from auditor.eval.metrics import held_out
from auditor.eval.runner import _method_block

__all__ = ["METHOD", "QuestionTally", "held_out", "order_summary"]

METHOD = "served"


class QuestionTally:
    """One question's answered, labeled rows (see the module docstring)."""

    def __init__(self, qid: str, kind: str, keys: list[str]):
        self.qid, self.kind, self.keys = qid, kind, keys
        self.lines = array("q")
        self.gold = array("l")
        self.held = array("b")
        self.probs = array("d")
        self.probes: list[dict] = []  # the order probe per row (--perturb order)

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, line: int, gold: int, held: bool, probs: list[float]) -> None:
        self.lines.append(line)
        self.gold.append(gold)
        self.held.append(1 if held else 0)
        self.probs.extend(probs)

    def extend(self, other: QuestionTally) -> None:
        self.lines.extend(other.lines)
        self.gold.extend(other.gold)
        self.held.extend(other.held)
        self.probs.extend(other.probs)
        self.probes.extend(other.probes)

    def to_dict(self) -> dict:
        """The rows as a shard's report carries them (``from_dict`` reads them back)."""
        k = len(self.keys)
        return {
            "lines": list(self.lines),
            "gold": list(self.gold),
            "held": [bool(h) for h in self.held],
            "probabilities": [list(self.probs[i * k : (i + 1) * k]) for i in range(len(self.lines))],
        }

    @classmethod
    def from_dict(cls, qid: str, kind: str, keys: list[str], data: Any, probes: list) -> QuestionTally:
        """A tally from a shard's report; ValueError naming what is wrong with it."""
        tally = cls(qid, kind, keys)
        if not isinstance(data, dict):
            raise ValueError(f"question {qid!r}: no rows")
        lines, gold, held, probs = (data.get(k) for k in ("lines", "gold", "held", "probabilities"))
        if not all(isinstance(v, list) for v in (lines, gold, held, probs)) or not (
            len(lines) == len(gold) == len(held) == len(probs)  # type: ignore[arg-type]
        ):
            raise ValueError(f"question {qid!r}: rows of unequal lengths")
        for line, g, h, p in zip(lines, gold, held, probs):  # type: ignore[arg-type]
            if not (
                type(line) is int
                and type(g) is int
                and 0 <= g < len(keys)
                and type(h) is bool
                and isinstance(p, list)
                and len(p) == len(keys)
                and all(type(x) in (int, float) and 0.0 <= x <= 1.0 for x in p)
            ):
                raise ValueError(f"question {qid!r}: a row that is not a line, gold answer and probabilities")
            tally.add(line, g, h, [float(x) for x in p])
        if not isinstance(probes, list) or not all(isinstance(p, dict) for p in probes):
            raise ValueError(f"question {qid!r}: order probes that are not a list of rows")
        tally.probes = list(probes)
        return tally

    def report(self, orders: int | None) -> dict:
        """The question's block of the report: counts and the served method's metrics (and the
        order probe's summary when ``orders``), over the rows in line order."""
        k = len(self.keys)
        lines = self.lines
        # rows come in line order (a run hands them on in the file's order); merged shards do not
        ordered = all(lines[i] < lines[i + 1] for i in range(len(lines) - 1))
        order: Any = range(len(lines)) if ordered else sorted(range(len(lines)), key=lines.__getitem__)
        # the log-scores, flat, in line order: 8 bytes a score rather than a list of floats a row
        logs = array("d")
        for i in order:
            logs.extend(metrics.log_scores(self.probs[i * k : (i + 1) * k]))
        scores = metrics.ScoreRows(logs, k)
        gold = [self.gold[i] for i in order]
        picks = [metrics.argmax_first(s) for s in scores]
        held = array("q", (position for position, i in enumerate(order) if self.held[i]))
        train = array("q", (position for position, i in enumerate(order) if not self.held[i]))
        report: dict[str, Any] = {
            "name": self.qid,
            "kind": self.kind,
            "options": self.keys,
            "labeled": len(gold),
            "label_counts": [gold.count(c) for c in range(k)],
            "methods": {METHOD: _method_block(METHOD, scores, picks, gold, k, train, held)},
            "perturbation": {},
        }
        if orders is not None:
            report["perturbation"]["order"] = order_summary(self.keys, orders, self.probes)
        return report


def order_summary(keys: list[str], count: int, by_row: list[dict]) -> dict:
    """The order probe over the rows (each as ``verify --probe order`` gives it), summed."""
    rows = sorted(by_row, key=lambda probe: probe.get("line", 0))
    wins = [sum(probe["position_wins"][i] for probe in rows) for i in range(len(keys))]
    flipped = sum(1 for probe in rows if probe["flips"])
    requests = sum(probe["flips"] for probe in rows)
    swung = max(rows, key=lambda probe: probe["largest_swing"], default=None)
    return {
        "rows": len(rows),
        "orders": count,
        "flips": {METHOD: flipped},
        "flipped_requests": requests,
        "reordered_requests": len(rows) * (count - 1),
        "position_wins": wins,
        "largest_swing": swung["largest_swing"] if swung else 0.0,
        "swing_option": swung["swing_option"] if swung else None,
        "swing_row": swung["id"] if swung else None,
        "verdict": order_verdict(
            requests,
            len(rows) * (count - 1),
            wins,
            len(rows) * count,
            f"stable: no row's answer changed in {count} orders ({len(rows)} rows)",
        ),
        "by_row": rows,
    }
