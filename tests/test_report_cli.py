"""CLI surface of the reports: --format sarif/html/github, auto github format, colour, extra outputs."""

from __future__ import annotations

import json

from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.lint.engine import lint
from auditor.reporting.github import escape_data, escape_property
from auditor.reporting.text import render as render_text

RISK = {"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "MAYBE"]}}}


def invoke(args, env=None):
    return CliRunner().invoke(cli, args, env=env or {}, catch_exceptions=False)


def test_several_outputs_from_one_run(write_schema, tmp_path, qwen):
    path = write_schema(RISK)
    sarif, page, report = tmp_path / "r.sarif", tmp_path / "r.html", tmp_path / "r.json"
    result = invoke(["check", str(path), "--output-sarif", str(sarif), "--output-html", str(page),
                     "--output-json", str(report)], env={"GITHUB_ACTIONS": ""})
    assert result.exit_code == 1
    findings = lint([str(path)], [qwen]).findings
    lines = result.output.splitlines()
    assert sum(line.startswith(f"{path}:") for line in lines) == len(findings)  # text on stdout
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
    path = write_schema(RISK)
    findings = lint([str(path)], [qwen]).findings
    auto = invoke(["check", str(path)], env={"GITHUB_ACTIONS": "true"})
    lines = [line for line in auto.output.splitlines() if line.startswith("::")]
    assert len(lines) == len(findings)
    for line, finding in zip(lines, findings):
        level = {"error": "error", "warning": "warning", "info": "notice"}[finding.severity]
        assert line.startswith(f"::{level} file={path},line={finding.line},col={finding.column},")
        assert f"title={finding.code} {finding.name}" in line
    explicit = invoke(["check", str(path), "--format", "text"], env={"GITHUB_ACTIONS": "true"})
    assert not explicit.output.startswith("::")


def test_github_escaping():
    assert escape_data("50%\nnext") == "50%25%0Anext"
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


def test_colour_only_when_asked(write_schema, qwen):
    run = lint([str(write_schema(RISK))], [qwen])
    assert "\033[1;33mwarning\033[0m" in render_text(run, color=True)
    assert "\033[" not in render_text(run)


def test_cli_colours_text_on_a_terminal_only(write_schema, monkeypatch):
    path = str(write_schema(RISK))
    monkeypatch.setattr("auditor.cli.main.color_stdout", lambda: True)
    coloured = invoke(["check", path, "--format", "text"])
    assert "\033[1;33mwarning\033[0m" in coloured.output
    plain = invoke(["check", path, "--format", "json"])
    assert "\033[" not in plain.output


def test_unknown_format_is_a_usage_error(write_schema):
    result = CliRunner().invoke(cli, ["check", str(write_schema(RISK)), "--format", "pdf"])
    assert result.exit_code == 2 and "sarif" in result.output
