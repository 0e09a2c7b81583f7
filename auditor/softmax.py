"""The one softmax: log-scores (or logits) over a set of options → probabilities.

Every place that turns scores into a distribution calls this: the reference decoder's gathers
(`float32=True`: numpy in float32, what the decoder's tensors hold, so a tie stays bit-identical
and a server backend needs no torch), llm2jev's label probabilities and eval's calibrated
methods (`temperature`). The largest score is subtracted first, so no exponent overflows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def softmax(scores: Sequence[float] | Any, temperature: float = 1.0, *, float32: bool = False) -> Any:
    """`exp(s / T)` normalised over `scores`: a list of floats, or with `float32` a numpy float32
    array. Scores that are all -inf give NaNs (the caller decides what that means)."""
    if float32:
        import numpy as np

        row = np.asarray(scores, dtype=np.float32)
        if temperature != 1.0:
            row = row / np.float32(temperature)
        exp = np.exp(row - row.max())
        return exp / exp.sum(dtype=np.float32)
    peak = max(scores)
    weights = [math.exp((s - peak) / temperature) for s in scores]
    total = math.fsum(weights)
    return [w / total for w in weights]
