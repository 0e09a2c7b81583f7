"""Every rule module registers one valid rule, has a case file, and its doc examples behave."""

from __future__ import annotations

import json
import pkgutil

import pytest

import auditor.rules
from auditor.linter.registry import REQUIRED_SECTIONS, RuleDefinitionError, load_rules, rule
from support import FIXTURES, run_rule

RULES = {code: r for code, r in load_rules().items() if not r.internal}


def test_every_module_registers_exactly_one_rule():
    modules = [m.name for m in pkgutil.iter_modules(auditor.rules.__path__, "auditor.rules.")]
    by_module = {}
    for r in load_rules().values():  # the internal rule (PCD999) is a module of rules/ too
        by_module.setdefault(r.module, []).append(r.code)
    assert sorted(by_module) == sorted(modules)
    assert all(len(codes) == 1 for codes in by_module.values()), by_module


def test_exactly_one_internal_rule():
    assert len([r for r in load_rules().values() if r.internal]) == 1


def test_file_name_is_rule_name_in_snake_case():
    for r in load_rules().values():
        assert r.module.rsplit(".", 1)[1] == r.name.replace("-", "_")


def test_codes_and_names_unique():
    assert len({r.name for r in RULES.values()}) == len(RULES)


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_case_file_with_pass_and_fail(code):
    import yaml

    spec = yaml.safe_load((FIXTURES / "rules" / f"{code}.yaml").read_text(encoding="utf-8"))
    assert spec["rule"] == code
    expects = [c["expect"] for c in spec["cases"]]
    flat = [e for x in expects for e in (x.values() if isinstance(x, dict) else [x])]
    assert any(flat) and any(not e for e in flat), "need a failing and a passing case"


@pytest.mark.parametrize("code", sorted(RULES))
def test_doc_has_headings_and_examples(code):
    r = RULES[code]
    for heading in REQUIRED_SECTIONS:
        assert heading in r.sections
    assert r.examples("Example") and r.examples("Use instead")


@pytest.mark.parametrize("code", sorted(RULES))
def test_doc_examples_behave(code, qwen, tmp_path):
    r = RULES[code]
    for example in r.examples("Example"):
        json.loads(example)
        assert run_rule(r, example, qwen, tmp_path, r.example_options, engine=r.example_engine or None), (
            "bad example must trigger"
        )
    for example in r.examples("Use instead"):
        assert not run_rule(r, example, qwen, tmp_path, r.example_options, engine=r.example_engine or None), (
            "good example must not trigger"
        )


def test_broken_metadata_fails_at_definition():
    with pytest.raises(RuleDefinitionError):
        rule(code="PCD1", name="x", severity="error")(lambda site, ctx: iter(()))
    with pytest.raises(RuleDefinitionError):
        rule(code="PCD999", name="Not_Kebab", severity="error")(lambda site, ctx: iter(()))
    with pytest.raises(RuleDefinitionError):
        rule(code="PCD999", name="ok-name", severity="fatal")(lambda site, ctx: iter(()))
    # a module docstring without the required headings
    with pytest.raises(RuleDefinitionError):
        rule(code="PCD998", name="no-docs", severity="error")(lambda site, ctx: iter(()))
