"""The end-of-run metrics of a decision eval read the tallies' flat arrays (``ScoreRows``) rather
than a list of floats a row: the same numbers, to the last bit, in a fraction of the memory
(issue 48: a million-row run keeps its memory near flat)."""

from __future__ import annotations

import random
import tracemalloc
from array import array

import numpy  # noqa: F401  (imported before the memory is traced: its import is not a row's cost)

from auditor.eval import metrics
from auditor.eval.metrics import held_out
from auditor.eval.runner import _method_block
from auditor.eval.tally import METHOD, QuestionTally


def tally(rows: int, width: int, shuffled: bool, seed: int = 7) -> QuestionTally:
    generator = random.Random(seed)
    made = QuestionTally("q", "choice", [f"o{i}" for i in range(width)])
    lines = list(range(1, rows + 1))
    if shuffled:  # as merged shards hand them in
        generator.shuffle(lines)
    for index, line in enumerate(lines):
        probs = [generator.random() ** 3 for _ in range(width)]
        if index % 7 == 0:
            probs[0] = 0.0  # an exact zero: the log floor
        total = sum(probs)
        made.add(line, generator.randrange(width), held_out(f"r{line}", 0.3, 0), [p / total for p in probs])
    return made


def as_lists(made: QuestionTally) -> dict:
    """The served method's block made the way it was before ScoreRows: a list of floats a row."""
    k = len(made.keys)
    order = sorted(range(len(made)), key=made.lines.__getitem__)
    scores = [metrics.log_scores(list(made.probs[i * k : (i + 1) * k])) for i in order]
    picks = [metrics.argmax_first(s) for s in scores]
    gold = [made.gold[i] for i in order]
    held = [position for position, i in enumerate(order) if made.held[i]]
    train = [position for position, i in enumerate(order) if not made.held[i]]
    return _method_block(METHOD, scores, picks, gold, k, train, held)


def test_score_rows_read_and_take_as_the_lists_would():
    rows = [[float(r * 3 + c) for c in range(3)] for r in range(5)]
    view = metrics.ScoreRows(array("d", [x for row in rows for x in row]), 3)
    assert len(view) == 5 and list(view) == rows and view[4] == rows[4]
    taken = view.take([4, 1]).take([1])
    assert list(taken) == [rows[1]] and taken.matrix().tolist() == [rows[1]]


def test_the_metrics_over_the_flat_rows_equal_those_over_lists_exactly():
    for rows, width, shuffled in [(40, 2, False), (300, 4, True), (2_000, 5, False)]:
        made = tally(rows, width, shuffled)
        assert made.report(None)["methods"][METHOD] == as_lists(made), (rows, width, shuffled)


def test_the_report_of_many_rows_needs_a_fraction_of_a_list_a_row():
    made = tally(20_000, 4, shuffled=False)
    tracemalloc.start()
    try:
        made.report(None)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a list of 4 floats a row alone is 184 bytes; the whole report peaked at about 480 bytes a
    # row that way, about 200 on the flat rows (the numpy NLL's temporaries are most of it)
    assert peak / 20_000 < 300, f"{peak / 20_000:.0f} bytes a row"
