"""The eval HTML report in headless Chromium: it renders without console messages, draws one
reliability diagram per field and method, and hostile option text shows literally, running nothing."""

from __future__ import annotations

import shutil

import pytest
from test_report_browser import CHROMIUM, DomScan, chromium, dump_dom

from auditor.eval import EvalField, EvalOptions, FieldStructure, run_eval
from auditor.eval.data import Row
from auditor.reporting.eval_report import render
from support import REPO

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (CI installs it)"),
]

HOSTILE = [
    "<script>document.title='pwned'</script>",
    '"><img src=x onerror="document.title=\'pwned-img\'">',
    "'><svg onload=\"document.body.setAttribute('data-pwned','svg')\">",
]


def tags(dom: str) -> DomScan:
    scan = DomScan()
    scan.feed(dom)
    return scan


@pytest.mark.model
def test_fixture_subset_report_renders(subset_report, tmp_path):
    page = tmp_path / "eval.html"
    page.write_text(render("html", subset_report), encoding="utf-8")
    shot = tmp_path / "eval-report.png"
    done = chromium(page, tmp_path, "--window-size=1280,4000", f"--screenshot={shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    (REPO / "out").mkdir(exist_ok=True)
    shutil.copyfile(shot, REPO / "out" / "eval-report.png")
    dom, console = dump_dom(page, tmp_path)
    assert console == []
    scan = tags(dom)
    svgs = [attrs.get("class") for tag, attrs in scan.tags if tag == "svg"]
    methods = sum(1 for f in subset_report["fields"] for b in f["methods"].values() if b.get("available"))
    assert svgs.count("reliability") == methods
    assert svgs.count("accuracy") == len(subset_report["fields"])
    assert [attrs.get("class") for tag, attrs in scan.tags if tag == "table"].count("confusion") == methods
    assert sum(1 for tag, _ in scan.tags if tag == "circle") > 0  # temperature-scaled bins are drawn
    assert "script" not in {tag for tag, _ in scan.tags}


class HostileBackend:
    def identity(self):
        return {"backend": "<b>scripted</b>", "model": "<script>alert(1)</script>"}

    def fingerprint(self, fields):
        return "hostile"

    def structure(self, fields):
        return [FieldStructure(fields[0].name, "string", "", ["<", '"', "'"], [[0, 1]], True, "viable")]

    def score(self, fields, context, *, reverse_order=False, letters=True):
        n = len(context) % 3
        scores = [-1.0 - ((i + n) % 3) for i in range(3)]
        return [
            {
                "first_token": [scores[0], scores[0], scores[2]],
                "full_sequence": scores,
                "constrained": scores,
                "constrained_pick": max(range(3), key=lambda i: scores[i]),
                "letter": scores,
            }
        ]


def test_hostile_options_show_literally_and_run_nothing(tmp_path):
    fields = [EvalField("<i onmouseover=alert(1)>f</i>", HOSTILE)]
    rows = [Row(i, str(i), "x" * i, {fields[0].name: i % 3}) for i in range(1, 13)]
    report = run_eval(
        fields,
        rows,
        HostileBackend(),
        EvalOptions(perturb=("order",), notes=["<script>x()</script>"]),
        schema_path="<s>.json",
        data_path="d&.jsonl",
    )
    page = tmp_path / "hostile.html"
    page.write_text(render("html", report), encoding="utf-8")
    dom, console = dump_dom(page, tmp_path)
    assert console == []
    scan = tags(dom)
    assert scan.title.startswith("pcdlint eval report")  # (svg <title>s follow)
    body = next(attrs for tag, attrs in scan.tags if tag == "body")
    assert "data-pwned" not in body
    found = {tag for tag, _ in scan.tags}
    assert "script" not in found and "img" not in found and "i" not in found
    assert not [a for _, a in scan.tags if any(k.startswith("on") for k in a)]
    assert [attrs.get("class") for tag, attrs in scan.tags if tag == "svg"].count("reliability") == 4
    for text in HOSTILE + ["<i onmouseover=alert(1)>f</i>", "<script>x()</script>"]:
        literal = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert literal in dom, text
