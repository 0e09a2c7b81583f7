"""The documentation site builds with `mkdocs build --strict`, has a page per rule and engine, and
every SARIF helpUri resolves to a page the build wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from auditor.linter.pages import DOCS_URL
from auditor.linter.registry import load_rules
from auditor.pcd.engines.table import ENGINE_ROWS
from auditor.reporting.sarif import rule_descriptor
from support import REPO

pytestmark = pytest.mark.slow  # builds the whole site (`make docs` in .ci/run builds it too)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    proc = subprocess.run(
        [str(mkdocs), "build", "--strict", "-q", "-d", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(mkdocs.parent)},
    )
    assert proc.returncode == 0, proc.stderr
    return out


def test_every_rule_has_a_page_with_its_documented_sections(site):
    rules = load_rules()  # the engine's own (PCD999 internal-error) included
    assert any(rule.internal for rule in rules.values())
    for code, rule in rules.items():
        page = (site / "rules" / code / "index.html").read_text(encoding="utf-8")
        assert rule.name in page
        for heading in ("What it does", "Why is this bad?", "Example", "Use instead", "Options"):
            assert heading in page, (code, heading)


def test_every_engine_has_a_page(site):
    assert ENGINE_ROWS
    for name in ENGINE_ROWS:
        assert (site / "engines" / name / "index.html").is_file(), name


def test_sarif_help_uris_resolve_to_built_pages(site):
    from auditor.linter.engine import LintRun
    from auditor.reporting.sarif import run_to_sarif

    # the rules a SARIF log lists: every rule the registry knows, internal ones (PCD999) included
    rules = run_to_sarif(LintRun(tokenizers=[]))["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} == set(load_rules()) and "PCD999" in set(load_rules())
    for descriptor in rules:
        uri = descriptor["helpUri"]
        assert uri.startswith(DOCS_URL)
        page = site / uri.removeprefix(DOCS_URL) / "index.html"
        assert page.is_file(), uri


def test_the_docs_base_url_is_configurable(monkeypatch):
    monkeypatch.setenv("PCDLINT_DOCS_URL", "https://docs.example.test/pcdlint")
    rule = load_rules()["PCD001"]
    assert rule_descriptor(rule)["helpUri"] == "https://docs.example.test/pcdlint/rules/PCD001/"


def test_the_site_carries_no_python_files(site):
    """docs/_hooks.py runs at build time; neither it nor the bytecode Python writes beside it
    (docs/__pycache__/) is a page (mkdocs.yml's exclude_docs)."""
    assert (REPO / "docs" / "__pycache__").is_dir()  # the build imported the hooks, bytecode on
    stray = [p for p in site.rglob("*") if p.suffix in (".py", ".pyc") or "__pycache__" in p.parts]
    assert not stray, stray
