"""The decision-design rules on the real requests of tests/data/decision-requests/ (SOURCES.md):
every finding on the copied files is judged in judgements.toml and every judged one still
fires; a rule of the default set keeps at least 9 of 10 of its judged findings right; and each
rule's page quotes the counts the judgements give."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from auditor.linter import load_rules

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("real_requests", ROOT / "scripts" / "real_requests.py")
real_requests = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
sys.modules["real_requests"] = real_requests  # (its dataclasses look their module up)
spec.loader.exec_module(real_requests)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def judged() -> dict:
    return real_requests.judgements()


@pytest.fixture(scope="module")
def found(judged) -> dict:
    return real_requests.current(real_requests.request_files(), judged["engines"])


def test_every_finding_on_the_copied_files_is_judged(found, judged):
    unjudged = [f"{k}: {m}" for k, m in found.items() if k not in judged["findings"]]
    assert not unjudged, "judge these in judgements.toml:\n" + "\n".join(unjudged)


def test_every_judged_finding_on_a_copied_file_still_fires(found, judged):
    copied = {p.name for p in real_requests.request_files()}
    gone = [k for k in judged["findings"] if k.file in copied and k not in found]
    assert not gone, gone


def test_every_judged_file_is_listed_in_the_sources(judged):
    import tomllib

    listed = {f["file"] for f in tomllib.loads((real_requests.DATA / "sources.toml").read_text())["file"]}
    code_files = (real_requests.DATA / "SOURCES.md").read_text().split("## Code files", 1)[1]
    listed_code = {row.split("|")[1].strip() for row in code_files.splitlines() if row.startswith("| ")}
    named = (
        {k.file for k in judged["findings"]} | {k.file for k in judged["expected"]} | set(judged["engines"])
    )
    assert named <= listed | listed_code, named - listed - listed_code
    copied = {f for f in listed if (real_requests.DATA / f).is_file()}
    assert len(listed) >= 40 and copied, (len(listed), len(copied))


def test_default_rules_keep_nine_of_ten_findings_right(judged):
    rules = load_rules()
    for code, row in real_requests.counts(judged).items():
        if rules[code].default and row["findings"]:
            assert row["right"] >= 0.9 * row["findings"], (code, row)


MEASURED = re.compile(r"(\d+)\s+of\s+(\d+)\s+findings\s+right")


def test_each_rule_page_quotes_its_judged_counts(judged):
    for code, row in real_requests.counts(judged).items():
        section = load_rules()[code].sections.get("Measured precision", "")
        quoted = MEASURED.search(section)
        assert quoted, f"{code}: its docstring's 'Measured precision' section quotes no counts"
        assert (int(quoted.group(1)), int(quoted.group(2))) == (row["right"], row["findings"]), (code, row)
