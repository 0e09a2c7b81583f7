"""Inputs beyond files: stdin, Python objects (`pkg.module:Name`, `auditor.lint(obj)`), and the
rule that nothing passes silently (unrecognized files, empty directories)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from test_cli import BAD, CLEAN, assert_no_traceback, pcdlint

import auditor
from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from support import FIXTURES

INPUTS = FIXTURES / "inputs"
APP = FIXTURES / "python"
NOT_A_SCHEMA = {"name": "my-app", "version": "1.0.0", "dependencies": {"left-pad": "^1.3.0"}}


def _comparable(findings: list[dict]) -> list[tuple]:
    return sorted(
        (f["code"], f["pointer"], f["site"], f["field"], f["tokenizer"], f["message"]) for f in findings
    )


# --------------------------------------------------------------------------- stdin


def test_stdin_with_a_name_for_messages(tmp_path):
    text = json.dumps(BAD, indent=2)
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "check", "-", "--stdin-filename", "schemas/risk.json"],
        input=text,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
        timeout=300,
    )
    assert_no_traceback(done)
    assert done.returncode == EXIT_FINDINGS, done.stderr
    assert "schemas/risk.json:" in done.stdout and " PCD001 " in done.stdout
    path = tmp_path / "risk.json"
    path.write_text(text, encoding="utf-8")
    from_file = pcdlint("check", "-f", "json", path)
    piped = pcdlint("check", "-f", "json", "-", input=text)  # in-process: the real pipe is above
    assert _comparable(json.loads(piped.stdout)["findings"]) == _comparable(
        json.loads(from_file.stdout)["findings"]
    )
    assert json.loads(piped.stdout)["files"][0]["path"] == "<stdin>"


def test_stdin_filename_drives_config_matching(tmp_path):
    (tmp_path / ".pcdlint.toml").write_text(
        '[per-file-ignores]\n"schemas/*.json" = ["PCD001"]\n', encoding="utf-8"
    )
    args = ["check", "--select", "PCD001", "-"]
    named = pcdlint(*args, "--stdin-filename", "schemas/risk.json", input=json.dumps(BAD), cwd=tmp_path)
    unnamed = pcdlint(*args, input=json.dumps(BAD), cwd=tmp_path)
    assert (named.returncode, unnamed.returncode) == (EXIT_CLEAN, EXIT_FINDINGS), named.stderr
    assert "1 suppressed" in named.stdout


def test_stdin_yaml_by_content(tmp_path):
    yaml_text = "type: object\nproperties:\n  risk:\n    enum: [CAT_001, CAT_002, CAT_103]\n"
    done = pcdlint("check", "-", input=yaml_text)
    assert done.returncode == EXIT_FINDINGS, done.stderr
    assert "<stdin>:3:3: risk [qwen2.5] PCD001 error" in done.stdout  # the field's header
    assert "\n    4:" in done.stdout  # the collision, at its option on line 4


# --------------------------------------------------------------------------- never silent


def test_named_non_schema_file_exits_2_unless_allowed(tmp_path):
    package = tmp_path / "package.json"
    package.write_text(json.dumps(NOT_A_SCHEMA), encoding="utf-8")
    schema = tmp_path / "clean.json"
    schema.write_text(json.dumps(CLEAN), encoding="utf-8")
    refused = pcdlint("check", schema, package)
    assert refused.returncode == EXIT_USAGE
    assert refused.stderr.strip().splitlines()[-1].startswith(f"pcdlint: error: no schema found in {package}")
    allowed = pcdlint("check", "--allow-unrecognized", schema, package)
    assert allowed.returncode == EXIT_CLEAN, allowed.stderr
    assert f"1 file had no schema: {package}" in allowed.stdout
    (tmp_path / ".pcdlint.toml").write_text("allow-unrecognized = true\n", encoding="utf-8")
    configured = pcdlint("check", "-f", "json", "clean.json", "package.json", cwd=tmp_path)
    assert configured.returncode == EXIT_CLEAN, configured.stderr
    assert json.loads(configured.stdout)["summary"]["unrecognized"] == ["package.json"]
    strict = pcdlint("check", "--no-allow-unrecognized", "clean.json", "package.json", cwd=tmp_path)
    assert strict.returncode == EXIT_USAGE


def test_directory_walk_lists_non_schema_files_and_sarif_says_so(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps(NOT_A_SCHEMA), encoding="utf-8")
    (tmp_path / "clean.json").write_text(json.dumps(CLEAN), encoding="utf-8")
    text = pcdlint("check", tmp_path)
    assert text.returncode == EXIT_CLEAN, text.stderr
    assert f"1 file had no schema: {tmp_path / 'package.json'}" in text.stdout
    sarif = json.loads(pcdlint("check", "-f", "sarif", tmp_path).stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["note"]
    assert "package.json: no schema found" in notes[0]["message"]["text"]


def test_empty_directory_and_only_non_schemas_exit_2(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = pcdlint("check", empty)
    assert result.returncode == EXIT_USAGE
    assert (
        result.stderr.strip()
        == f"pcdlint: error: no lintable file: no *.json, *.yaml, *.yml or code file in {empty}"
    )
    other = tmp_path / "other"
    other.mkdir()
    (other / "package.json").write_text(json.dumps(NOT_A_SCHEMA), encoding="utf-8")
    assert pcdlint("check", other).returncode == EXIT_USAGE
    assert pcdlint("check", "--allow-unrecognized", other).returncode == EXIT_CLEAN


def test_a_py_file_in_a_directory_walk_is_never_imported(tmp_path):
    marker = tmp_path / "imported.txt"
    (tmp_path / "models.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nSCHEMA = {{'enum': ['CAT_001', 'CAT_002']}}\n",
        encoding="utf-8",
    )
    (tmp_path / "clean.json").write_text(json.dumps(CLEAN), encoding="utf-8")
    result = pcdlint("check", "-f", "json", tmp_path, cwd=tmp_path)
    assert result.returncode == EXIT_CLEAN, result.stderr
    files = {f["path"]: f for f in json.loads(result.stdout)["files"]}
    assert set(files) == {str(tmp_path / "clean.json"), str(tmp_path / "models.py")}
    assert files[str(tmp_path / "models.py")]["format"] == "unknown"  # read as text, no request
    assert not marker.exists()


# --------------------------------------------------------------------------- Python objects


@pytest.fixture
def app_dir(tmp_path):
    target = tmp_path / "project"
    shutil.copytree(APP, target)
    (target / ".pcdlint.toml").write_text("", encoding="utf-8")
    yield target
    for name in [m for m in sys.modules if m == "app" or m.startswith("app.")]:
        del sys.modules[name]  # each test imports its own copy of the app


def test_python_object_equals_its_dumped_schema(app_dir):
    pytest.importorskip("pydantic")
    dumped = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from app.models import Ticket; "
            "print(json.dumps(Ticket.model_json_schema(), indent=2))",
        ],
        cwd=app_dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (app_dir / "ticket.json").write_text(dumped, encoding="utf-8")
    from_python = pcdlint("check", "-f", "json", "app.models:Ticket", cwd=app_dir)
    from_file = pcdlint("check", "-f", "json", "ticket.json", cwd=app_dir)
    assert_no_traceback(from_python)
    assert from_python.returncode == from_file.returncode == EXIT_FINDINGS, from_python.stderr
    python_report, file_report = json.loads(from_python.stdout), json.loads(from_file.stdout)
    assert _comparable(python_report["findings"]) == _comparable(file_report["findings"])
    assert python_report["files"][0]["sites"] and [
        (s["pointer"], s["field"], s["kind"]) for s in python_report["files"][0]["sites"]
    ] == [(s["pointer"], s["field"], s["kind"]) for s in file_report["files"][0]["sites"]]
    source = (app_dir / "app" / "models.py").read_text(encoding="utf-8").splitlines()
    by_pointer = {f["pointer"]: f for f in python_report["findings"]}
    collision = next(f for f in python_report["findings"] if f["code"] == "PCD001")
    assert collision["path"] == "app/models.py"
    assert source[collision["line"] - 1].strip() == 'LIVE = "CAT_000_Live_Animals"'  # the member
    priority = by_pointer["/properties/priority/enum/0"]
    row = source[priority["line"] - 1]
    assert row.strip().startswith("priority: Literal[")
    assert row[priority["column"] - 1 : priority["end_column"] - 1] == '"P0_CRITICAL"'
    sites = {s["pointer"]: s for s in python_report["files"][0]["sites"]}
    assert source[sites["/properties/urgent"]["line"] - 1].strip().startswith("urgent:")
    assert sites["/properties/pet"]["kind"] == "discriminator"  # Pydantic's discriminated union


def test_api_lint_of_a_model_equals_the_cli(app_dir, monkeypatch):
    pytest.importorskip("pydantic")
    monkeypatch.chdir(app_dir)
    monkeypatch.syspath_prepend(str(app_dir))
    from app.models import Category, Ticket

    result = auditor.lint(Ticket)
    cli = json.loads(pcdlint("check", "-f", "json", "app.models:Ticket", cwd=app_dir).stdout)
    assert not result.ok and result.errors == []
    assert _comparable(json.loads(result.to_json())["findings"]) == _comparable(cli["findings"])
    assert [(f.path, f.line) for f in result.findings] == [(f["path"], f["line"]) for f in cli["findings"]]
    assert list(result.by_code()) == sorted({f["code"] for f in cli["findings"]})
    assert "category [qwen2.5] PCD001 error" in result.summary()
    assert auditor.lint(Ticket, ignore=["PCD001"]).ok
    enum_only = auditor.lint(Category, select=["PCD001"])
    assert [f.code for f in enum_only.findings] == ["PCD001"]
    assert enum_only.findings[0].path == "app/models.py"


@pytest.mark.parametrize(
    "name, pointer, written",
    [
        ("Order", "/properties/carrier/enum/0", '"UPS_GROUND"'),  # a TypedDict field's Literal
        ("Shipment", "/properties/speed/enum/0", '"CAT_001"'),  # a dataclass field's Literal
        ("Mode", "/enum/0", '"SIZE_100"'),  # a module-level Literal alias
    ],
)
def test_typed_dicts_dataclasses_and_literal_aliases(app_dir, monkeypatch, name, pointer, written):
    pytest.importorskip("pydantic")
    monkeypatch.chdir(app_dir)
    monkeypatch.syspath_prepend(str(app_dir))
    from app import shapes

    (finding,) = auditor.lint(getattr(shapes, name), select=["PCD001"]).findings
    assert (finding.path, finding.pointer) == ("app/shapes.py", pointer)
    row = (app_dir / "app" / "shapes.py").read_text(encoding="utf-8").splitlines()[finding.line - 1]
    assert row[finding.column - 1 : finding.span.end_column - 1] == written
    cli = json.loads(
        pcdlint("check", "-f", "json", "--select", "PCD001", f"app.shapes:{name}", cwd=app_dir).stdout
    )
    assert [(f["path"], f["line"], f["column"]) for f in cli["findings"]] == [
        (finding.path, finding.line, finding.column)
    ]


def test_api_accepts_dicts_text_paths_and_type_adapters(tmp_path):
    pydantic = pytest.importorskip("pydantic")
    from typing import Literal

    bad_text = json.dumps(BAD)
    assert [f.code for f in auditor.lint(BAD, select=["PCD001"]).findings] == ["PCD001"]
    assert not auditor.lint(bad_text, select=["PCD001"]).ok
    assert not auditor.lint(
        "type: object\nproperties:\n  c: {enum: [CAT_001, CAT_002, CAT_103]}\n", select=["PCD001"]
    ).ok
    path = tmp_path / "bad.json"
    path.write_text(bad_text, encoding="utf-8")
    assert auditor.lint(path, select=["PCD001"]).findings[0].path == str(path)
    adapter = pydantic.TypeAdapter(Literal["CAT_001", "CAT_002", "CAT_103"])
    assert [f.code for f in auditor.lint(adapter, select=["PCD001"]).findings] == ["PCD001"]
    unknown = auditor.lint(NOT_A_SCHEMA)
    assert not unknown.ok and "no schema found" in unknown.errors[0]
    from auditor.errors import UsageError

    with pytest.raises(UsageError):
        auditor.lint(BAD, select=["NOPE"])


def test_import_auditor_stays_light():
    code = (
        "import sys, auditor; heavy = [m for m in ('auditor.linter', 'auditor.schema', 'tokenizers', 'transformers',"
        " 'pydantic', 'jsonschema') if m in sys.modules]; print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_python_ref_errors_are_one_line(app_dir):
    missing = pcdlint("check", "app.models:Nope", cwd=app_dir)
    assert missing.returncode == EXIT_USAGE
    assert missing.stderr.strip() == "app.models:Nope: module 'app.models' has no attribute 'Nope'"
    no_module = pcdlint("check", "nosuch.module:Ticket", cwd=app_dir)
    assert no_module.returncode == EXIT_USAGE and len(no_module.stderr.strip().splitlines()) == 1
    assert "cannot import module 'nosuch.module'" in no_module.stderr


def test_missing_pydantic_names_the_extra(app_dir):
    blocker = app_dir / "blocker"
    blocker.mkdir()
    (blocker / "pydantic.py").write_text("raise ImportError('blocked for this test')\n", encoding="utf-8")
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(blocker)}
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "check", "app.models:Category"],
        cwd=app_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == EXIT_USAGE
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith("pip install 'pydantic<3,>=2' (pcdlint's pydantic extra)")
    )
    assert "Traceback" not in done.stderr


def test_api_to_json_writes_json_as_the_cli_does(tmp_path):
    """LintResult.to_json() writes the CLI's JSON text: a schema's -Infinity option (json.loads
    reads it) in finding data is written as a string, not as `-Infinity`, which is not JSON;
    apart from the verified suggestions the CLI's JSON run adds, the documents are equal."""
    path = tmp_path / "inf.json"
    path.write_text('{"properties": {"level": {"enum": [-Infinity, "MEDIUM", "MEDIAN"]}}}')
    result = auditor.lint(str(path))
    text = result.to_json()
    assert '"option": "-Infinity"' in text
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    cli = json.loads(pcdlint("check", "-f", "json", str(path), cwd=tmp_path).stdout)
    for finding in document["findings"] + cli["findings"]:
        finding["data"].pop("suggestions", None)
    assert document["findings"] == cli["findings"] and document["files"] == cli["files"]
