"""Decision-request findings downstream: text, JSON v1, SARIF regions, GitHub annotations, HTML,
baseline, and suppressions by a config entry (a glob with a question name or a JSON Pointer)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli

BODY = {
    "input": "I've been charged twice this month.",
    "questions": [
        {
            "id": "team",
            "type": "choice",
            "question": "Which team should handle this?",  # (PCD200: one or two words are too few)
            "options": [{"name": "Billing"}, {"name": "billing "}, {"name": "sales"}],
        },
        {"id": "urgent", "type": "yes_no", "question": "Needs an answer today?", "weight": 1},
    ],
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "requests").mkdir()
    (tmp_path / "requests" / "ticket.json").write_text(json.dumps(BODY, indent=2), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def line_of(project, text: str) -> int:
    """The line of the file where `text` is (found in the text, not by pcdlint)."""
    lines = (project / "requests" / "ticket.json").read_text().splitlines()
    (index,) = [i for i, line in enumerate(lines) if text in line]
    return index + 1


def check(*args: str):
    result = CliRunner().invoke(cli, ["check", "--engine", "sglang-decisions", *args])
    return result.exit_code, result.stdout, result.stderr


def test_text_and_json(project):
    code, out, _ = check("requests")
    assert code == 1
    assert "question team › choice" in out and "PCD101 error" in out and "PCD103 error" in out
    # a refused request is no field decided wrongly: the next step says the file cannot be used
    assert out.splitlines()[-1].startswith("1 file cannot be used as written")
    code, out, _ = check("requests", "-f", "json")
    document = json.loads(out)
    assert {"version", "tool", "tokenizers", "engines", "files", "findings", "summary"} <= document.keys()
    assert [e["name"] for e in document["decision_engines"]] == ["sglang-decisions"]
    found = {(f["code"], f["pointer"], f["line"], f["engine"]) for f in document["findings"]}
    dup, weight = line_of(project, '"billing "'), line_of(project, '"weight"')
    assert found == {
        ("PCD101", "/questions/0/options/1/name", dup, "sglang-decisions"),
        ("PCD103", "/questions/1/weight", weight, "sglang-decisions"),
    }
    assert document["files"][0]["sites"][0]["question_kind"] == "choice"


def test_sarif_regions_and_github_annotations(project):
    check("requests", "--output-sarif", "out.sarif")
    sarif = json.loads((project / "out.sarif").read_text())
    regions = sorted(
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
        for r in sarif["runs"][0]["results"]
    )
    dup, weight = line_of(project, '"billing "'), line_of(project, '"weight"')
    assert regions == [("PCD101", dup), ("PCD103", weight)]
    _, out, _ = check("requests", "-f", "github")
    assert f"::error file=requests/ticket.json,line={dup}" in out and f"line={weight}" in out


def test_html_report_names_the_question(project):
    check("requests", "--output-html", "out.html")
    html = (project / "out.html").read_text()
    assert "question team › choice" in html and "PCD101" in html


def test_baseline(project):
    code, _, _ = check("requests", "--write-baseline", "base.json")
    assert code == 0
    code, out, _ = check("requests", "--baseline", "base.json")
    assert code == 0 and "PCD101" not in out


@pytest.mark.parametrize(
    ("key", "left"),
    [
        ("requests/*.json#question:team", {"PCD103"}),
        ("ticket.json#/questions/1", {"PCD101"}),
        ("requests/ticket.json", set()),
    ],
)
def test_config_suppression_by_question_name_or_pointer(project, key, left):
    (project / ".pcdlint.toml").write_text(
        f'[per-file-ignores]\n"{key}" = ["colliding-option-names", "PCD103"]\n', encoding="utf-8"
    )
    _, out, _ = check("requests", "-f", "json")
    assert {f["code"] for f in json.loads(out)["findings"]} == left


def test_bad_question_fragment_is_a_usage_error(project):
    (project / ".pcdlint.toml").write_text(
        '[per-file-ignores]\n"a.json#question:" = ["PCD101"]\n', encoding="utf-8"
    )
    code, _, err = check("requests")
    assert code == 2 and "question like #question:urgency" in err


def write_colliding_names(project) -> None:
    """requests/ticket.json: one question whose option names are equal after case-folding and
    whitespace (`Billing`, `billing `, `bill\\ning`) beside `sales`."""
    options = [{"name": "Billing"}, {"name": "billing "}, {"name": "bill\ning"}, {"name": "sales"}]
    body = dict(BODY, questions=[BODY["questions"][0] | {"options": options}])
    (project / "requests" / "ticket.json").write_text(json.dumps(body, indent=2), encoding="utf-8")


def test_suggest_renames_colliding_names_and_the_rewrite_lints_clean(project):
    write_colliding_names(project)
    result = CliRunner().invoke(
        cli,
        [
            "suggest",
            "requests/ticket.json",
            "--engine",
            "sglang-decisions",
            "--format",
            "json",
            "--write",
            "fixed.json",
        ],
    )
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)
    renamings = [e for e in entries if "fix" not in e]
    assert {tuple(e["suggestions"][0]["options"]) for e in renamings} == {
        ("Billing", "billing 2", "bill ing", "sales")
    }
    # the question has no way out either (PCD201): its design fix is written with the renaming
    assert [e["fix"]["option"] for e in entries if "fix" in e] == ["other"]
    fixed = json.loads((project / "fixed.json").read_text())
    assert [o["name"] for o in fixed["questions"][0]["options"]] == [
        "Billing",
        "billing 2",
        "bill ing",
        "sales",
        "other",
    ]
    code, out, _ = check("fixed.json", "-f", "json")
    assert code == 0 and json.loads(out)["findings"] == []


def test_suggest_text_names_the_engine_and_keeps_a_name_with_a_newline_on_its_line(project):
    write_colliding_names(project)
    result = CliRunner().invoke(cli, ["suggest", "requests/ticket.json", "--engine", "sglang-decisions"])
    lines = result.stdout.splitlines()
    renaming = [line for line in lines if "PCD101" in line]
    assert renaming and all("[sglang-decisions]" in line for line in renaming), result.stdout
    assert "[None]" not in result.stdout
    (pairs,) = [line for line in lines if "distinct-names" in line]
    assert "'billing ' -> billing 2" in pairs and "'bill\\ning' -> bill ing" in pairs, pairs


def test_limit_finding_proposes_two_passes(project):
    body = dict(
        BODY, questions=[BODY["questions"][0] | {"options": [{"name": f"team {i}"} for i in range(60)]}]
    )
    (project / "requests" / "ticket.json").write_text(json.dumps(body, indent=2), encoding="utf-8")
    _, out, _ = check("requests", "-f", "json")
    (limit,) = [f for f in json.loads(out)["findings"] if f["code"] == "PCD100"]
    assert limit["data"]["split"] == [
        {"first": 0, "last": 19, "options": 20},
        {"first": 20, "last": 39, "options": 20},
        {"first": 40, "last": 59, "options": 20},
    ]
    assert "split it into two passes: a choice among 3 groups of at most 20 options" in limit["message"]
