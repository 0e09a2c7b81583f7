"""The engine table (auditor/pcd/engines/engines.toml): every row cites its source, the PCD rows
are the profiles, and a malformed row fails loudly."""

from __future__ import annotations

import re

import pytest

from auditor.pcd.engines import ENGINES, HARNESS_ENGINES
from auditor.pcd.engines.table import (
    ENGINE_ROWS,
    EngineTableError,
    decision_engines,
    default_decision_row,
    load_rows,
    table_text,
)

DECISION_NAMES = {
    "sglang-decisions",
    "sglang-systemone",
    "sglang-intern-decision",
    "llamacpp-openjev",
    "llamacpp-lev",
    "llm2jev",
    "jev",
    "openai-decisions",
    "fireworks",
    "perplexity",
}


def test_pcd_rows_are_the_profiles():
    assert {r.name for r in ENGINE_ROWS.values() if r.kind == "pcd"} == set(ENGINES)
    assert all(r.scores_option_names for r in ENGINE_ROWS.values() if r.kind == "pcd")
    # an evaluation harness's scorer, applied to its configs' label sets, never named
    assert {r.name for r in ENGINE_ROWS.values() if r.kind == "harness"} == set(HARNESS_ENGINES)


def test_every_decision_engine_has_a_row_that_scores_labels():
    assert {r.name for r in decision_engines()} >= DECISION_NAMES
    assert all(not r.scores_option_names for r in decision_engines())


def test_every_row_cites_an_upstream_file_or_docs_section():
    for row in ENGINE_ROWS.values():
        # a file path (with a function, line or docstring named) or a docs page with its section
        assert re.search(r"\w+\.(py|cpp|mdx|rs|toml)\b|docs\.\w+|section '", row.source), row.name
        assert "(" in row.source or "section" in row.source, row.name


def test_limits_read_from_the_sources():
    limits = {r.name: (r.options, r.levels, r.questions) for r in decision_engines()}
    assert (limits["sglang-decisions"][0].low, limits["sglang-decisions"][0].high) == (2, 26)
    assert limits["sglang-systemone"][0].high == 255 and limits["sglang-systemone"][1].high == 10
    assert limits["llamacpp-openjev"][0].high == 52
    assert limits["llm2jev"][1].high == 255 and limits["llm2jev"][2].high == 64
    assert limits["jev"][1].high == 10
    assert limits["fireworks"][0].high == 208
    assert limits["perplexity"][2].high == 128
    assert ENGINE_ROWS["fireworks"].levels_documented is False
    # generally available: 1-400 questions, 2-10 levels (docs as quoted 2026-11-12)
    assert limits["openai-decisions"][1].high == 10 and limits["openai-decisions"][2].high == 400
    assert limits["gemini-decisions"][2].high == 1000 and limits["cloudflare-clef"][2].high == 64
    default = default_decision_row()
    assert (default.options.low, default.options.high, default.levels.high) == (1, 255, 10)


def test_malformed_rows_fail_loudly():
    good = table_text()
    with pytest.raises(EngineTableError, match="lacks"):
        load_rows(
            good
            + '\n[[engine]]\nname = "x"\nkind = "decision"\nscores = "labels"\nsummary = "s"\nsource = "f.py (g)"\n'
        )
    with pytest.raises(EngineTableError, match="listed twice"):
        first = good.index("\n[[engine]]\n")
        load_rows(good + good[first : good.index("\n[[engine]]\n", first + 1)])
    with pytest.raises(EngineTableError, match="options"):
        load_rows(good.replace("options = [2, 26]", "options = [2, 26, 3]"))


def test_readme_table_is_the_generated_one():
    import importlib.util

    from auditor.pcd.engines.table import TABLE_BEGIN, TABLE_END, markdown_table
    from support import REPO

    readme = (REPO / "docs" / "decision-requests.md").read_text(encoding="utf-8")
    shown = readme[readme.index(TABLE_BEGIN) : readme.index(TABLE_END) + len(TABLE_END)]
    assert shown == markdown_table(), "the docs' engine table is stale: run python scripts/engine_table.py"
    spec = importlib.util.spec_from_file_location("engine_table", REPO / "scripts" / "engine_table.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.updated(readme) == readme
    stale = readme.replace("| 2–26 |", "| 2–27 |", 1)
    assert stale != readme and script.updated(stale) == readme
    for row in decision_engines():  # every decision engine is a line of it
        assert f"| `{row.name}`" in shown
