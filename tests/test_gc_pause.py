"""The garbage collector around a lint run (auditor.linter.engine.gc_paused): paused while the
run builds its arrays; afterwards the run's objects sit in the oldest generation (no young
collection walks them), nothing stays frozen, cycles are still collected, and objects the
process froze itself stay frozen. Real Qwen2.5 tokenizer, a bundled fixture."""

from __future__ import annotations

import gc
import weakref

from auditor.linter.engine import LintOptions, lint
from support import FIXTURES

SCHEMA = str(FIXTURES / "schemas" / "risk_triage.json")


class Node:
    pass


def _in_oldest_generation(obj) -> bool:
    return any(o is obj for o in gc.get_objects(generation=2))


def test_the_run_goes_to_the_oldest_generation_and_nothing_stays_frozen(qwen):
    assert gc.isenabled() and gc.get_freeze_count() == 0
    run = lint([SCHEMA], [qwen], LintOptions(jobs=1))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert run.findings and _in_oldest_generation(run)
    assert _in_oldest_generation(run.files[0].findings[0])


def test_a_cycle_dropped_before_the_run_is_still_collected(qwen):
    node = Node()
    node.self = node
    alive = weakref.ref(node)
    del node
    lint([SCHEMA], [qwen], LintOptions(jobs=1))
    gc.collect()
    assert alive() is None


def _frozen(obj) -> bool:
    """A frozen object is in no generation (gc.get_objects leaves the permanent one out)."""
    return gc.is_tracked(obj) and not any(o is obj for o in gc.get_objects())


def test_objects_the_process_froze_stay_frozen(qwen):
    # (not the freeze count before and after: a frozen object the run frees by reference
    # counting leaves it, e.g. an lru_cache entry evicted in a worker whose earlier tests filled
    # the cache; that count once fell by two in CI)
    sentinel = [Node()]
    gc.freeze()
    try:
        assert gc.get_freeze_count() > 0 and _frozen(sentinel)
        assert lint([SCHEMA], [qwen], LintOptions(jobs=1)).findings
        assert _frozen(sentinel) and gc.get_freeze_count() > 0  # not unfrozen by the run
    finally:
        gc.unfreeze()
