"""Property-based fuzzing of `pcdlint check` (issue 13); the property is in tests/fuzzing.py.

CI runs a few hundred examples (PCDLINT_FUZZ_EXAMPLES overrides); benchmarks/fuzz_long.py runs
at least 10,000. The real qwen2.5 tokenizer is loaded once and handed to every run.
"""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from fuzzing import check_property, documents
from hypothesis import HealthCheck, given, settings

EXAMPLES = int(os.environ.get("PCDLINT_FUZZ_EXAMPLES", "200"))


@pytest.fixture
def runner(qwen, monkeypatch, tmp_path):
    import auditor.tokenizers.loader

    monkeypatch.setattr(auditor.tokenizers.loader, "load_tokenizer", lambda *args, **kwargs: qwen)
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return CliRunner()


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@pytest.mark.slow  # hypothesis: many whole CLI runs
@given(document=documents())
def test_check_never_crashes_and_points_into_the_document(runner, document):
    from auditor.cli.main import cli

    check_property(document, runner, cli)
