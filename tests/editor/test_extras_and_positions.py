"""The editor commands without their extras (one line naming the extra, exit 2), a bad --root,
and the position conversion the language server uses (code points → UTF-16 / UTF-32)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from auditor.editor.workspace import TextLines

HIDE = "import sys; sys.modules[{module!r}] = None; sys.argv = ['pcdlint', {command!r}]; from auditor.cli.main import main; main()"


@pytest.mark.parametrize(
    ("command", "module", "extra"), [("server", "pygls", "editor"), ("mcp", "mcp", "mcp")]
)
def test_a_missing_extra_is_one_line(command, module, extra):
    done = subprocess.run(
        [sys.executable, "-c", HIDE.format(module=module, command=command)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"(pcdlint's {extra} extra)" in lines[0] and module in lines[0], done.stderr


def test_mcp_root_must_be_a_folder(tmp_path):
    from support import run_cli

    done = run_cli("mcp", "--root", str(tmp_path / "missing"))
    assert done.returncode == 2 and "--root" in done.stderr and "Traceback" not in done.stderr


def test_positions_count_utf16_units_and_line_ends():
    text = '{"a": ["\U0001f600x", "y"]}\n{"b": 1}'
    lines = TextLines(text, yaml=False)
    # the option "y" at code-point column 15 (1-based): 14 code points before it, one astral
    assert lines.to_client(1, 15) == (0, 15)
    assert TextLines(text, yaml=False, encoding="utf-32").to_client(1, 15) == (0, 14)
    assert lines.from_client(0, 15) == (1, 15)
    assert lines.to_client(2, 3) == (1, 2)
    # YAML counts a bare CR as a line end; JSON does not (pcdlint's spans do the same)
    assert TextLines("a: 1\rb: 2", yaml=True).to_client(2, 1) == (1, 0)
    assert TextLines('{"a":\r1}', yaml=False).to_client(1, 7) == (0, 6)
