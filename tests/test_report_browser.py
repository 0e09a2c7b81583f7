"""The HTML report in a real browser: headless Chromium renders it without console errors, and a
hostile schema's text shows literally without running any script.

CI installs Debian's `chromium` (.ci/run). The screenshot of the four presets' report is written
to the test's tmp dir and copied to `out/report-presets.png` (git-ignored) for a person to look at.
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from auditor.lint.engine import lint
from auditor.reporting.html import render
from support import CORPUS, REPO

PRESETS = ("high_cardinality_255", "support_triage", "fintech_fraud", "code_security")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (CI installs it)")]


def chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=180)


def console_lines(stderr: str) -> list[str]:
    """Chromium logs each page console message (and uncaught exception) as `…:CONSOLE…] "…"`."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


class DomScan(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def dump_dom(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    done = chromium(page, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console_lines(done.stderr)


def test_presets_report_renders_without_console_errors(qwen, smollm2, tmp_path):
    paths = [CORPUS / "pcd-presets" / f"{name}.json" for name in PRESETS]
    if not all(p.exists() for p in paths):
        pytest.skip("shared corpus not present")
    run = lint([str(p) for p in paths], [qwen, smollm2])
    page = tmp_path / "report.html"
    page.write_text(render(run), encoding="utf-8")

    shot = tmp_path / "report-presets.png"
    done = chromium(page, tmp_path, "--window-size=1280,2400", f"--screenshot={shot}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    out = REPO / "out"
    out.mkdir(exist_ok=True)
    shutil.copyfile(shot, out / "report-presets.png")

    dom, console = dump_dom(page, tmp_path)
    assert console == []
    scan = DomScan()
    scan.feed(dom)
    cards = [attrs for tag, attrs in scan.tags if tag == "article"]
    # one card per field and tokenizer; tokenizer-independent findings are listed per file
    assert len(cards) == len({(f.path, f.site_pointer, f.tokenizer) for f in run.findings if f.tokenizer})
    for finding in run.findings:
        assert str(escape(finding.field)) in dom


HOSTILE = [
    "<script>document.title='pwned-script';document.body.setAttribute('data-pwned','script')</script>",
    "\"><img src=x onerror=\"document.title='pwned-img';document.body.setAttribute('data-pwned','img')\">",
    "javascript:document.body.setAttribute('data-pwned','js')",
    "'><svg onload=\"document.body.setAttribute('data-pwned','svg')\">",
]


def test_hostile_schema_runs_no_script_and_shows_text_literally(qwen, tmp_path):
    import json

    schema = {"type": "object", "properties": {
        "<i onmouseover=alert(1)>field</i>": {"description": "<script>console.error('pwned')</script>",
                                              "enum": HOSTILE}}}
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(schema, indent=2), encoding="utf-8")
    run = lint([str(source)], [qwen])
    assert run.findings, "the hostile options must be rendered in a card"
    page = tmp_path / "hostile.html"
    page.write_text(render(run), encoding="utf-8")

    dom, console = dump_dom(page, tmp_path)
    assert console == []  # nothing ran that logged, threw or violated the page's policy
    scan = DomScan()
    scan.feed(dom)
    assert scan.title == "pcdlint report"
    body = next(attrs for tag, attrs in scan.tags if tag == "body")
    assert "data-pwned" not in body
    assert "pwned" not in " ".join(str(attrs) for _, attrs in scan.tags)
    tags = {tag for tag, _ in scan.tags}
    assert "img" not in tags and "svg" not in tags
    assert [tag for tag, _ in scan.tags].count("script") == 1  # the report's own filter script
    assert not [a for _, a in scan.tags if any(k.startswith("on") for k in a)]
    assert not [a for _, a in scan.tags if str(a.get("href", "")).startswith("javascript:")]
    for option in HOSTILE:  # shown literally (the DOM serialiser escapes <, > and & in text)
        literal = option.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert literal in dom, option
