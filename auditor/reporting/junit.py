"""`-f junit`: JUnit XML for the test reporters of CI systems (Jenkins, GitLab, Azure, CircleCI).

One `<testsuite>` per linted file, one `<testcase>` per linted field (each site the crawler
found, named by its field and JSON Pointer), and one `<failure>` per finding on it at or above
`--fail-on`; findings below it are listed in the case's `<system-out>`, so a reporter shows
them without failing the case. A finding that belongs to no field (a file-level rule) gets a
case of its own, named after the rule and its pointer. A file that could not be read is one
case with an `<error>`. The document follows the JUnit schema Jenkins' xUnit plugin validates
against (junit-10.xsd; tests/data/junit/ has the copy the tests validate with).

Schema text (option values, file names) is attacker-controlled: ElementTree escapes markup, and
characters XML 1.0 cannot hold (control characters, lone surrogates) are written as `\\x01`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from auditor.linter.context import Finding
from auditor.linter.engine import LintRun
from auditor.linter.registry import severity_rank
from auditor.reporting import formatter

# What XML 1.0 cannot hold (its Char production): C0 controls but tab, LF and CR; lone
# surrogates; U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\ud800-\\udfff\\ufffe\\uffff]")


def xml_text(value: object) -> str:
    """Text XML 1.0 can hold: every character it cannot written as a `\\xNN` / `\\uNNNN` escape."""
    return _NOT_XML.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
        str(value),
    )


def _element(parent: ET.Element, tag: str, text: str | None = None, **attributes: object) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attributes.items()})
    if text is not None:
        node.text = xml_text(text)
    return node


def _line(finding: Finding) -> str:
    where = f"{finding.path}:{finding.line}:{finding.column}"
    tokenizer = f" [{finding.tokenizer}]" if finding.tokenizer else ""
    engine = f" ({finding.engine})" if finding.engine else ""
    return f"{where}: {finding.code} {finding.name} {finding.severity}{tokenizer}{engine}: {finding.message}"


def _case(
    suite: ET.Element, name: str, classname: str, findings: list[Finding], fail_on: int
) -> tuple[int, int]:
    """One test case; (cases, failures) it adds."""
    case = _element(suite, "testcase", name=name, classname=classname, time="0")
    failing = [f for f in findings if severity_rank(f.severity) >= fail_on]
    for finding in failing:
        _element(
            case,
            "failure",
            _line(finding),
            type=f"{finding.code} {finding.name}",
            message=f"{finding.severity}: {finding.message}",
        )
    below = [f for f in findings if severity_rank(f.severity) < fail_on]
    if below:
        _element(case, "system-out", "\n".join(_line(f) for f in below) + "\n")
    return 1, len(failing)


def run_to_junit(run: LintRun, fail_on: str = "error") -> ET.Element:
    """The run as a `<testsuites>` element."""
    threshold = severity_rank(fail_on)
    root = ET.Element("testsuites", {"name": "pcdlint"})
    total_tests = total_failures = total_errors = 0
    for error in run.errors:
        suite = _element(
            root, "testsuite", name=error.path, tests=1, failures=0, errors=1, skipped=0, time="0"
        )
        case = _element(suite, "testcase", name=error.path, classname=error.path, time="0")
        _element(case, "error", str(error), type="input-error", message=error.message)
        total_tests += 1
        total_errors += 1
    for result in run.files:
        path = result.model.path
        suite = _element(
            root, "testsuite", name=path, tests=0, failures=0, errors=0, skipped=0, time="0", file=path
        )
        by_site: dict[str, list[Finding]] = {site.pointer: [] for site in result.model.sites}
        loose: dict[tuple[str, str], list[Finding]] = {}
        for finding in result.findings:
            if finding.site_pointer in by_site:
                by_site[finding.site_pointer].append(finding)
            else:
                loose.setdefault((finding.code, finding.pointer), []).append(finding)
        tests = failures = 0
        for site in result.model.sites:
            added, failed = _case(
                suite, f"{site.field} ({site.pointer or '/'})", path, by_site[site.pointer], threshold
            )
            tests, failures = tests + added, failures + failed
        for (code, pointer), findings in loose.items():
            added, failed = _case(
                suite, f"{code} {findings[0].name} ({pointer or '/'})", path, findings, threshold
            )
            tests, failures = tests + added, failures + failed
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        total_tests += tests
        total_failures += failures
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", str(total_errors))
    return root


@formatter(
    "junit",
    "JUnit XML for CI test reporters (a test case per field, a failure per finding at or above --fail-on)",
)
def render(run: LintRun, fail_on: str = "error", **_options: Any) -> str:
    root = run_to_junit(run, fail_on)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
