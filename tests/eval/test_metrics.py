"""The pure metrics of `pcdlint eval`, checked against values computed by hand or by definition."""

from __future__ import annotations

import math
import random

import pytest

from auditor.decoder.constrained import constrained_pick
from auditor.eval import metrics
from auditor.eval.constrained import constrained_distribution
from auditor.softmax import softmax


def test_wilson_interval_matches_the_closed_form():
    low, high = metrics.wilson_interval(8, 10)
    # Wilson (1927) for p = 0.8, n = 10, z = 1.96: [0.4902, 0.9433]
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert metrics.wilson_interval(0, 20)[0] == 0.0 and metrics.wilson_interval(0, 20)[1] == pytest.approx(
        0.1611, abs=1e-4
    )
    assert metrics.wilson_interval(20, 20)[1] == 1.0
    assert metrics.wilson_interval(0, 0) == (0.0, 1.0)


def test_confusion_and_macro_f1():
    gold = [0, 0, 1, 1, 2, 2]
    pred = [0, 1, 1, 1, 0, 2]
    assert metrics.confusion_matrix(gold, pred, 4) == [[1, 1, 0, 0], [0, 2, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]
    # per class F1: 0 -> 2*1/(2+1+1)=0.5, 1 -> 2*2/(4+1)=0.8, 2 -> 2*1/(2+1)=0.667; class 3 absent
    assert metrics.macro_f1(gold, pred, 4) == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)


def test_ece_by_definition_and_bin_edges():
    confidences = [0.95, 0.95, 0.55, 0.55, 1.0]
    correct = [True, False, True, True, True]
    bins = metrics.reliability_bins(confidences, correct)
    assert [b.count for b in bins] == [0, 0, 0, 0, 0, 2, 0, 0, 0, 3]  # 1.0 lands in the last bin
    expected = 2 / 5 * abs(1.0 - 0.55) + 3 / 5 * abs(2 / 3 - (0.95 + 0.95 + 1.0) / 3)
    assert metrics.expected_calibration_error(confidences, correct) == pytest.approx(expected)


def test_nll_and_temperature_fit_recover_a_known_temperature():
    rng = random.Random(7)
    true_t = 2.5
    rows, gold = [], []
    for _ in range(3000):
        logits = [rng.gauss(0, 3) for _ in range(4)]
        probs = softmax(logits, true_t)
        gold.append(rng.choices(range(4), probs)[0])
        rows.append(logits)
    fitted = metrics.fit_temperature(rows, gold)
    assert fitted == pytest.approx(true_t, rel=0.1)
    assert metrics.nll(rows, gold, fitted) <= metrics.nll(rows, gold, 1.0)
    assert metrics.nll([[0.0, 0.0]], [1]) == pytest.approx(math.log(2))
    assert metrics.fit_temperature([], []) == 1.0


def test_first_token_reachability_and_ceiling():
    buckets = [[0, 1], [2, 3]]
    assert [metrics.first_token_reachable(buckets, o) for o in range(5)] == [True, False, True, False, True]
    assert metrics.first_token_ceiling(buckets, [0, 1, 2, 3, 4, 1]) == pytest.approx(3 / 6)
    assert metrics.argmax_first([0.2, 0.5, 0.5]) == 1


def test_constrained_pick_walks_the_trie_greedily():
    close = 9
    # options: [1, 2, close], [1, 3, close], [4, close]
    sequences = [[1, 2, close], [1, 3, close], [4, close]]
    lp = {
        ("root", 1): math.log(0.5),
        ("root", 4): math.log(0.4),
        ("1", 2): math.log(0.1),
        ("1", 3): math.log(0.6),
    }
    steps = [
        [lp[("root", 1)], lp[("1", 2)], 0.0],
        [lp[("root", 1)], lp[("1", 3)], 0.0],
        [lp[("root", 4)], 0.0],
    ]
    choice, probs = constrained_pick(sequences, steps).option, constrained_distribution(sequences, steps)
    assert choice == 1  # token 1 beats 4 at the root, then 3 beats 2
    root_1, root_4 = 0.5 / 0.9, 0.4 / 0.9
    assert probs == pytest.approx([root_1 * 0.1 / 0.7, root_1 * 0.6 / 0.7, root_4])
    assert sum(probs) == pytest.approx(1.0)
    # the full-sequence argmax (option 2: log 0.4) differs from the greedy constrained pick
    assert max(range(3), key=lambda i: sum(steps[i])) == 2


def test_constrained_pick_ties_go_to_the_lower_token_and_duplicates_are_safe():
    assert constrained_pick([[1, 9], [2, 9]], [[-1.0, 0.0], [-1.0, 0.0]]).option == 0
    assert constrained_pick([[2, 9], [1, 9]], [[-1.0, 0.0], [-1.0, 0.0]]).option == 1
    same, steps = [[1, 9], [1, 9]], [[-1.0, 0.0], [-1.0, 0.0]]
    choice, probs = constrained_pick(same, steps).option, constrained_distribution(same, steps)
    assert choice == 0 and probs == pytest.approx([1.0, 0.0])


def test_nll_and_temperature_fit_on_arrays_agree_with_the_python_loop(monkeypatch):
    """From NUMPY_ROWS rows on, NLL and the fit run on numpy arrays: the same numbers as the
    Python loop (to rounding), exact zeros (LOG_FLOOR) included."""
    rng = random.Random(7)
    scores = [[rng.uniform(-6, 0) for _ in range(3)] + [metrics.LOG_FLOOR] for _ in range(600)]
    gold = [rng.randrange(3) for _ in scores]
    on_arrays = (metrics.nll(scores, gold, 0.7), metrics.fit_temperature(scores, gold))
    monkeypatch.setattr(metrics, "NUMPY_ROWS", 10**9)
    in_python = (metrics.nll(scores, gold, 0.7), metrics.fit_temperature(scores, gold))
    assert on_arrays[0] == pytest.approx(in_python[0], rel=1e-12)
    assert on_arrays[1] == pytest.approx(in_python[1], rel=1e-6)
