"""Issue 32: on files nobody here wrote, say only what is true and changes a decision.

Failed runs say only that they failed; selectors that read like mistyped codes are refused; the
next step names a command that works for the input; open fields stay open; a multi-token warning
that restates a collision folds into it; dialects are checked against their own rules.
"""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from auditor.exitcodes import EXIT_FINDINGS, EXIT_USAGE
from support import FIXTURES, run_cli

WILD = FIXTURES / "wild"
REASSURING = ("0 findings", "decided wrongly", "No field")


OWN_MODULES = {"app", "routing", "support_models", "importable"}


@pytest.fixture(autouse=True)
def _forget_imported_models():
    """Modules a test imported from its own folder (`app`, `routing` ...) are dropped after it, so
    another test importing the same name gets its own copy."""
    yield
    for name in [m for m in sys.modules if m.split(".")[0] in OWN_MODULES or m.startswith("_pcdlint_")]:
        del sys.modules[name]


def codes(done) -> list[str]:
    return [f["code"] for f in json.loads(done.stdout)["findings"]]


# --------------------------------------------------------------------------- failed runs


@pytest.mark.parametrize("make", ["missing", "broken", "empty-dir"])
def test_a_failed_run_prints_no_verdict(tmp_path, make):
    target = tmp_path / "x.json"
    if make == "broken":
        target.write_text("{bad")
    elif make == "empty-dir":
        target = tmp_path / "empty"
        target.mkdir()
    done = run_cli("check", str(target))
    assert done.returncode == EXIT_USAGE
    # no verdict; the summary still ends the output (issue 45), naming the file in error
    assert not any(word in done.stdout for word in REASSURING[1:]), done.stdout
    if make != "empty-dir":
        assert done.stdout.rstrip().splitlines()[-1] == f"1 file in error (not read): {target}"
    assert done.stderr.strip()


def test_a_partly_failed_run_shows_findings_and_summary_but_no_verdict(tmp_path):
    (tmp_path / "bad.json").write_text("{bad")
    done = run_cli("check", str(tmp_path / "bad.json"), str(FIXTURES / "schemas" / "risk_triage.json"))
    assert done.returncode == EXIT_USAGE
    assert "PCD001 error" in done.stdout
    assert not any(word in done.stdout for word in ("decided wrongly", "Run pcdlint"))
    # (issue 45: the summary still ends the output, with the file in error)
    assert done.stdout.rstrip().endswith(f"1 file in error (not read): {tmp_path / 'bad.json'}")


@pytest.mark.parametrize(
    ("selector", "hint"),
    [("PCD01", "'PCD01*' for PCD010-PCD013"), ("PCD0", "'PCD0*' for PCD000-"), ("PCD7", "PCD007")],
)
def test_a_short_code_prefix_needs_a_star(selector, hint):
    done = run_cli("check", "--select", selector, str(FIXTURES / "schemas" / "risk_triage.json"))
    assert done.returncode == EXIT_USAGE
    assert f"'{selector}' matches no rule; did you mean" in done.stderr and hint in done.stderr


def test_a_starred_prefix_selects_its_rules():
    path = str(FIXTURES / "schemas" / "risk_triage.json")
    low = set(codes(run_cli("check", "-f", "json", "--select", "PCD00*", path)))
    high = set(codes(run_cli("check", "-f", "json", "--select", "PCD01*", path)))
    assert "PCD001" in low and low <= {f"PCD00{i}" for i in range(10)}
    assert high and all(code.startswith("PCD01") for code in high)


def test_the_next_step_of_a_python_model_names_the_model(tmp_path):
    shutil.copytree(FIXTURES / "python" / "app", tmp_path / "app")
    done = run_cli("check", "app.models:Ticket", cwd=tmp_path)
    assert done.returncode == EXIT_FINDINGS
    assert done.stdout.rstrip().endswith("Run pcdlint suggest app.models:Ticket to see verified fixes.")
    suggested = run_cli("suggest", "app.models:Ticket", cwd=tmp_path)
    assert suggested.returncode in (0, 1) and "letter-slots" in suggested.stdout
    written = run_cli("suggest", "app.models:Ticket", "--write", str(tmp_path / "fixed.py"), cwd=tmp_path)
    assert written.returncode == EXIT_USAGE
    assert "cannot patch Python source" in written.stderr and not (tmp_path / "fixed.py").exists()


# --------------------------------------------------------------------------- open sets


OPEN_UNION = {
    "type": "object",
    "properties": {
        "module": {
            "anyOf": [
                {"enum": ["CommonJS", "ES2015", "ES2020", "ESNext", "Node16", "NodeNext"]},
                {"pattern": "^([Cc][Oo][Mm][Mm][Oo][Nn][Jj][Ss])$"},
            ]
        },
        "decision": {
            "anyOf": [{"enum": ["approve_now", "approve_later"], "type": "string"}, {"type": "string"}]
        },
        "closed": {"anyOf": [{"enum": ["approve_now", "approve_later"], "type": "string"}, {"type": "null"}]},
    },
}


def test_an_open_union_is_no_decision(write_schema):
    path = str(write_schema(OPEN_UNION))
    default = json.loads(run_cli("check", "-f", "json", path).stdout)["findings"]
    # only the closed union is linted as a decision
    assert {f["site"] for f in default} == {"/properties/closed"}
    opened = json.loads(run_cli("check", "-f", "json", "--select", "open-field", path).stdout)["findings"]
    assert [(f["code"], f["pointer"], f["severity"]) for f in opened] == [
        ("PCD020", "/properties/module", "info"),
        ("PCD020", "/properties/decision", "info"),
    ]
    assert opened[1]["data"]["open_branch"] == '{"type": "string"}'
    suggested = run_cli("suggest", "-f", "json", path)
    assert {e["pointer"] for e in json.loads(suggested.stdout)} <= {"/properties/closed"}


LITERAL_OR_STR = """
from typing import Literal, Optional, Union

from pydantic import BaseModel


class Routing(BaseModel):
    queue: Union[Literal["approve_now", "approve_later", "reject"], str]
    fallback: Optional[Literal["approve_now", "approve_later", "reject"]] = None
"""


def test_literal_or_str_in_a_pydantic_model_stays_open(tmp_path):
    (tmp_path / "routing.py").write_text(LITERAL_OR_STR)
    done = run_cli("check", "-f", "json", "--select", "PCD001,PCD020", "routing:Routing", cwd=tmp_path)
    found = {(f["code"], f["field"] or f["data"].get("field")) for f in json.loads(done.stdout)["findings"]}
    assert found == {("PCD020", "queue"), ("PCD001", "fallback")}


# --------------------------------------------------------------------------- dialects


def test_a_bare_list_of_gemini_declarations_is_gemini():
    done = run_cli("check", "-f", "json", str(WILD / "gemini_declarations.json"))
    report = json.loads(done.stdout)
    assert "PCD000" not in codes(done)
    assert report["files"][0]["format"] == "gemini"
    assert any(f["field"] == "function schedule_meeting › priority" for f in report["findings"])


def test_a_python_typed_function_doc_is_not_json_schema():
    done = run_cli("check", "-f", "json", str(WILD / "bfcl_function_doc.json"))
    assert codes(done) == ["PCD001"]  # the real collision (newton / newton_meter), no PCD000
    assert json.loads(done.stdout)["files"][0]["format"] == "python-functions"


def test_one_invalid_schema_finding_per_place_and_message():
    done = run_cli("check", "-f", "json", "--select", "PCD000", str(WILD / "tuple_items.json"))
    found = json.loads(done.stdout)["findings"]
    assert [f["pointer"] for f in found] == ["/properties/point/items"]


# --------------------------------------------------------------------------- empty remainder


def test_an_empty_remainder_scored_by_a_merged_quote_is_a_default_warning(write_schema):
    path = str(
        write_schema(
            {
                "type": "object",
                "properties": {"procedure": {"enum": ["Coronariografia", "Coronariografia e Angioplastia"]}},
            }
        )
    )
    done = run_cli("check", "-f", "json", "-t", "qwen2.5", "-t", "smollm2", path)
    found = {f["tokenizer"]: f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD006"}
    assert found["qwen2.5"]["severity"] == found["smollm2"]["severity"] == "warning"
    assert found["qwen2.5"]["data"]["quote_tokens"] == ['",\n', '",', '"}', '"\n']
    assert found["smollm2"]["data"]["quote_tokens"] == ['",', '"}']  # it writes `"` + `\n` apart
    assert found["qwen2.5"]["pointer"] == "/properties/procedure/enum/0"


# --------------------------------------------------------------------------- Python without importing


def test_an_unimportable_model_is_read_statically_with_one_note(tmp_path):
    source = (WILD / "py" / "support_models.py").read_text()
    (tmp_path / "support_models.py").write_text(source)
    static = run_cli(
        "check", "-f", "json", "--select", "PCD001,PCD020", "support_models:Ticket", cwd=tmp_path
    )
    text = run_cli("check", "support_models:Ticket", cwd=tmp_path)
    notes = [line for line in text.stdout.splitlines() if ": note: " in line]
    assert len(notes) == 1 and "read statically" in notes[0] and "openai_agents_sdk_not_installed" in notes[0]
    # the same file with its missing dependency removed is imported: the same findings, same lines
    (tmp_path / "importable.py").write_text(
        source.replace("import openai_agents_sdk_not_installed", "import os")
    )
    imported = run_cli("check", "-f", "json", "--select", "PCD001,PCD020", "importable:Ticket", cwd=tmp_path)

    def rows(done):
        return sorted(
            (f["code"], f["field"] or f["data"]["field"], f["line"], f["column"])
            for f in json.loads(done.stdout)["findings"]
        )

    assert rows(static) == rows(imported)
    assert {row[1] for row in rows(static)} == {"category", "decision", "fallback", "tags[]", "queue"}
    assert "importable.py: note:" not in run_cli("check", "importable:Ticket", cwd=tmp_path).stdout


def test_a_python_file_with_any_name_and_a_directory_walk_note(tmp_path):
    shutil.copy(WILD / "py" / "support_models.py", tmp_path / "my-agent-models.py")
    done = run_cli("check", "my-agent-models.py:Ticket", cwd=tmp_path)
    assert done.returncode == EXIT_FINDINGS and "PCD001 error" in done.stdout
    assert done.stdout.rstrip().endswith(
        "Run pcdlint suggest my-agent-models.py:Ticket to see verified fixes."
    )
    (tmp_path / "schema.json").write_text(json.dumps({"properties": {"a": {"enum": ["x", "y"]}}}))
    walked = run_cli("check", str(tmp_path))
    assert walked.returncode == 0
    # (issue 45: a walked .py file is read for decision requests, never imported; one with none
    # is counted)
    assert "1 code file held no decision request" in walked.stdout


def test_an_lm_eval_task_with_a_function_tag_is_read_as_a_label_set(tmp_path):
    """Its literal doc_to_choice is a label set scored as lm-eval scores it (whole continuations
    after the target delimiter: tests/test_evalconfigs.py); the unknown `!function` tag neither
    breaks the YAML reading nor prints a traceback."""
    done = run_cli("check", str(WILD / "lm_eval_task.yaml"))
    assert done.returncode == EXIT_FINDINGS and "Traceback" not in done.stderr
    assert "under lm-eval-acc: 'refund_status' is never returned" in done.stdout
