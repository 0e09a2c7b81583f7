"""A rule that raises becomes one PCD999 finding at its field; the other rules still report."""

from __future__ import annotations

import dataclasses

import pytest

from auditor.linter.engine import LintOptions, lint_model
from auditor.linter.registry import load_rules
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse


def _broken(subject, ctx):
    raise ZeroDivisionError("boom")
    yield  # pragma: no cover - a generator that raises on first next()


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        '{"properties": {"level": {"enum": ["LOW", "MEDIUM", "HIGH"]},'
        ' "cat": {"enum": ["billing", "billing_refunds", "other"]}}}',
        encoding="utf-8",
    )
    return analyse(load_document(path, str(path)))


def test_raising_rule_becomes_pcd999_and_the_run_goes_on(model, qwen, monkeypatch):
    rules = load_rules()
    broken = dataclasses.replace(rules["PCD002"], check=_broken)
    chosen = [rules["PCD001"], broken]
    monkeypatch.delenv("PCDLINT_DEBUG", raising=False)
    result = lint_model(model, [qwen], chosen, LintOptions(select=["PCD001", "PCD002"]))
    internal = [f for f in result.findings if f.code == "PCD999"]
    assert len(internal) == len(model.sites)  # one per field the broken rule was run on
    assert all("ZeroDivisionError: boom" in f.message and f.severity == "error" for f in internal)
    assert {f.field for f in internal} == {"level", "cat"}
    assert any(f.code == "PCD001" for f in result.findings)  # the healthy rule still reported


def test_debug_reraises(model, qwen, monkeypatch):
    rules = load_rules()
    broken = dataclasses.replace(rules["PCD002"], check=_broken)
    monkeypatch.setenv("PCDLINT_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        lint_model(model, [qwen], [broken], LintOptions(select=["PCD002"]))
