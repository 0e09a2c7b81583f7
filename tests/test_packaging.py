"""The wheel holds only the `auditor` namespace, with every rule and template inside it."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from auditor.linter.registry import load_rules
from support import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(REPO),
            "-w",
            str(out),
        ],
        check=True,
        timeout=600,
    )
    (path,) = out.glob("pcdlint_audit-*.whl")
    return zipfile.ZipFile(path).namelist()


def test_only_auditor_namespace(wheel):
    tops = {name.split("/")[0] for name in wheel}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"auditor"}


def test_every_rule_and_template_inside(wheel):
    for rule in load_rules().values():
        assert rule.module.replace(".", "/") + ".py" in wheel
    templates = [
        p.relative_to(REPO / "reports" / "templates").as_posix()
        for p in (REPO / "reports" / "templates").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    for template in templates:
        assert f"auditor/templates/{template}" in wheel
    sources = [p.relative_to(REPO / "auditor").as_posix() for p in (REPO / "auditor").rglob("*.py")]
    for source in sources:
        assert f"auditor/{source}" in wheel, source


def test_console_script_declared(wheel):
    assert any(name.endswith("entry_points.txt") for name in wheel)
