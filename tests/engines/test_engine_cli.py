"""`--engine` on the command line and in config; the engine named per finding; suggest."""

from __future__ import annotations

import json

from click.testing import CliRunner

from auditor.cli.main import cli

DELIVER = ["DELIVER", "DELIVER_WITH_WARNING", "QUARANTINE", "BLOCK_SENDER", "REPORT_TO_SECURITY"]
CODES22 = [f"X{i:02d}" for i in range(22)]


def _invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _schema(write_schema, **properties):
    return str(
        write_schema({"type": "object", "properties": {k: {"enum": v} for k, v in properties.items()}})
    )


def test_unknown_engine_is_one_line_exit_2(write_schema):
    result = _invoke("check", "--engine", "vllm", _schema(write_schema, action=DELIVER))
    assert result.exit_code == 2
    assert "unknown engine 'vllm'" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_json_names_the_engine_per_finding(write_schema):
    path = _schema(write_schema, action=DELIVER)
    data = json.loads(
        _invoke("check", "-f", "json", "--engine", "gather", "--engine", "rlcd-mlx", path).output
    )
    assert [e["name"] for e in data["engines"]] == ["gather", "rlcd-mlx"]
    by_code = {}
    for finding in data["findings"]:
        assert "engine" in finding
        by_code.setdefault(finding["code"], set()).add(finding["engine"])
    assert by_code["PCD001"] == {"gather", "rlcd-mlx"}
    assert by_code["PCD013"] == {"rlcd-mlx"}  # gather loses it to a tie, PCD001's business
    assert all(
        engines == {None} for code, engines in by_code.items() if code not in ("PCD001", "PCD004", "PCD013")
    )
    fingerprints = [f["fingerprint"] for f in data["findings"]]
    assert len(fingerprints) == len(set(fingerprints))


def test_gather_fingerprint_is_the_one_from_before_engines(write_schema):
    import hashlib

    path = _schema(write_schema, action=DELIVER)
    data = json.loads(_invoke("check", "-f", "json", "--select", "PCD001", path).output)
    (finding,) = data["findings"]
    key = "\0".join(["PCD001", finding["path"], finding["site"], "qwen2.5"])
    assert finding["fingerprint"] == hashlib.sha256(key.encode()).hexdigest()[:32]


def test_sarif_and_html_name_the_engine(write_schema, tmp_path):
    path = _schema(write_schema, action=DELIVER)
    sarif = json.loads(_invoke("check", "-f", "sarif", "--engine", "rlcd-mlx", path).output)
    results = sarif["runs"][0]["results"]
    assert {r["properties"]["engine"] for r in results if r["ruleId"] == "PCD013"} == {"rlcd-mlx"}
    assert sarif["runs"][0]["properties"]["engines"] == ["rlcd-mlx"]
    html = _invoke("check", "-f", "html", "--engine", "rlcd-mlx", path).output
    assert "engine rlcd-mlx" in html and "prefix match picks" in html


def test_config_engine_key_and_show_config(write_schema, tmp_path, monkeypatch):
    path = _schema(write_schema, code=CODES22)
    config = tmp_path / ".pcdlint.toml"
    config.write_text('engine = ["openjev"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    shown = _invoke("check", "--show-config").output
    assert 'engine = ["openjev"]' in shown and str(config) in shown
    data = json.loads(_invoke("check", "-f", "json", path).output)
    assert {f["code"] for f in data["findings"] if f["engine"] == "openjev"} == {"PCD004", "PCD013"}
    # the command line replaces the configured engines
    data = json.loads(_invoke("check", "-f", "json", "--engine", "gather", path).output)
    assert {f["engine"] for f in data["findings"]} <= {"gather", None}
    config.write_text('engine = ["sglang"]\n', encoding="utf-8")
    result = _invoke("check", path)
    assert result.exit_code == 2 and "unknown engine 'sglang'" in result.output


def test_letters_rule_option_in_config(write_schema, tmp_path, monkeypatch):
    path = _schema(write_schema, code=CODES22)
    (tmp_path / ".pcdlint.toml").write_text(
        '[rules.PCD004]\nletters = "ABCDEFGHIJKLMNOP"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    data = json.loads(_invoke("check", "-f", "json", "--select", "PCD004", path).output)
    (finding,) = data["findings"]
    assert "22 options but only 16 letters A–P" in finding["message"]


def _letter_slots(entries):
    return [s for e in entries for s in e["suggestions"] if s["strategy"] == "letter-slots"]


def test_suggest_openjev_never_proposes_more_than_16_letters(write_schema):
    path = _schema(
        write_schema,
        code=CODES22,
        category=[
            f"CAT_{i:03d}_{w}"
            for i, w in enumerate(
                [
                    "Live_Animals",
                    "Meat",
                    "Fish",
                    "Dairy",
                    "Plants",
                    "Vegetables",
                    "Fruit",
                    "Coffee",
                    "Cereals",
                    "Milling",
                    "Seeds",
                    "Lac",
                    "Plaiting",
                ]
            )
        ],
    )
    gather = json.loads(_invoke("suggest", "-f", "json", path).output)
    assert max(len(s["options"]) for s in _letter_slots(gather)) == 22  # A–V under gather
    openjev = json.loads(_invoke("suggest", "-f", "json", "--engine", "openjev", path).output)
    assert all(e["engine"] == "openjev" for e in openjev)
    for suggestion in (s for e in openjev for s in e["suggestions"]):
        assert suggestion["engine"] == "openjev"
        if suggestion["strategy"] == "letter-slots":
            assert len(suggestion["options"]) <= 16
            assert set(suggestion["options"]) <= set("ABCDEFGHIJKLMNOP")
    assert not any(e["field"] == "code" and e["suggestions"] for e in openjev)  # refused: >16
    assert [len(s["options"]) for s in _letter_slots(openjev)] == [13]  # the 13-option field
    result = _invoke("suggest", "--engine", "nope", path)
    assert result.exit_code == 2 and "unknown engine" in result.output


def test_python_api_takes_engine():
    import pytest

    import auditor
    from auditor.errors import UsageError

    schema = {"type": "object", "properties": {"action": {"enum": DELIVER}}}
    result = auditor.lint(schema, engine="rlcd-mlx", select=["PCD013"])
    assert [f.engine for f in result.findings] == ["rlcd-mlx"]
    assert not auditor.lint(schema, select=["PCD013"]).findings  # gather: a tie, not PCD013
    with pytest.raises(UsageError, match="engine=: unknown engine 'vllm'"):
        auditor.lint(schema, engine="vllm")
