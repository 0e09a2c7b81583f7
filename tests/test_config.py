"""Project configuration (pyproject.toml [tool.pcdlint], .pcdlint.toml, --config), per-file
ignores with JSON Pointer fragments, and --show-config; linted with the real Qwen2.5 tokenizer."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli

# Under Qwen2.5: `category` has a first-token collision (PCD001, error) and multi-token options
# (PCD002); `risk` has ELEVATED = E + LEV + ATED, and 'E' also begins EXTREME (PCD002, warning),
# and no collision.
SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"enum": ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]},
        "risk": {"enum": ["LOW", "ELEVATED", "EXTREME"]},
    },
}


@pytest.fixture
def project(tmp_path, monkeypatch, qwen):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "a.json").write_text(json.dumps(SCHEMA, indent=2), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str):
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.stdout, result.stderr


def codes(stdout: str) -> list[tuple[str, str]]:
    """(code, field) of each finding line: a field's header line, then its findings indented."""
    found, field = [], None
    for line in stdout.splitlines():
        header = re.match(r"^\S+:\d+:\d+: (\S+)(?: \[[^\]]+\])? PCD\d{3} ", line)
        if header:
            field = header.group(1)
            continue
        finding = re.match(r"^    \d+:\d+ (PCD\d{3}) \w+: ", line)
        if finding:
            found.append((finding.group(1), field))
    return found


def test_defaults_without_config(project):
    code, out, _ = check("schemas")
    assert code == 1
    assert ("PCD001", "category") in codes(out) and ("PCD002", "risk") in codes(out)


def test_pyproject_table_found_walking_up(project, monkeypatch):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.pcdlint]\nignore = ["PCD001"]\nfail-on = "warning"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(project / "schemas")
    code, out, _ = check("a.json")
    assert "PCD001" not in out
    assert ("PCD002", "risk") in codes(out)
    assert code == 1  # warnings fail because of fail-on = "warning"


def test_pcdlint_toml_and_cli_flags_override(project):
    (project / ".pcdlint.toml").write_text('select = ["PCD002"]\nfail-on = "warning"\n', encoding="utf-8")
    code, out, _ = check("schemas")
    assert {c for c, _ in codes(out)} == {"PCD002"} and code == 1
    code, out, _ = check("schemas", "--fail-on", "error")  # PCD002 is a warning
    assert {c for c, _ in codes(out)} == {"PCD002"} and code == 0
    code, out, _ = check("schemas", "--select", "PCD001")
    assert {c for c, _ in codes(out)} == {"PCD001"}


def test_extend_select_and_rule_options_and_severity(project):
    (project / ".pcdlint.toml").write_text(
        'select = ["PCD001"]\nextend-select = ["too-many-options"]\n'
        '[rules.too-many-options]\nmax-options = 2\nseverity = "info"\n',
        encoding="utf-8",
    )
    code, out, _ = check("schemas", "--show-info")
    lines = [line for line in out.splitlines() if line.startswith("    ") and "PCD003" in line]
    assert len(lines) == 2 and all(" PCD003 info: " in line for line in lines)
    assert "exceed the limit of 2" in lines[0]
    assert {c for c, _ in codes(out)} == {"PCD001", "PCD003"}
    assert code == 1  # PCD001 is still an error


def test_explicit_config_file(project):
    (project / "ci.toml").write_text('ignore = ["PCD002", "PCD003"]\n', encoding="utf-8")
    (project / ".pcdlint.toml").write_text('select = ["PCD002"]\n', encoding="utf-8")
    _, out, _ = check("--config", "ci.toml", "schemas")
    assert {c for c, _ in codes(out)} == {"PCD001"}


def test_per_file_ignores_glob_and_pointer_fragment(project):
    (project / ".pcdlint.toml").write_text(
        '[per-file-ignores]\n"schemas/*.json#/properties/risk" = ["multi-token-option"]\n'
        '"a.json" = ["PCD001"]\n',
        encoding="utf-8",
    )
    _, out, _ = check("schemas")
    found = codes(out)
    assert ("PCD002", "risk") not in found  # narrowed to the risk node by the fragment
    assert ("PCD002", "category") in found  # the same rule elsewhere in the file still reports
    assert ("PCD001", "category") not in found  # a bare file name matches in any directory
    assert "suppressed" in out.splitlines()[-2]  # the summary; the next step comes last


def test_per_file_ignores_relative_to_config_dir(project, monkeypatch):
    (project / ".pcdlint.toml").write_text(
        '[per-file-ignores]\n"schemas/a.json#/properties/category" = ["PCD"]\n', encoding="utf-8"
    )
    monkeypatch.chdir(project / "schemas")
    _, out, _ = check("a.json")
    assert [f for _, f in codes(out)] == ["risk"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('selct = ["PCD001"]\n', "selct: unknown key"),
        ('[rules.no-such-rule]\nseverity = "error"\n', "rules.no-such-rule: unknown rule"),
        ("[rules.PCD003]\nmax-optons = 5\n", "rules.PCD003.max-optons: unknown option of PCD003"),
        ('[rules.PCD003]\nmax-options = "5"\n', "rules.PCD003.max-options: must be int"),
        ('[rules.PCD001]\nseverity = "fatal"\n', "rules.PCD001.severity: must be one of"),
        ('ignore = ["PCD7"]\n', "ignore: 'PCD7' matches no rule"),
        ('fail-on = "never"\n', "fail-on: must be one of"),
        ('format = "xml"\n', "format: unknown format 'xml'"),
        ('[per-file-ignores]\n"a.json#properties" = ["PCD001"]\n', "must be a JSON Pointer"),
        ("select = [\n", "invalid TOML"),
    ],
)
def test_bad_config_exits_2_naming_key_and_file(project, text, message):
    (project / ".pcdlint.toml").write_text(text, encoding="utf-8")
    code, out, err = check("schemas")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert str(project / ".pcdlint.toml") in err and message in err, err


def test_bad_pyproject_key_is_named_with_its_table(project):
    (project / "pyproject.toml").write_text("[tool.pcdlint]\nfailon = 'error'\n", encoding="utf-8")
    code, _, err = check("schemas")
    assert code == 2 and "pyproject.toml: tool.pcdlint.failon: unknown key" in err


def test_missing_config_file(project):
    code, _, err = check("--config", "nope.toml", "schemas")
    assert code == 2 and "--config nope.toml: no such file" in err


def test_show_config_names_each_source(project):
    (project / "pyproject.toml").write_text(
        '[tool.pcdlint]\nignore = ["PCD004"]\n[tool.pcdlint.rules.too-many-options]\nmax-options = 128\n',
        encoding="utf-8",
    )
    code, out, _ = check("--show-config", "--fail-on", "warning")
    assert code == 0
    pyproject = str(project / "pyproject.toml")
    assert f"# config file: {pyproject} [tool.pcdlint]" in out
    assert f'ignore = ["PCD004"]  # {pyproject}' in out
    assert 'fail-on = "warning"  # --fail-on' in out
    from auditor.linter.registry import default_codes

    assert f"select = {json.dumps(default_codes())}  # default" in out
    assert "PCD011" not in json.dumps(default_codes())
    rules = out[out.index("[rules.PCD003]") :]
    assert f"max-options = 128  # {pyproject}" in rules
    assert 'severity = "error"  # default' in rules
