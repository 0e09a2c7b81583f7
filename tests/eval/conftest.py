"""Shared eval fixtures: the SmolLM2 model (loaded once per session, the same object the decoder
tests get from load_model's per-process cache) and one scored subset of the fixture set."""

from __future__ import annotations

import pytest

from support import REPO

SCHEMA = REPO / "fixtures" / "eval" / "support_triage_eval.json"
DATA = REPO / "fixtures" / "eval" / "support_triage.jsonl"
# Every other row of the first 16: two rows per tier (both buckets, winners and losers).
SUBSET = slice(0, 16, 2)


@pytest.fixture(scope="session")
def eval_model(smollm2_model):
    return smollm2_model


@pytest.fixture(scope="session")
def fixture_fields():
    from auditor.eval import load_fields

    return load_fields(SCHEMA)


@pytest.fixture(scope="session")
def fixture_rows(fixture_fields):
    from auditor.eval import load_rows

    return load_rows(DATA, fixture_fields)


@pytest.fixture(scope="session")
def subset_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("eval-cache")


@pytest.fixture(scope="session")
def subset_report(eval_model, fixture_fields, fixture_rows, subset_cache):
    """The fixture subset with every method and the order perturbation, scored on SmolLM2."""
    from auditor.eval import EvalOptions, InProcessBackend, run_eval

    options = EvalOptions(perturb=("order",), cache_dir=subset_cache, progress=False)
    return run_eval(
        fixture_fields,
        fixture_rows[SUBSET],
        InProcessBackend(eval_model),
        options,
        schema_path=str(SCHEMA),
        data_path=str(DATA),
    )
