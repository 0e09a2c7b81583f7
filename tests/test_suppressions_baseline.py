"""`x-pcdlint-ignore` in schemas, PCD900 unused-suppression through the CLI, and baselines
(--write-baseline / --baseline), with the real Qwen2.5 tokenizer."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import text_findings

# PCD001 under Qwen2.5 (its PCD002 only restates the collision: folded into it)
COLLIDING = ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]
MULTI = ["LOW", "ELEVATED", "EXTREME"]  # PCD002 warning only ('E' scores ELEVATED, begins EXTREME)


@pytest.fixture
def workdir(tmp_path, monkeypatch, qwen):
    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")  # no config from above tmp
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path, schema) -> str:
    path.write_text(json.dumps(schema, indent=2), encoding="utf-8")
    return path.name


def check(*args: str):
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.stdout, result.stderr


def found(stdout: str) -> list[tuple[str, str]]:
    return text_findings(stdout)


def test_ignore_on_a_node_silences_its_subtree_only(workdir):
    name = write(
        workdir / "s.json",
        {
            "type": "object",
            "properties": {
                "category": {"x-pcdlint-ignore": ["PCD001"], "enum": COLLIDING},
                "other": {"enum": COLLIDING},
            },
        },
    )
    code, out, _ = check(name)
    got = found(out)
    assert ("PCD001", "category") not in got
    assert ("PCD002", "category") in got  # only the named rule is silenced
    assert ("PCD001", "other") in got  # a sibling is not in the subtree
    assert out.splitlines()[-2].endswith("; 1 suppressed")  # the summary; the next step is last
    assert code == 1


def test_ignore_by_name_at_a_definition_used_through_a_ref(workdir):
    name = write(
        workdir / "s.json",
        {
            "type": "object",
            "properties": {"risk": {"$ref": "#/$defs/risk"}, "level": {"enum": MULTI}},
            "$defs": {"risk": {"x-pcdlint-ignore": "multi-token-option", "enum": MULTI}},
        },
    )
    _, out, _ = check(name)
    got = found(out)
    assert ("PCD002", "risk") not in got
    assert ("PCD002", "level") in got
    assert not any(code == "PCD900" for code, _ in got)


def test_unused_and_unknown_suppressions_are_reported(workdir):
    name = write(
        workdir / "s.json",
        {
            "type": "object",
            "properties": {
                "risk": {"x-pcdlint-ignore": ["PCD002", "first-token-collision", "PCD0999"], "enum": MULTI}
            },
        },
    )
    code, out, _ = check(name)
    lines = [line for line in out.splitlines() if line.startswith("    ") and " PCD900 " in line]
    assert len(lines) == 2, out
    assert "'first-token-collision' at /properties/risk is unused" in lines[0]
    assert "'PCD0999' at /properties/risk names no rule" in lines[1]
    assert all(" PCD900 warning: " in line for line in lines)
    assert "PCD002" not in out.replace("'PCD002'", "")  # the used entry silences PCD002
    assert code == 0  # PCD900 is a warning; fail-on defaults to error
    assert check(name, "--fail-on", "warning")[0] == 1


def test_pcd900_judges_rules_left_out_by_select(workdir):
    name = write(
        workdir / "s.json",
        {
            "type": "object",
            "properties": {
                "risk": {"x-pcdlint-ignore": ["PCD002"], "enum": MULTI},
                "level": {"x-pcdlint-ignore": ["PCD002"], "enum": ["low", "high"]},
            },
        },
    )
    _, out, _ = check(name, "--select", "PCD900")
    assert [field for code, field in found(out)] == [""], out  # one PCD900, no PCD002 lines
    assert "/properties/level is unused" in out
    _, out, _ = check(name, "--select", "PCD002")
    assert "PCD900" not in out and "PCD002" not in out


def test_pcd900_can_itself_be_suppressed(workdir):
    name = write(
        workdir / "s.json",
        {
            "type": "object",
            "x-pcdlint-ignore": ["PCD900"],
            "properties": {"level": {"x-pcdlint-ignore": ["PCD002"], "enum": ["low", "high"]}},
        },
    )
    _, out, _ = check(name)
    assert "PCD900" not in out


def test_baseline_reports_only_new_findings(workdir):
    name = write(
        workdir / "s.json",
        {"type": "object", "properties": {"category": {"enum": COLLIDING}, "risk": {"enum": MULTI}}},
    )
    code, out, err = check(name, "--write-baseline", "baseline.json")
    assert code == 0
    recorded = json.loads((workdir / "baseline.json").read_text(encoding="utf-8"))
    assert recorded["version"] == 1
    assert {(e["code"], e["pointer"], e["tokenizer"]) for e in recorded["findings"]} == {
        ("PCD001", "/properties/category", "qwen2.5"),
        ("PCD002", "/properties/risk", "qwen2.5"),
    }
    assert f"wrote {len(recorded['findings'])} finding(s)" in err

    code, out, err = check(name, "--baseline", "baseline.json")
    assert code == 0 and found(out) == []
    assert "2 known finding(s) hidden; 0 baseline entries no longer occur" in err

    # risk fixed, a new colliding field added, keys reordered (lines move): only the new field
    # is reported, and the risk entry no longer occurs.
    write(
        workdir / "s.json",
        {
            "type": "object",
            "properties": {
                "region": {"enum": ["CAT_000_North", "CAT_001_South", "CAT_200_East"]},
                "risk": {"enum": ["low", "medium", "high"]},
                "category": {"enum": COLLIDING},
            },
        },
    )
    code, out, err = check(name, "--baseline", "baseline.json")
    assert code == 1
    assert {field for _, field in found(out)} == {"region"}
    assert "1 known finding(s) hidden; 1 baseline entry no longer occur" in err


def test_baseline_stale_count_only_covers_linted_files(workdir):
    first = write(workdir / "a.json", {"type": "object", "properties": {"risk": {"enum": MULTI}}})
    second = write(workdir / "b.json", {"type": "object", "properties": {"risk": {"enum": MULTI}}})
    assert check(first, second, "--write-baseline", "baseline.json")[0] == 0
    _, _, err = check(first, "--baseline", "baseline.json")
    assert "1 known finding(s) hidden; 0 baseline entries no longer occur" in err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "--baseline baseline.json: no such file"),
        ("{not json", "--baseline baseline.json:1:2: invalid JSON"),
        ('{"version": 7, "findings": []}', "not a pcdlint baseline"),
    ],
)
def test_bad_baseline_exits_2(workdir, content, message):
    name = write(workdir / "s.json", {"type": "object", "properties": {"risk": {"enum": MULTI}}})
    if content is not None:
        (workdir / "baseline.json").write_text(content, encoding="utf-8")
    code, out, err = check(name, "--baseline", "baseline.json")
    assert code == 2 and out == "" and message in err


def test_write_baseline_refuses_to_overwrite_an_input(workdir):
    name = write(workdir / "s.json", {"type": "object", "properties": {"risk": {"enum": MULTI}}})
    before = (workdir / name).read_text(encoding="utf-8")
    code, _, err = check(name, "--write-baseline", name)
    assert code == 2 and "refusing to overwrite an input file" in err
    assert (workdir / name).read_text(encoding="utf-8") == before
