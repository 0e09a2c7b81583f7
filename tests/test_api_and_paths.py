"""Issue 36's Python API and path rows: `auditor.lint()` never raises on what a caller hands it
(text longer than a path, bytes that are not UTF-8, a string naming nothing), the one path
resolver (auditor.paths) and the run-wide `letters` option reaching every rule's suggestions."""

from __future__ import annotations

import json

import pytest

import auditor
from auditor.errors import UsageError
from auditor.paths import resolve_path, resolve_text, shorten
from support import run_cli

BAD = '{"type": "object", "properties": {"category": {"enum": ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]}}}\n'


def test_lint_reports_bytes_that_are_not_utf8_in_errors():
    result = auditor.lint(b"\xff\xfe")
    assert result.errors == ["<bytes>: not UTF-8 text (byte 0)"] and not result.ok


def test_lint_reads_bytes_as_text():
    result = auditor.lint(BAD.encode())
    assert not result.errors and "PCD001" in result.by_code()


def test_lint_one_line_yaml_longer_than_a_path_is_linted():
    text = "enum: [" + ", ".join(f"CAT_{i:03d}_x" for i in range(400)) + "]"
    assert len(text) > 4096
    result = auditor.lint(text)
    assert not result.errors and result.findings


@pytest.mark.parametrize("text", ["a" * 5000, "b" * 300, "x\0y"])
def test_lint_string_naming_nothing_is_an_error_not_an_exception(text):
    result = auditor.lint(text)
    assert len(result.errors) == 1 and "no such file, and not JSON or YAML text" in result.errors[0]
    assert len(result.errors[0]) < 200  # the value is cut, not echoed whole


def test_lint_dict_that_is_not_json():
    result = auditor.lint({"enum": [object()]})
    assert result.errors and result.errors[0].startswith("<dict>: not JSON data")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("~nosuchuser36/x", "~nosuchuser36/x: no home directory known for user 'nosuchuser36'"),
        ("a" * 5000, "path too long (5,000 bytes; the limit is 4,095)"),
        ("d/" + "b" * 256, "file name too long (a component of 256 bytes; the limit is 255)"),
        ("x\0y", "a path cannot hold a NUL byte"),
    ],
)
def test_resolver_turns_unnameable_paths_into_one_line(given, message):
    with pytest.raises(UsageError) as raised:
        resolve_path(given, "--config")
    text = str(raised.value)
    assert text.startswith("--config ") and message in text and "\n" not in text and len(text) < 250


def test_resolver_expands_home_and_keeps_names(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_path("~/x.json") == tmp_path / "x.json"
    assert resolve_text("./org/") == "./org/" and resolve_text("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"
    assert shorten("z" * 10) == "z" * 10 and shorten("z" * 1000).endswith("(1,000 characters)")


def test_letters_set_for_one_rule_reach_every_rules_suggestions(tmp_path):
    """`[rules.PCD004] letters` is the run's slot alphabet: PCD001 says which letters are
    viable and the field's suggestions use them, not the default A–C."""
    (tmp_path / "bad.json").write_text(BAD, encoding="utf-8")
    (tmp_path / ".pcdlint.toml").write_text('[rules.PCD004]\nletters = "WXYZ"\n', encoding="utf-8")
    done = run_cli("check", "bad.json", "-f", "json", "--select", "ALL", cwd=tmp_path)
    findings = json.loads(done.stdout)["findings"]
    by_code = {f["code"]: f for f in findings}
    assert "a single-letter remap (W–Y) is viable" in by_code["PCD001"]["message"]
    # (the field's PCD002 only restates its collision: folded into PCD001, issue 32)
    assert [f["code"] for f in by_code["PCD001"]["data"]["folded"]] == ["PCD002"]
    slots = [s for s in by_code["PCD001"]["data"]["suggestions"] if s["strategy"] == "letter-slots"]
    assert [m["to"] for m in slots[0]["mapping"]] == ["W", "X", "Y"]
    (tmp_path / ".pcdlint.toml").write_text('[rules.PCD004]\nletters = "AB"\n', encoding="utf-8")
    done = run_cli("check", "bad.json", "-f", "json", "--select", "ALL", cwd=tmp_path)
    findings = json.loads(done.stdout)["findings"]
    assert any(f["code"] == "PCD004" and "only 2 letters A–B" in f["message"] for f in findings)
    assert not any(
        s["strategy"] == "letter-slots" for f in findings for s in f["data"].get("suggestions", [])
    )
