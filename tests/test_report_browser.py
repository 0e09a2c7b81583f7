"""The HTML report in a real browser: headless Chromium renders it without console errors, and a
hostile schema's text shows literally without running any script.

CI installs Debian's `chromium` (.ci/run). The screenshot of the four presets' report is written
to the test's tmp dir and copied to `out/report-presets.png` (git-ignored) for a person to look at.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from auditor.linter.engine import lint
from auditor.reporting.html import render
from support import CORPUS, NO_CORPUS, REPO

PRESETS = ("high_cardinality_255", "support_triage", "fintech_fraud", "code_security")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (CI installs it)"),
]


def chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=180,
    )


def console_lines(stderr: str) -> list[str]:
    """Chromium logs each page console message (and uncaught exception) as `…:CONSOLE…] "…"`."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


class DomScan(HTMLParser):
    """Tags in order, the title, and the text a reader sees without opening a disclosure: text
    outside every `<details>` other than a card's own body and the info toggle (which only
    fold whole cards)."""

    FOLDS = frozenset({"card-body", "info-toggle"})

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.title = ""
        self._in_title = False
        self._stack: list[bool] = []  # per open <details>: does it hide data?
        self._skip = 0  # inside <style>/<script>
        self.visible: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._in_title = tag == "title"
        if tag == "details":
            self._stack.append(not (set((attrs.get("class") or "").split()) & self.FOLDS))
        if tag in ("style", "script"):
            self._skip += 1

    def handle_endtag(self, tag):
        self._in_title = False
        if tag == "details" and self._stack:
            self._stack.pop()
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if not self._skip and not any(self._stack):
            self.visible.append(data)


JSON_OBJECT = re.compile(r"""\{\s*["'][^"']*["']\s*:""")  # `{"key":` as json.dumps writes it


def dump_dom(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    done = chromium(page, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console_lines(done.stderr)


def test_presets_report_renders_without_console_errors(qwen, smollm2, tmp_path):
    paths = [CORPUS / "pcd-presets" / f"{name}.json" for name in PRESETS]
    if not all(p.exists() for p in paths):
        pytest.skip(NO_CORPUS)
    run = lint([str(p) for p in paths], [qwen, smollm2])
    page = tmp_path / "report.html"
    page.write_text(render(run), encoding="utf-8")

    out = REPO / "out"
    out.mkdir(exist_ok=True)
    for name, size in (("report-presets.png", "1280,2400"), ("report-first-screen.png", "1280,900")):
        shot = tmp_path / name
        done = chromium(page, tmp_path, f"--window-size={size}", f"--screenshot={shot}")
        assert done.returncode == 0, done.stderr[-2000:]
        assert console_lines(done.stderr) == []
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
        shutil.copyfile(shot, out / name)

    dom, console = dump_dom(page, tmp_path)
    assert console == []
    scan = DomScan()
    scan.feed(dom)
    cards = [attrs for tag, attrs in scan.tags if tag == "article"]
    # one card per field (and tokenizer); file-level findings are listed per file
    assert len(cards) == len({(f.path, f.site_pointer, f.tokenizer) for f in run.findings if f.field})
    for finding in run.findings:
        assert str(escape(finding.field)) in dom
    # the first card a reviewer sees is an error, and it is open
    assert any(f.severity == "error" for f in run.findings)
    assert cards[0]["data-severity"] == "error"
    first = [tag for tag in scan.tags if tag[0] in ("article", "details")]
    assert first[1][0] == "details" and "open" in first[1][1]
    # cards come worst first in each file; info cards are folded behind the toggle
    visible = " ".join(scan.visible)
    assert not JSON_OBJECT.search(visible), JSON_OBJECT.search(visible)
    assert dom.count("verification not run") == 1
    assert "PCD passes vs naive passes per file" in dom  # the cost chart, not a JSON blob
    wrong = {(f.path, f.site_pointer) for f in run.findings if f.severity == "error" and f.field}
    sites = sum(len(r.model.sites) for r in run.files)
    assert f"{len(wrong)} of {sites} fields will be decided wrongly by first-token scoring" in dom


HOSTILE = [
    "<script>document.title='pwned-script';document.body.setAttribute('data-pwned','script')</script>",
    "\"><img src=x onerror=\"document.title='pwned-img';document.body.setAttribute('data-pwned','img')\">",
    "javascript:document.body.setAttribute('data-pwned','js')",
    "'><svg onload=\"document.body.setAttribute('data-pwned','svg')\">",
]


def test_hostile_schema_runs_no_script_and_shows_text_literally(qwen, tmp_path):
    import json

    schema = {
        "type": "object",
        "properties": {
            "<i onmouseover=alert(1)>field</i>": {
                "description": "<script>console.error('pwned')</script>",
                "enum": HOSTILE,
            }
        },
    }
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
    assert "img" not in tags
    assert all(a.get("data-pcdlint") in ("bucket", "cost") for t, a in scan.tags if t == "svg")  # ours only
    assert [tag for tag, _ in scan.tags].count("script") == 1  # the report's own filter script
    assert not [a for _, a in scan.tags if any(k.startswith("on") for k in a)]
    assert not [a for _, a in scan.tags if str(a.get("href", "")).startswith("javascript:")]
    for option in HOSTILE:  # shown literally (the DOM serialiser escapes <, > and & in text)
        literal = option.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert literal in dom, option
