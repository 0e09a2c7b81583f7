"""`suggest --write` / `--in-place` keep what they do not change (issue 36): only the renamed
option texts are written, escaped so that the file still parses (U+2028, U+2029 and NEL in a
description or an option), a UTF-8 BOM is kept; `--in-place` renames a temp file over the
input keeping its mode and owner, writes a hard-linked file in place, and the next run removes
a leftover `.NAME.pcdlint-tmp`; the fixed copy and its legend are checked together before
either is written. Real Qwen2.5 tokenizer throughout."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest
import yaml
from click.testing import CliRunner
from ruamel.yaml import YAML

from auditor.cli.main import cli
from auditor.linter.suggest import _scalar

CODES = ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]
FIXED = ["live", "meat", "fish"]
HOURS = ["1_HOUR", "4_HOURS", "12_HOURS", "24_HOURS"]  # only letter slots fix these
BREAKS = "one\u2028two\u2029three\x85four"


def _invoke(*args):
    return CliRunner().invoke(cli, list(map(str, args)))


def _json_schema(enum=CODES) -> str:
    return (
        json.dumps(
            {
                "type": "object",
                "properties": {
                    "note": {"type": "string", "description": BREAKS},
                    "category": {"description": BREAKS, "enum": enum},
                },
            },
            ensure_ascii=False,
            indent=2,
        )
        + "\n"
    )


YAML_SCHEMA = (
    f'# kept comment\ntype: object\nproperties:\n  note:\n    description: "{BREAKS}"\r\n'
    f'  category:\n    description: "{BREAKS}"\n    enum: [{", ".join(CODES)}]\n'
)


@pytest.mark.parametrize("name", ["s.json", "s.yaml"])
@pytest.mark.parametrize("bom", [False, True])
def test_write_changes_only_the_option_texts_and_the_file_still_parses(tmp_path, name, bom):
    text = _json_schema() if name.endswith(".json") else YAML_SCHEMA
    source = tmp_path / name
    source.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    before = source.read_bytes()
    fixed = tmp_path / f"fixed-{name}"
    done = _invoke("suggest", source, "--write", fixed)
    assert done.exit_code == 0, done.output
    assert source.read_bytes() == before
    written = fixed.read_bytes()
    assert written.startswith(b"\xef\xbb\xbf") == bom
    body = written.decode("utf-8-sig")
    if name.endswith(".json"):
        document = json.loads(body)
        expected = text.replace(json.dumps(CODES)[1:-1].replace('", "', '",\n        "'), "")
        assert body.replace(json.dumps(FIXED)[1:-1].replace('", "', '",\n        "'), "") == expected
    else:
        document = yaml.safe_load(body)
        assert YAML(typ="rt").load(body)["properties"]["category"]["enum"] == FIXED
        assert body == text.replace(", ".join(CODES), ", ".join(FIXED))  # comment, \r\n kept
    assert document["properties"]["category"]["enum"] == FIXED
    original = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
    assert document["properties"]["note"] == original["properties"]["note"]  # read as before


@pytest.mark.parametrize("yaml_file", [False, True])
def test_a_renamed_option_with_line_separators_is_escaped(yaml_file):
    written = _scalar("a\u2028b\u2029c\x85d", '"x"', yaml_file)
    assert "\u2028" not in written and "\u2029" not in written and "\x85" not in written
    assert json.loads(written) == yaml.safe_load(written) == "a\u2028b\u2029c\x85d"


def test_in_place_keeps_mode_and_owner_and_leaves_no_temp(tmp_path):
    source = tmp_path / "s.json"
    source.write_text(_json_schema(), encoding="utf-8")
    os.chmod(source, 0o640)
    owner = (os.stat(source).st_uid, os.stat(source).st_gid)
    if os.geteuid() == 0:
        owner = (4321, 4322)
        os.chown(source, *owner)
    done = _invoke("suggest", source, "--in-place")
    assert done.exit_code == 0, done.output
    info = os.stat(source)
    assert stat.S_IMODE(info.st_mode) == 0o640 and (info.st_uid, info.st_gid) == owner
    assert json.loads(source.read_text(encoding="utf-8"))["properties"]["category"]["enum"] == FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_in_place_writes_a_hard_linked_file_through_every_name(tmp_path):
    source = tmp_path / "s.json"
    source.write_text(_json_schema(), encoding="utf-8")
    other = tmp_path / "other-name.json"
    os.link(source, other)
    inode = os.stat(source).st_ino
    done = _invoke("suggest", source, "--in-place")
    assert done.exit_code == 0, done.output
    assert os.stat(source).st_ino == inode == os.stat(other).st_ino
    assert json.loads(other.read_text(encoding="utf-8"))["properties"]["category"]["enum"] == FIXED


def test_next_run_removes_a_leftover_temp_file(tmp_path):
    source = tmp_path / "s.json"
    source.write_text(_json_schema(), encoding="utf-8")
    leftover = tmp_path / ".s.json.pcdlint-tmp"
    leftover.write_text("half a file", encoding="utf-8")
    planted = tmp_path / ".other.json.pcdlint-tmp"
    planted.symlink_to(source)  # not ours to remove (a link, another name)
    done = _invoke("suggest", source)
    assert done.exit_code == 0, done.output
    assert not leftover.exists() and planted.is_symlink()


def test_killed_in_place_run_leaves_nothing_the_next_run_keeps(tmp_path):
    """kill -9 in the middle of --in-place: the input is the old or the new file, never half;
    whatever temp file was left goes with the next run."""
    source = tmp_path / "s.json"
    source.write_text(_json_schema(), encoding="utf-8")
    before = source.read_bytes()
    child = subprocess.Popen(
        [sys.executable, "-m", "auditor", "suggest", str(source), "--in-place"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    child.send_signal(signal.SIGKILL)
    child.wait(30)
    assert json.loads(source.read_text(encoding="utf-8"))["properties"]["category"]["enum"] in (CODES, FIXED)
    (tmp_path / ".s.json.pcdlint-tmp").write_bytes(before[:40])  # as if killed mid-write
    done = _invoke("suggest", source, "--in-place")
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_fixed_copy_and_legend_are_checked_together_before_either_is_written(tmp_path):
    """The legend of `--write x.json` is `x.slots.json`: when that is the input, nothing at all
    is written (the fixed copy used to be written before the legend was refused)."""
    source = tmp_path / "x.slots.json"
    source.write_text(
        json.dumps({"type": "object", "properties": {"eta": {"enum": HOURS}}}), encoding="utf-8"
    )
    before = source.read_bytes()
    done = _invoke("suggest", source, "--write", tmp_path / "x.json")
    assert done.exit_code == 2
    assert "refusing to overwrite an input file" in done.output and done.output.count("\n") == 1
    assert source.read_bytes() == before and not (tmp_path / "x.json").exists()
