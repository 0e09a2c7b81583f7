"""verify's progress bars on a real pseudo-terminal without a size (what `script`, `docker run -t`
or a CI console gives): tqdm hid every bar as below a 0-line screen, so a long verify printed
nothing until it ended."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from support import REPO

CODE = """
from auditor.decoder.progress import Progress
progress = Progress(None)
assert progress.enabled
with progress.stage("prefill", 4, "tok") as tick:
    tick(4)
with progress.stage("suffix pass"):
    pass
"""


def test_bars_show_on_a_terminal_without_a_size():
    pytest.importorskip("tqdm")
    master, slave = pty.openpty()  # 0 rows, 0 columns
    try:
        done = subprocess.run(
            [sys.executable, "-c", CODE],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=REPO,
            timeout=120,
            check=False,
        )
    finally:
        os.close(slave)
    written = b""
    try:
        while chunk := os.read(master, 65536):
            written += chunk
    except OSError:  # EIO: the other side is closed
        pass
    finally:
        os.close(master)
    text = written.decode("utf-8", "replace")
    assert done.returncode == 0, text
    assert "prefill: 100%" in text and "4/4 tok" in text, text
    assert "suffix pass: 00:00" in text, text


def test_no_bars_when_not_a_terminal(tmp_path):
    from auditor.decoder.progress import Progress

    with open(tmp_path / "log", "w") as stream:
        progress = Progress(None, stream=stream)
        with progress.stage("prefill", 4, "tok") as tick:
            tick(4)
    assert not progress.enabled and (tmp_path / "log").read_text() == ""
