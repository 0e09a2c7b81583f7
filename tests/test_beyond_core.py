"""Fix suggestions, the cost model, the tokenizer matrix and CSV output, with real tokenizers."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.linter.engine import LintOptions, lint
from auditor.pcd.cost import file_cost
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from support import CORPUS, NO_CORPUS, get_tokenizer

PRESETS = CORPUS / "pcd-presets"
needs_corpus = pytest.mark.skipif(not PRESETS.is_dir(), reason=NO_CORPUS)


def _invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------- suggestions


def _set_pointer(document, pointer: str, value) -> None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    node = document
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    node[int(last) if isinstance(node, list) else last] = value


def _options_pointer(site_pointer: str, document) -> str:
    """A site's pointer names its options container (choices/enum) or its parent."""
    node = document
    for part in site_pointer.split("/")[1:]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    for key in ("choices", "enum"):
        if isinstance(node, dict) and key in node:
            return f"{site_pointer}/{key}"
    return site_pointer


@needs_corpus
def test_suggest_support_triage_prints_suggestions_that_relint_clean(tmp_path):
    source = PRESETS / "support_triage.json"
    before = source.read_bytes()
    text = _invoke("suggest", str(source))
    assert text.exit_code == 0
    assert "re-lints clean" in text.output
    result = _invoke("suggest", "--format", "json", str(source))
    entries = json.loads(result.output)
    assert entries and all(e["suggestions"] for e in entries), "every field gets a verified fix"
    assert source.read_bytes() == before, "input files are never modified"
    tokenizer = get_tokenizer("qwen2.5")
    checked = 0
    for entry in entries:
        for suggestion in entry["suggestions"]:
            document = json.loads(before)
            _set_pointer(document, _options_pointer(entry["pointer"], document), suggestion["options"])
            renamed = tmp_path / f"renamed_{checked}.json"
            renamed.write_text(json.dumps(document, indent=2), encoding="utf-8")
            run = lint([str(renamed)], [tokenizer], LintOptions())
            at_field = [
                f
                for f in run.findings
                if f.site_pointer == entry["pointer"]
                and f.severity in ("warning", "error")
                and f.tokenizer == "qwen2.5"
            ]
            assert not at_field, (suggestion["strategy"], [f.message for f in at_field])
            assert suggestion["options"] != [m["from"] for m in suggestion["mapping"]]
            checked += 1
    assert checked >= len(entries)


def test_suggestions_are_in_json_data(write_schema):
    path = write_schema({"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}})
    result = _invoke("check", "--format", "json", str(path))
    findings = json.loads(result.output)["findings"]
    pcd002 = next(f for f in findings if f["code"] == "PCD002")
    strategies = {s["strategy"]: s for s in pcd002["data"]["suggestions"]}
    assert strategies["lowercase"]["options"] == ["low", "medium", "high"]
    assert all(s["verified"] and s["tokenizer"] == "qwen2.5" for s in strategies.values())


def test_no_suggestion_when_nothing_relints_clean(write_schema):
    # 300 options: too many for any renaming (PCD003) and for letters.
    options = [f"CODE_{i:03d}_ITEM" for i in range(300)]
    path = write_schema({"type": "object", "properties": {"code": {"enum": options}}})
    result = _invoke("suggest", "--format", "json", str(path))
    entries = json.loads(result.output)
    assert entries and entries[0]["suggestions"] == []
    assert result.exit_code == 1  # a flagged field without a verified fix
    assert "no renaming tried re-lints clean" in _invoke("suggest", str(path)).output


def test_suggest_bad_input_is_one_line_exit_2(tmp_path):
    result = CliRunner().invoke(cli, ["suggest", str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------- cost model


def _model(write_schema, properties):
    path = write_schema({"type": "object", "properties": properties})
    return analyse(load_document(path, path.name))


def test_cost_fallback_steps_follow_each_engine(write_schema, qwen):
    from auditor.pcd.engines import ENGINES

    model = _model(
        write_schema, {"tier": {"enum": ["TIER_1", "TIER_2", "DIRECTOR"]}, "risk": {"enum": ["low", "high"]}}
    )
    cost = file_cost(model.sites, qwen, engines=list(ENGINES.values()))
    assert qwen.encode("TIER_1")[0] == qwen.encode("TIER_2")[0]  # the tier field collides
    # derive every engine's steps independently from the tokenizer
    tier_sequences = [qwen.encode(o + '"') for o in ("TIER_1", "TIER_2", "DIRECTOR")]
    quoted = [qwen.encode(f'"{o}"') for o in ("TIER_1", "TIER_2", "DIRECTOR", "low", "high")]
    expected = {
        "gather": 0,  # wrong instead of slow
        "rlcd-mlx": min(4, max(len(s) for s in tier_sequences)),
        "openjev": 0,
        "constrained": max(len(s) for s in quoted) - 1,
        "full-sequence": 1,
        # the named full-sequence variants: each one teacher-forced batched pass, as full-sequence
        **dict.fromkeys(("sum", "sum-close", "mean", "byte-norm"), 1),
    }
    got = {name: e["pcd"]["fallback_steps"] for name, e in cost["engines"].items()}
    assert got == expected
    assert cost["engines"]["rlcd-mlx"]["pcd"]["worst_field"] == "tier"
    assert cost["pcd"] == {
        "prefill": 1,
        "suffix_pass": 1,
        "fallback_steps": 0,
        "worst_field": None,
        "passes": 2,
        "engine": "gather",
    }
    longest = json.dumps(
        {
            "tier": "DIRECTOR"
            if len(qwen.encode('  "tier": "DIRECTOR"')) >= len(qwen.encode('  "tier": "TIER_1"'))
            else "TIER_1",
            "risk": "high"
            if len(qwen.encode('  "risk": "high"')) >= len(qwen.encode('  "risk": "low"'))
            else "low",
        },
        indent=2,
    )
    assert cost["naive"]["passes_longest"] == len(qwen.encode(longest))
    assert cost["naive"]["passes_mean"] <= cost["naive"]["passes_longest"]


def test_cost_without_collisions_is_two_passes(write_schema, smollm2):
    model = _model(write_schema, {"risk": {"enum": ["low", "high"]}})
    cost = file_cost(model.sites, smollm2)
    assert cost["pcd"]["passes"] == 2 and cost["pcd"]["worst_field"] is None


@pytest.mark.slow  # a whole-corpus run
def test_cost_in_json_and_text_per_tokenizer(write_schema):
    path = write_schema({"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM"]}}})
    data = json.loads(_invoke("check", "-f", "json", "-t", "qwen2.5", "-t", "smollm2", str(path)).output)
    assert set(data["summary"]["cost"]) == {"qwen2.5", "smollm2"}
    assert data["summary"]["cost"]["qwen2.5"]["files"][str(path)]["fields"] == 1
    text = _invoke("check", "-t", "qwen2.5", "--cost", str(path)).output
    assert "cost [qwen2.5]" in text and "PCD 2 passes under gather" in text
    assert "cost [" not in _invoke("check", "-t", "qwen2.5", str(path)).output  # only with --cost
    data = json.loads(
        _invoke("check", "-f", "json", "--engine", "gather", "--engine", "rlcd-mlx", str(path)).output
    )
    run = data["summary"]["cost"]["qwen2.5"]["run"]
    assert set(run["engines"]) == {"gather", "rlcd-mlx"} and run["engine"] == "gather"


# --------------------------------------------------------------------------- matrix and CSV


def test_matrix_shows_a_field_clean_for_one_tokenizer_and_broken_for_another(write_schema):
    path = write_schema(
        {
            "type": "object",
            "properties": {"marker": {"enum": ["a<file_sep>b", "done"]}, "risk": {"enum": ["low", "high"]}},
        }
    )
    out = _invoke("check", "--select", "PCD009", "-t", "qwen2.5", "-t", "smollm2", str(path)).output
    table = out[out.index("tokenizer matrix") :].splitlines()
    row = next(line for line in table if line.startswith("marker"))
    assert row.split()[1:] == ["ok", "PCD009"]
    assert not any(line.startswith("risk") for line in table)
    assert "tokenizer matrix" not in _invoke("check", str(path)).output


def test_csv_one_row_per_finding(write_schema):
    path = write_schema({"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}})
    out = _invoke("check", "-f", "csv", "-t", "qwen2.5", "-t", "smollm2", str(path)).output
    rows = list(csv.DictReader(io.StringIO(out)))
    expected = json.loads(_invoke("check", "-f", "json", "-t", "qwen2.5", "-t", "smollm2", str(path)).output)
    assert len(rows) == len(expected["findings"]) > 0
    assert {r["tokenizer"] for r in rows} == {"qwen2.5", "smollm2"}
    assert rows[0]["code"] == expected["findings"][0]["code"]


# --------------------------------------------------------------------------- whole corpus


@pytest.mark.slow  # a whole-corpus run
@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
def test_whole_corpus_json_has_no_traceback():
    dirs = [
        str(CORPUS / d) for d in ("pcd-presets", "pcd-presets-other", "json-schema") if (CORPUS / d).is_dir()
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "auditor", "check", "--format", "json", *dirs],
        capture_output=True,
        text=True,
        env={**os.environ, "PCDLINT_DEBUG": "1"},
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["summary"]["cost"]["qwen2.5"]["run"]["files"] > 0
