"""`check -f junit`: valid against the JUnit schema Jenkins' xUnit plugin uses (vendored in
tests/data/junit/, validated with xmlschema), a test case per linted field, a failure per finding
at or above --fail-on; hostile schema text still makes valid XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from support import FIXTURES, REPO, run_cli

xmlschema = pytest.importorskip("xmlschema")

SCHEMA = xmlschema.XMLSchema(str(REPO / "tests" / "data" / "junit" / "junit-10.xsd"))


def _junit(*args, cwd=None) -> tuple[ET.Element, str]:
    done = run_cli("check", "-f", "junit", *args, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    SCHEMA.validate(done.stdout)  # raises with the offending element
    return ET.fromstring(done.stdout.encode()), done.stdout


def _json(*args, cwd=None) -> dict:
    done = run_cli("check", "-f", "json", *args, cwd=cwd)
    return json.loads(done.stdout)


def test_one_case_per_field_and_a_failure_per_finding_at_fail_on():
    root, _ = _junit(str(FIXTURES / "schemas"))
    report = _json(str(FIXTURES / "schemas"))
    fields = sum(len(f["sites"]) for f in report["files"])
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == fields
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    failures = root.findall(".//failure")
    assert len(failures) == len(errors) > 0
    assert root.get("failures") == str(len(errors))
    assert {f.get("type").split()[0] for f in failures} == {f["code"] for f in errors}
    # the info findings are in the cases' output, not failures
    outputs = "".join(node.text or "" for node in root.iter("system-out"))
    infos = [f for f in report["findings"] if f["severity"] == "info"]
    assert infos and all(f"{f['code']} {f['name']} info" in outputs for f in infos)


def test_fail_on_info_makes_every_finding_a_failure():
    root, _ = _junit(str(FIXTURES / "schemas"), "--fail-on", "info")
    report = _json(str(FIXTURES / "schemas"), "--fail-on", "info")
    assert len(root.findall(".//failure")) == len(report["findings"])
    assert not list(root.iter("system-out"))


def test_hostile_text_stays_valid_xml(tmp_path):
    # control characters, markup and a CDATA end in option values and the file name
    schema = {
        "properties": {
            "kind": {"enum": ["a\u0001<b>&", "a]]>\u0008c", "a\u001b[31m"]},
        }
    }
    path = tmp_path / "odd<&>.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    root, text = _junit(str(path), "--fail-on", "info")
    assert "\x01" not in text and "\x1b" not in text
    assert root.findall(".//testcase")


def test_an_unreadable_file_is_an_error_case(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"properties": {', encoding="utf-8")
    done = run_cli("check", "-f", "junit", str(bad))
    assert done.returncode == 2
    SCHEMA.validate(done.stdout)
    root = ET.fromstring(done.stdout.encode())
    assert root.get("errors") == "1"
    assert root.find(".//testcase/error") is not None
