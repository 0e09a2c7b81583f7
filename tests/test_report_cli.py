"""CLI surface of the reports: --format sarif/html/github, auto github format, colour, extra outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.linter.engine import lint
from auditor.reporting import render
from auditor.reporting.github import escape_data, escape_property
from auditor.reporting.text import render as render_text
from support import text_findings

RISK = {"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "MAYBE"]}}}


def invoke(args, env=None):
    return CliRunner().invoke(cli, args, env=env or {}, catch_exceptions=False)


def test_several_outputs_from_one_run(write_schema, tmp_path, qwen):
    path = write_schema(RISK)
    sarif, page, report = tmp_path / "r.sarif", tmp_path / "r.html", tmp_path / "r.json"
    result = invoke(
        [
            "check",
            str(path),
            "--output-sarif",
            str(sarif),
            "--output-html",
            str(page),
            "--output-json",
            str(report),
        ],
        env={"GITHUB_ACTIONS": ""},
    )
    assert result.exit_code == 1
    findings = lint([str(path)], [qwen]).findings
    lines = result.output.splitlines()
    shown = [f for f in findings if f.severity != "info"]
    assert len(text_findings(result.output)) == len(shown)  # text on stdout, info hidden
    assert sum(line.startswith(f"{path}:") for line in lines) == len(
        {(f.site_pointer, f.tokenizer) for f in shown}
    )  # one header line per field
    assert "\033[" not in result.output  # not a terminal: no colour
    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert len(log["runs"][0]["results"]) == len(findings)
    assert json.loads(report.read_text(encoding="utf-8"))["summary"]["findings"] == len(findings)
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_format_sarif_and_html_to_output(write_schema, tmp_path):
    path = write_schema(RISK)
    target = tmp_path / "report.html"
    assert invoke(["check", str(path), "--format", "html", "--output", str(target)]).exit_code == 1
    assert "<article" in target.read_text(encoding="utf-8")
    result = invoke(["check", str(path), "--format", "sarif"])
    assert json.loads(result.output)["version"] == "2.1.0"


def test_extra_output_refuses_to_overwrite_input(write_schema):
    path = write_schema(RISK)
    before = path.read_text(encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path), "--output-sarif", str(path)])
    assert result.exit_code == 2 and "refusing to overwrite an input file" in result.output
    assert path.read_text(encoding="utf-8") == before


def test_github_format_chosen_automatically_in_actions(write_schema, qwen):
    path = write_schema(
        {
            "type": "object",
            "properties": {**RISK["properties"], "code": {"enum": ["CAT_001", "CAT_002", "CAT_103"]}},
        }
    )
    findings = [f for f in lint([str(path)], [qwen]).findings if f.severity != "info"]
    auto = invoke(["check", str(path)], env={"GITHUB_ACTIONS": "true"})
    lines = [line for line in auto.output.splitlines() if line.startswith("::")]
    fields = {}
    for finding in findings:
        fields.setdefault(finding.field, []).append(finding)
    assert len(lines) == len(fields) == 2  # one annotation per field
    rank = ["info", "warning", "error"]
    for line, (field, found) in zip(
        lines, sorted(fields.items(), key=lambda kv: -max(rank.index(f.severity) for f in kv[1]))
    ):
        worst = max(found, key=lambda f: rank.index(f.severity))
        level = {"error": "error", "warning": "warning", "info": "notice"}[worst.severity]
        assert line.startswith(f"::{level} file={path},line={worst.line},col={worst.column},")
        assert f"title={field} [qwen2.5] " in line
        for finding in found:  # every finding of the field, one per line (%0A)
            assert f"{finding.code} {finding.name} ({finding.severity}" in line
    explicit = invoke(["check", str(path), "--format", "text"], env={"GITHUB_ACTIONS": "true"})
    assert not explicit.output.startswith("::")


def test_github_escaping():
    assert escape_data("50%\nnext") == "50%25%0Anext"
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


def test_colour_only_when_asked(write_schema, qwen):
    run = lint([str(write_schema(RISK))], [qwen])
    assert "\033[1;31merror\033[0m" in render_text(run, color=True)
    assert "\033[" not in render_text(run)


def test_cli_colours_text_on_a_terminal_only(write_schema, monkeypatch):
    path = str(write_schema(RISK))
    monkeypatch.setattr("auditor.cli.main.color_stdout", lambda: True)
    coloured = invoke(["check", path, "--format", "text"])
    assert "\033[1;31merror\033[0m" in coloured.output
    plain = invoke(["check", path, "--format", "json"])
    assert "\033[" not in plain.output


def test_unknown_format_is_a_usage_error(write_schema):
    result = CliRunner().invoke(cli, ["check", str(write_schema(RISK)), "--format", "pdf"])
    assert result.exit_code == 2 and "sarif" in result.output


@pytest.mark.slow  # eight whole processes
def test_json_and_sarif_are_written_as_the_rendered_text_encoded(tmp_path, qwen):
    """`--format json/sarif` write the formatter's bytes (auditor.reporting.render_output):
    byte for byte the rendered text as the output writer encodes text, on stdout and to a file;
    on the bundled fixtures (orjson's bytes) and with an undecodable file name (orjson refuses
    the lone surrogate: the text is made and encoded, `\\udcff` escaped)."""
    fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "schemas"
    odd = os.fsencode(tmp_path) + b"/odd\xff.json"
    try:
        shutil.copyfile(fixtures / "risk_triage.json", odd)
    except OSError:
        odd = None  # a file system that refuses undecodable names: the fixtures alone
    for target in [str(fixtures)] + ([os.fsdecode(odd)] if odd else []):
        run = lint([target], [qwen])
        for name in ("json", "sarif"):
            expected = render(name, run).encode("utf-8", "backslashreplace")
            out = tmp_path / f"out.{name}"
            result = subprocess.run(
                [sys.executable, "-m", "auditor", "check", target, "-f", name, "-o", str(out)],
                capture_output=True,
                cwd=os.getcwd(),
            )
            assert result.returncode == 1, result.stderr
            stdout = subprocess.run(
                [sys.executable, "-m", "auditor", "check", target, "-f", name],
                capture_output=True,
                cwd=os.getcwd(),
            ).stdout
            if name == "sarif":  # (the invocation's time stamps and command line differ)
                stdout, out_bytes = (json.loads(x)["runs"][0]["results"] for x in (stdout, out.read_bytes()))
                assert stdout == out_bytes == json.loads(expected)["runs"][0]["results"]
                continue
            assert out.read_bytes() == expected
            assert stdout == expected
            if target != str(fixtures):  # the name shown escaped, as text output shows it
                assert b'"path": "' + os.fsencode(tmp_path) + b'/odd\\udcff.json"' in expected
