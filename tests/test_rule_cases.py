"""Each rule's named pass/fail cases (fixtures/rules/PCDxxx.yaml), run with real tokenizers.

A case gives a schema (any supported format), optional rule options, an optional engine
profile (`engine: rlcd-mlx`; default gather), the tokenizers to run (default: qwen2.5 and
smollm2) and the findings of that rule it expects: a list for every tokenizer, or a map
tokenizer → list. Each finding is compared by pointer, a message
substring and a subset of its data.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from auditor.linter.registry import load_rules
from support import FIXTURES, RULE_TOKENIZERS, get_tokenizer, run_rule, subset


def _cases():
    for path in sorted((FIXTURES / "rules").glob("PCD*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in spec["cases"]:
            for tokenizer in case.get("tokenizers", RULE_TOKENIZERS):
                engine = f"-{case['engine']}" if case.get("engine") else ""
                yield pytest.param(
                    spec["rule"], case, tokenizer, id=f"{spec['rule']}-{case['id']}{engine}-{tokenizer}"
                )


@pytest.mark.parametrize(("code", "case", "tokenizer_name"), list(_cases()))
def test_rule_case(code, case, tokenizer_name, tmp_path: Path):
    rule = load_rules()[code]
    tokenizer = get_tokenizer(tokenizer_name)
    expect = case["expect"]
    if isinstance(expect, dict):
        expect = expect[tokenizer_name]
    findings = run_rule(
        rule,
        case["schema"],
        tokenizer,
        tmp_path,
        case.get("options"),
        case.get("suffix", ".json"),
        case.get("engine"),
    )
    got = [(f.pointer, f.message) for f in findings]
    assert len(findings) == len(expect), f"expected {len(expect)} findings, got {got}"
    for want, finding in zip(expect, findings):
        if "pointer" in want:
            assert finding.pointer == want["pointer"], got
        if "message" in want:
            assert want["message"] in finding.message, finding.message
        if "severity" in want:
            assert finding.severity == want["severity"]
        if case.get("engine"):
            assert finding.engine == case["engine"] or not rule.per_engine, finding.engine
        if "message_lacks" in want:
            assert want["message_lacks"] not in finding.message, finding.message
        if "data" in want:
            assert subset(want["data"], finding.data), finding.data
