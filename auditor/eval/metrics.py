"""Pure metrics for `pcdlint eval`: no model, no I/O, plain Python numbers.

Scores are per-row lists of per-option *log-scores* (a log-probability or any logit-like
score); a method's distribution over options is ``softmax(scores / T)`` with ``T = 1`` unless
temperature-scaled. Options are addressed by index in schema order throughout.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054  # two-sided 95 % normal quantile
ECE_BINS = 10
LOG_FLOOR = -1e30  # stands for log(0) so an exactly-zero probability stays finite
T_LOWER, T_UPPER = 0.01, 100.0  # temperature search range


def wilson_interval(correct: int, total: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when there is no data."""
    if total <= 0:
        return 0.0, 1.0
    p = correct / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def confusion_matrix(gold: list[int], pred: list[int], classes: int) -> list[list[int]]:
    """``matrix[g][p]``: rows are gold options, columns predicted options."""
    matrix = [[0] * classes for _ in range(classes)]
    for g, p in zip(gold, pred, strict=True):
        matrix[g][p] += 1
    return matrix


def macro_f1(gold: list[int], pred: list[int], classes: int) -> float:
    """Unweighted mean F1 over the classes that occur in gold or predictions (as scikit-learn)."""
    matrix = confusion_matrix(gold, pred, classes)
    scores = []
    for k in range(classes):
        tp = matrix[k][k]
        fn = sum(matrix[k]) - tp
        fp = sum(matrix[g][k] for g in range(classes)) - tp
        if tp + fn + fp == 0:
            continue
        scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores) if scores else 0.0


def log_scores(probs: Iterable[float]) -> list[float]:
    """Probabilities as log-scores (exact zeros kept finite)."""
    return [math.log(p) if p > 0 else LOG_FLOOR for p in probs]


class ScoreRows:
    """Rows of ``width`` scores kept in one flat ``array('d')`` (8 bytes a score), read a row at a
    time as a list of floats: what the metrics below take as ``rows_scores``, for a run of a
    million rows without a million lists (about 0.5 KB a row as lists, 8 bytes a score here).
    ``take`` gives the rows at some positions without copying them; ``matrix`` the rows as a
    numpy array, the same numbers ``numpy.asarray`` makes of the lists."""

    def __init__(self, flat: array, width: int, positions: array | None = None):
        self.flat, self.width, self.positions = flat, width, positions

    def __len__(self) -> int:
        return len(self.flat) // self.width if self.positions is None else len(self.positions)

    def __getitem__(self, index: int) -> list[float]:
        row = index if self.positions is None else self.positions[index]
        return self.flat[row * self.width : (row + 1) * self.width].tolist()

    def __iter__(self) -> Iterator[list[float]]:
        for index in range(len(self)):
            yield self[index]

    def take(self, indices: Iterable[int]) -> ScoreRows:
        rows = array("q", indices if self.positions is None else (self.positions[i] for i in indices))
        return ScoreRows(self.flat, self.width, rows)

    def matrix(self) -> Any:
        import numpy as np

        every = np.frombuffer(self.flat, dtype=np.float64).reshape(-1, self.width)
        return every if self.positions is None else every[np.frombuffer(self.positions, dtype=np.int64)]


# From this many rows on, NLL and the temperature fit run on numpy arrays (one conversion, then
# each of the fit's ~160 evaluations vectorised): 10,000 rows took 1.4 s a question in Python.
NUMPY_ROWS = 256


def nll(rows_scores: list[list[float]] | ScoreRows, gold: list[int], temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of the gold options under ``softmax(scores / T)``."""
    if not gold:
        return float("nan")
    if len(gold) >= NUMPY_ROWS:
        return _array_nll(*_arrays(rows_scores, gold))(temperature)
    total = 0.0
    for scores, g in zip(rows_scores, gold, strict=True):
        scaled = [s / temperature for s in scores]
        top = max(scaled)
        log_z = top + math.log(sum(math.exp(s - top) for s in scaled))
        total += log_z - scaled[g]
    return total / len(gold)


@dataclass
class ReliabilityBin:
    lower: float
    upper: float
    count: int
    accuracy: float | None
    confidence: float | None

    def to_dict(self) -> dict:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "count": self.count,
            "accuracy": self.accuracy,
            "confidence": self.confidence,
        }


def reliability_bins(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS
) -> list[ReliabilityBin]:
    """Equal-width confidence bins; a confidence of exactly 1 falls in the last bin."""
    members = [array("d") for _ in range(bins)]  # each bin's confidences, in row order
    right = [0] * bins
    for confidence, hit in zip(confidences, correct, strict=True):
        b = min(bins - 1, int(confidence * bins))
        members[b].append(confidence)
        right[b] += bool(hit)
    out = []
    for b, values in enumerate(members):
        count = len(values)
        out.append(
            ReliabilityBin(
                lower=b / bins,
                upper=(b + 1) / bins,
                count=count,
                accuracy=right[b] / count if count else None,
                confidence=sum(values) / count if count else None,
            )
        )
    return out


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS
) -> float:
    """ECE with equal-width bins: sum over bins of (bin share) * |accuracy - mean confidence|."""
    total = len(confidences)
    if total == 0:
        return float("nan")
    return sum(
        b.count / total * abs(b.accuracy - b.confidence)
        for b in reliability_bins(confidences, correct, bins)
        if b.accuracy is not None and b.confidence is not None
    )


def fit_temperature(
    rows_scores: list[list[float]] | ScoreRows,
    gold: list[int],
    *,
    lower: float = T_LOWER,
    upper: float = T_UPPER,
    iterations: int = 80,
) -> float:
    """The T minimising held-in NLL of ``softmax(scores / T)``.

    NLL is convex in 1/T, hence unimodal in log T: golden-section search on log T over
    [lower, upper]. With no rows, or scores that carry no information, T = 1.
    """
    if not gold:
        return 1.0
    objective: Callable[[float], float] = (
        _array_nll(*_arrays(rows_scores, gold))
        if len(gold) >= NUMPY_ROWS
        else lambda t: nll(rows_scores, gold, t)
    )
    a, b = math.log(lower), math.log(upper)
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = objective(math.exp(c)), objective(math.exp(d))
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = objective(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = objective(math.exp(d))
    best = math.exp((a + b) / 2)
    return best if objective(best) < objective(1.0) else 1.0


def _arrays(rows_scores: list[list[float]] | ScoreRows, gold: list[int]) -> tuple[Any, Any]:
    import numpy as np

    if isinstance(rows_scores, ScoreRows):
        return rows_scores.matrix(), np.asarray(gold, dtype=np.intp)
    return np.asarray(rows_scores, dtype=np.float64), np.asarray(gold, dtype=np.intp)


def _array_nll(scores: Any, gold: Any) -> Callable[[float], float]:
    """``nll`` over arrays, as a function of T (the scores converted once)."""
    import numpy as np

    rows = np.arange(len(gold))

    def at(temperature: float) -> float:
        scaled = scores / temperature
        top = scaled.max(axis=1)
        shifted = scaled - top[:, None]
        np.exp(shifted, out=shifted)  # in place: one temporary the size of the scores, not two
        log_z = top + np.log(shifted.sum(axis=1))
        return float(np.mean(log_z - scaled[rows, gold]))

    return at


def held_out(row_id: str, holdout: float, seed: int) -> bool:
    """Whether the row with this id is held out (the calibration's measured side): the SHA-256 of
    the seed and the id, read as a number in [0, 1), is below the holdout share. By id, so a row
    keeps its side whatever rows are around it and every shard of a run agrees."""
    digest = hashlib.sha256(f"{seed}\0{row_id}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < holdout


def first_token_reachable(buckets: list[list[int]], option: int) -> bool:
    """Whether ``option`` can win under first-token scoring: it is alone or first in its bucket.

    A bucket is the options sharing one scored token; a plain gather gives them identical
    scores and argmax returns the lowest index, so only a bucket's first option can win.
    """
    for bucket in buckets:
        if option in bucket:
            return bucket[0] == option
    return True


def first_token_ceiling(buckets: list[list[int]], gold: list[int]) -> float:
    """The best accuracy first-token scoring can reach on this label distribution."""
    if not gold:
        return float("nan")
    return sum(first_token_reachable(buckets, g) for g in gold) / len(gold)


def argmax_first(values: list[float]) -> int:
    """Index of the first maximum (ties to the lowest index, as torch.argmax)."""
    best = 0
    for index, value in enumerate(values):
        if value > values[best]:
            best = index
    return best
