"""The CLI contract: exit codes 0/1/2, one-line errors, formats, selection, rules and explain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from support import CORPUS, FIXTURES, run_cli

BAD = {"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]},
                                         "code": {"enum": ["CAT_001", "CAT_002", "CAT_103"]}}}
FINDING_LINE = re.compile(r"^\S+:\d+:\d+: (PCD\d{3}) ")
CLEAN = {"type": "object", "properties": {"sentiment": {"enum": ["positive", "negative"]}}}


def pcdlint(*args, cwd=None):
    """In-process: a subprocess proves nothing more here (test_python_m_auditor_is_a_real_process
    runs one)."""
    return run_cli(*args, cwd=cwd)


def test_python_m_auditor_is_a_real_process(write_schema):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "auditor", "check", str(write_schema(BAD))],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == EXIT_FINDINGS and " PCD001 " in done.stdout


def assert_no_traceback(result):
    assert "Traceback" not in result.stderr + result.stdout


def test_findings_exit_1_with_text_lines(write_schema):
    path = write_schema(BAD)
    result = pcdlint("check", path)
    assert result.returncode == EXIT_FINDINGS
    lines = result.stdout.splitlines()
    collision = next(line for line in lines if " PCD001 " in line)
    line_no = next(i for i, row in enumerate(path.read_text().splitlines(), 1) if '"CAT_001"' in row)
    assert collision.startswith(f"{path}:{line_no}:")
    assert " PCD001 error [qwen2.5] code: 3 options collapse into 2 first-token buckets after prefix 'CAT_'" in collision
    assert any(" PCD002 warning [qwen2.5] risk: " in line and "M + EDIUM" in line for line in lines)
    summary = next(line for line in lines if line.endswith("tokenizers: qwen2.5"))
    assert summary.startswith(f"{sum(bool(FINDING_LINE.match(line)) for line in lines)} findings")


def test_clean_exit_0(write_schema):
    result = pcdlint("check", write_schema(CLEAN))
    assert result.returncode == EXIT_CLEAN, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("0 findings"), result.stdout


def test_fail_on_threshold(write_schema):
    only_warning = {"properties": {"risk": {"enum": ["LOW", "MEDIUM", "HIGH"]}}}
    path = write_schema(only_warning)
    assert pcdlint("check", path).returncode == EXIT_CLEAN  # a warning is below --fail-on error
    assert pcdlint("check", "--fail-on", "warning", path).returncode == EXIT_FINDINGS


def test_select_and_ignore_by_code_prefix_and_name(write_schema):
    path = write_schema(BAD)
    def codes(r):
        return {m.group(1) for m in map(FINDING_LINE.match, r.stdout.splitlines()) if m}
    assert codes(pcdlint("check", "--select", "PCD002", path)) == {"PCD002"}
    assert codes(pcdlint("check", "--ignore", "first-token-collision", path)) == {"PCD002"}
    # longest match wins: ignore the family, select one member back
    assert codes(pcdlint("check", "--ignore", "PCD00", "--select", "PCD001", path)) == {"PCD001"}
    bad = pcdlint("check", "--select", "PCD777", path)
    assert bad.returncode == EXIT_USAGE and "matches no rule" in bad.stderr


def test_malformed_json_is_one_line_exit_2(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "enum": ["a", "b",]\n}\n', encoding="utf-8")
    result = pcdlint("check", path)
    assert result.returncode == EXIT_USAGE
    assert result.stderr.strip() == f"{path}:2:21: invalid JSON: Expecting value"
    assert_no_traceback(result)


def test_malformed_yaml_is_one_line_exit_2(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("schema:\n  risk: [a, b\n", encoding="utf-8")
    result = pcdlint("check", path)
    assert result.returncode == EXIT_USAGE
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(f"{path}:") and "invalid YAML" in result.stderr


def test_one_bad_file_among_many_others_still_linted(tmp_path, write_schema):
    good = write_schema(BAD, "good.json")
    missing = tmp_path / "missing.json"
    result = pcdlint("check", "--format", "json", missing, good)
    assert result.returncode == EXIT_USAGE
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == [str(good)]
    assert report["summary"]["findings"] >= 2
    assert result.stderr.strip() == f"{missing}: cannot read file (No such file or directory)"


def test_unknown_tokenizer_exit_2(write_schema):
    result = pcdlint("check", "-t", "gpt-9", write_schema(CLEAN))
    assert result.returncode == EXIT_USAGE
    assert result.stderr.startswith("pcdlint: error: unknown tokenizer 'gpt-9'")
    assert len(result.stderr.strip().splitlines()) == 1


def test_hub_cache_miss_exit_2(write_schema, tmp_path):
    env_cache = {"HF_HUB_CACHE": str(tmp_path / "hf")}
    result = subprocess.run([sys.executable, "-m", "auditor", "check", "-t", "Qwen/Qwen2.5-1.5B-Instruct",
                             str(write_schema(CLEAN))], capture_output=True, text=True,
                            env={**os.environ, **env_cache, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == EXIT_USAGE
    assert "not in the local Hugging Face cache" in result.stderr
    assert_no_traceback(result)


def test_output_file_never_overwrites_input(write_schema):
    path = write_schema(BAD)
    before = path.read_bytes()
    result = pcdlint("check", "--output", path, path)
    assert result.returncode == EXIT_USAGE and "refusing to overwrite an input" in result.stderr
    assert path.read_bytes() == before


def test_output_file_and_unknown_format(write_schema, tmp_path):
    path = write_schema(BAD)
    out = tmp_path / "out" / "report.json"
    assert pcdlint("check", "-f", "json", "-o", out, path).returncode == EXIT_FINDINGS
    assert json.loads(out.read_text())["summary"]["findings"] >= 2
    bad = pcdlint("check", "-f", "xml", path)
    assert bad.returncode == EXIT_USAGE and "unknown format 'xml'" in bad.stderr


def test_directories_walk_json_and_yaml():
    result = pcdlint("check", "-f", "json", FIXTURES / "schemas")
    files = sorted(Path(f["path"]).name for f in json.loads(result.stdout)["files"])
    assert files == sorted(p.name for p in (FIXTURES / "schemas").iterdir()
                           if p.suffix in (".json", ".yaml", ".yml"))


def test_multiple_tokenizers_each_finding_names_its_own(write_schema):
    result = pcdlint("check", "-f", "json", "-t", "qwen2.5", "-t", "smollm2", write_schema(BAD))
    report = json.loads(result.stdout)
    assert [t["id"] for t in report["tokenizers"]] == ["qwen2.5", "smollm2"]
    assert {f["tokenizer"] for f in report["findings"]} == {"qwen2.5", "smollm2"}


def test_rules_and_explain():
    listing = pcdlint("rules").stdout
    assert "PCD001  first-token-collision" in listing
    by_code = pcdlint("explain", "PCD001")
    by_name = pcdlint("explain", "first-token-collision")
    assert by_code.stdout == by_name.stdout
    assert by_code.stdout.startswith("# PCD001 first-token-collision")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in by_code.stdout
    unknown = pcdlint("explain", "PCD998")
    assert unknown.returncode == EXIT_USAGE and "unknown rule" in unknown.stderr
    assert pcdlint("explain", "internal-error").stdout.startswith("# PCD999 internal-error")


@pytest.mark.skipif(not (CORPUS / "pcd-presets").is_dir(), reason="../shared/corpus not present")
def test_acceptance_high_cardinality_255():
    result = pcdlint("check", "-f", "json", CORPUS / "pcd-presets" / "high_cardinality_255.json")
    assert result.returncode == EXIT_FINDINGS
    report = json.loads(result.stdout)
    collisions = [f for f in report["findings"] if f["code"] == "PCD001"]
    assert [f["field"] for f in collisions] == ["customs_category"]
    buckets = collisions[0]["data"]["buckets"]
    assert [b["token"] for b in buckets] == ["0", "1", "2"]
    assert [b["size"] for b in buckets] == [100, 100, 55]
    # a plain gather + argmax returns the lowest index of each bucket
    assert [b["tie_winner"][:7] for b in buckets] == ["CAT_000", "CAT_100", "CAT_200"]
    assert all(b["tie_winner"] == b["options"][0] for b in buckets)
    assert any(f["code"] == "PCD002" and f["field"] == "customs_category" for f in report["findings"])
