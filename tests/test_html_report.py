"""The HTML report: view-model, templates from the installed package, escaping, size."""

from __future__ import annotations

import json
import re

import pytest
from markupsafe import escape

from auditor.linter.engine import LintOptions, lint
from auditor.pcd.scoring import SiteTokens
from auditor.reporting.html import environment, render, report_view
from support import CORPUS, NO_CORPUS, corpus_files

PRESETS = CORPUS / "pcd-presets"


def preset(name: str):
    path = PRESETS / f"{name}.json"
    if not path.exists():
        pytest.skip(NO_CORPUS)
    return path


def test_templates_load_from_the_installed_package():
    env = environment()
    assert {"page.html.j2", "file.html.j2", "finding.html.j2"} <= set(env.list_templates())
    assert env.autoescape is True


def test_self_contained_page(qwen):
    page = render(lint([str(preset("support_triage"))], [qwen]))
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", page)  # no external assets
    assert '<link rel="stylesheet"' not in page and "<style>" in page


def test_pcd001_card_groups_buckets_and_collapses_big_enum(qwen):
    run = lint([str(preset("high_cardinality_255"))], [qwen])
    view = report_view(run)
    [file] = view["files"]
    [finding] = [f for f in run.findings if f.code == "PCD001"]
    [card] = [c for c in file["cards"] if c["pointer"] == finding.site_pointer]
    site = next(s for s in run.files[0].model.sites if s.pointer == finding.site_pointer)
    tokens = SiteTokens(site, qwen)
    expected = [(len(idx), tokens.options[idx[0]].text) for idx in tokens.buckets.values() if len(idx) > 1]
    colliding = [g for g in card["groups"] if g["colliding"]]
    assert [(g["size"], g["winner"]) for g in colliding] == expected
    assert card["big"]
    shown = []
    for group in card["groups"]:  # a few drawn with pieces, the rest listed, nothing lost
        assert len(group["options"]) + group["rest_count"] == group["size"]
        shown += [o["text"] for o in group["options"]]
        shown += group["rest"].split(", ") if group["rest"] else []
    assert all(g["rest_count"] > 0 for g in colliding)
    assert sorted(shown) == sorted(tokens.options[i].text for i in range(len(site.options)))
    page = render(run)
    assert page.count('<details class="rest">') >= len(colliding)
    for group in card["groups"]:
        assert str(escape(group["rest"])) in page


def test_scored_token_and_multi_token_split_shown(qwen):
    run = lint([str(preset("support_triage"))], [qwen])
    view = report_view(run)
    opts = [o for f in view["files"] for c in f["cards"] for g in c["groups"] for o in g["options"]]
    multi = [o for o in opts if o["multi"]]
    assert multi
    for option in multi:
        assert [p["scored"] for p in option["pieces"]] == [True] + [False] * (len(option["pieces"]) - 1)
        assert option["prefix"] + "".join(p["text"] for p in option["pieces"]) == option["text"]


@pytest.mark.slow  # a whole-corpus run
def test_corpus_report_under_5_mb(qwen, smollm2, tmp_path):
    files = corpus_files()
    if not files:
        pytest.skip(NO_CORPUS)
    run = lint([str(p) for p in files], [qwen, smollm2])
    page = render(run)
    size = len(page.encode("utf-8"))
    (tmp_path / "corpus.html").write_text(page, encoding="utf-8")
    print(f"corpus HTML report ({len(run.findings)} findings, 2 tokenizers): {size} bytes")
    assert size < 5 * 1024 * 1024
    assert page.count("<article") == len(
        {(f.path, f.site_pointer, f.tokenizer) for f in run.findings if f.field}
    )


def test_generic_rendering_of_new_rules_cost_and_verification(qwen, write_schema):
    path = write_schema({"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}})
    run = lint([str(path)], [qwen], LintOptions(select=["PCD002"]))
    [finding] = run.findings
    finding.verification = {"verdict": "confirmed <wrong>", "agreement": 0.5}
    finding.data["future_key"] = "from a rule the template never heard of"
    run.cost = {"extra_tokens": 42, "passes": 2}  # the cost model another issue adds
    page = render(run)
    assert "confirmed &lt;wrong&gt;" in page and 'data-verification="present"' in page
    assert "future_key" in page and "from a rule the template never heard of" in page
    assert 'id="cost"' in page and "extra_tokens" in page
    del run.cost
    page = render(run)
    assert 'id="cost"' not in page


def test_verification_placeholder_reserved(qwen, write_schema):
    path = write_schema({"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}})
    page = render(lint([str(path)], [qwen]))
    assert 'data-verification="pending"' in page


def test_hostile_text_is_escaped(qwen, write_schema):
    options = ["<script>alert(1)</script>", '"><img src=x onerror=alert(2)>', "javascript:alert(3)"]
    path = write_schema({"type": "object", "properties": {"<b>x</b>": {"enum": options}}})
    page = render(lint([str(path)], [qwen]))
    assert "<script>alert" not in page and "<img" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # only the report's own filter script


def test_reviewer_layout_on_bundled_fixtures(qwen):
    """Verdict on top, files worst first, cards by severity (errors open, warnings collapsed,
    info behind the toggle), SVG bucket bars with the winner, fixes before → after with a JSON
    snippet, the cost model as a table and chart, "verification not run" once."""
    from support import FIXTURES

    run = lint([str(FIXTURES / "schemas")], [qwen], LintOptions(select=["ALL"]))
    view = report_view(run)
    wrong = {(f.path, f.site_pointer) for f in run.findings if f.severity == "error" and f.field}
    sites = sum(len(r.model.sites) for r in run.files)
    assert (
        view["verdict"]
        == f"{len(wrong)} of {sites} fields will be decided wrongly by first-token scoring with qwen2.5."
    )
    ranks = ["info", "warning", "error"]
    assert [ranks.index(f["severity"]) for f in view["files"]] == sorted(
        (ranks.index(f["severity"]) for f in view["files"]), reverse=True
    )
    for file in view["files"]:
        order = [ranks.index(c["severity"]) for c in file["cards"]]
        assert order == sorted(order, reverse=True)
        assert all(c["severity"] != "info" for c in file["cards"])
        assert all(c["severity"] == "info" for c in file["info_cards"])
        assert all(c["open"] == (c["severity"] == "error") for c in file["cards"])
    card = next(c for f in view["files"] for c in f["cards"] if c["field"] == "decision")
    [bar] = card["bars"]
    assert (bar["token"], bar["size"], bar["winner"]) == ("approve", 2, "approve_now")
    fix = card["suggestions"][0]
    assert fix["rows"][0] == {
        "before": "approve_now",
        "after": fix["json"] and json.loads(fix["json"])["enum"][0],
    }
    page = render(run)
    assert page.count("verification not run") == 1
    assert 'data-pcdlint="bucket"' in page and 'data-pcdlint="cost"' in page
    assert '<table class="cost-table">' in page and "naive passes (longest options)" in page
    assert "&#34;enum&#34;" in page or "&quot;enum&quot;" in page  # the snippet, escaped
    assert '<details class="info-toggle">' in page
    first_card = page[page.index("<article") :]
    assert first_card.startswith('<article class="card sev-error"')
    assert '<details class="card-body" open>' in first_card[:400]
