"""The CLI contract: exit codes 0/1/2, one-line errors, formats, selection, rules and explain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.exitcodes import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE
from support import CORPUS, FIXTURES, NO_CORPUS, run_cli

BAD = {
    "type": "object",
    "properties": {
        "risk": {"enum": ["LOW", "MEDIUM", "HIGH"]},
        "code": {"enum": ["CAT_001", "CAT_002", "CAT_103"]},
    },
}
FINDING_LINE = re.compile(r"^    \d+:\d+ (PCD\d{3}) (error|warning|info): ")
HEADER_LINE = re.compile(r"^(\S+):(\d+):(\d+): (\S+)(?: \[([^\]]+)\])? ((?:PCD\d{3} \w+(?:, )?)+)$")
CLEAN = {"type": "object", "properties": {"sentiment": {"enum": ["positive", "negative"]}}}


def pcdlint(*args, cwd=None, input=None):
    """In-process: a subprocess proves nothing more here (test_python_m_auditor_is_a_real_process
    runs one)."""
    return run_cli(*args, cwd=cwd, input=input)


def test_python_m_auditor_is_a_real_process(write_schema):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "check", str(write_schema(BAD))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == EXIT_FINDINGS and " PCD001 " in done.stdout


def assert_no_traceback(result):
    assert "Traceback" not in result.stderr + result.stdout


def test_findings_exit_1_with_text_lines(write_schema):
    path = write_schema(BAD)
    result = pcdlint("check", path)
    assert result.returncode == EXIT_FINDINGS
    lines = result.stdout.splitlines()
    # one header per field, then its findings indented
    header = next(i for i, line in enumerate(lines) if HEADER_LINE.match(line))
    match = HEADER_LINE.match(lines[header])
    key_line = next(i for i, row in enumerate(path.read_text().splitlines(), 1) if '"code"' in row)
    assert (match.group(1), int(match.group(2)), match.group(4), match.group(5)) == (
        str(path),
        key_line,
        "code",
        "qwen2.5",
    )
    assert match.group(6).startswith("PCD001 error")
    collision = lines[header + 1]
    line_no = next(i for i, row in enumerate(path.read_text().splitlines(), 1) if '"CAT_001"' in row)
    assert FINDING_LINE.match(collision) and collision.startswith(f"    {line_no}:")
    assert (
        "PCD001 error: 3 options collapse into 2 first-token buckets after prefix 'CAT_': "
        "'CAT_001', 'CAT_002' share '0': 'CAT_001' always wins"
    ) in collision
    # risk's PCD002 is info under Qwen2.5 (every option has its own scored token): hidden
    assert not any("M + EDIUM" in line for line in lines)
    assert lines[-1] == f"1 field will be decided wrongly. Run pcdlint suggest {path} to see verified fixes."
    summary = next(line for line in lines if line.endswith("tokenizers: qwen2.5"))
    # code's PCD002 only restates its collision: folded into the PCD001 line (issue 32)
    assert summary.startswith("2 findings (1 error, ") and "PCD002 warning" not in result.stdout
    assert "1 info hidden" in summary
    shown = pcdlint("check", "--show-info", path).stdout.splitlines()
    assert any("PCD002 info: " in line and "M + EDIUM" in line for line in shown)
    assert sum(bool(FINDING_LINE.match(line)) for line in shown) == 2


def test_errors_first_and_statistics_and_exit_zero(write_schema):
    warn_only = {"properties": {"a": {"enum": ["Java", "JavaScript_x", "Kotlin"]}}}
    path = write_schema({"type": "object", "properties": {**warn_only["properties"], **BAD["properties"]}})
    lines = pcdlint("check", path).stdout.splitlines()
    severities = [
        HEADER_LINE.match(line).group(6).split(",")[0].split()[1] for line in lines if HEADER_LINE.match(line)
    ]
    assert severities == sorted(severities, key=["error", "warning", "info"].index), lines
    stats = pcdlint("check", "--statistics", "--select", "ALL", path)
    assert stats.returncode == EXIT_FINDINGS
    rows = [line.split() for line in stats.stdout.splitlines() if re.match(r"^\s+\d+\s+PCD\d{3}", line)]
    assert {row[1] for row in rows} >= {"PCD001", "PCD002"}
    assert not any(FINDING_LINE.match(line) for line in stats.stdout.splitlines())
    assert sum(int(row[0]) for row in rows) == int(stats.stdout.split(" findings")[0].split()[-1])
    assert pcdlint("check", "--exit-zero", path).returncode == EXIT_CLEAN
    assert pcdlint("check", "--exit-zero", path.parent / "missing.json").returncode == EXIT_USAGE


def test_clean_exit_0(write_schema):
    result = pcdlint("check", write_schema(CLEAN))
    assert result.returncode == EXIT_CLEAN, result.stdout + result.stderr
    assert result.stdout.splitlines()[-2].startswith("0 findings"), result.stdout
    assert result.stdout.splitlines()[-1] == "No field will be decided wrongly."


def test_fail_on_threshold(write_schema):
    # 'E' scores ELEVATED and also begins EXTREME: PCD002 stays a warning
    only_warning = {"properties": {"risk": {"enum": ["LOW", "ELEVATED", "EXTREME"]}}}
    path = write_schema(only_warning)
    assert pcdlint("check", path).returncode == EXIT_CLEAN  # a warning is below --fail-on error
    assert pcdlint("check", "--fail-on", "warning", path).returncode == EXIT_FINDINGS


def test_select_and_ignore_by_code_prefix_and_name(write_schema):
    path = write_schema(BAD)

    def codes(r):
        return {m.group(1) for m in map(FINDING_LINE.match, r.stdout.splitlines()) if m}

    assert codes(pcdlint("check", "--select", "PCD002", path)) == {"PCD002"}
    assert codes(pcdlint("check", "--ignore", "first-token-collision", path)) == {"PCD002"}
    # longest match wins: ignore the family, select one member back
    assert codes(pcdlint("check", "--ignore", "PCD00*", "--select", "PCD001", path)) == {"PCD001"}
    bad = pcdlint("check", "--select", "PCD777", path)
    assert bad.returncode == EXIT_USAGE and "matches no rule" in bad.stderr


def test_malformed_json_is_one_line_exit_2(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "enum": ["a", "b",]\n}\n', encoding="utf-8")
    result = pcdlint("check", path)
    assert result.returncode == EXIT_USAGE
    assert result.stderr.strip() == f"{path}:2:21: invalid JSON: Expecting value"
    assert_no_traceback(result)


def test_malformed_yaml_is_one_line_exit_2(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("schema:\n  risk: [a, b\n", encoding="utf-8")
    result = pcdlint("check", path)
    assert result.returncode == EXIT_USAGE
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(f"{path}:") and "invalid YAML" in result.stderr


def test_one_bad_file_among_many_others_still_linted(tmp_path, write_schema):
    good = write_schema(BAD, "good.json")
    missing = tmp_path / "missing.json"
    result = pcdlint("check", "--format", "json", missing, good)
    assert result.returncode == EXIT_USAGE
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["files"]] == [str(good)]
    assert report["summary"]["findings"] >= 2
    assert result.stderr.strip() == f"{missing}: cannot read file (No such file or directory)"


def test_unknown_tokenizer_exit_2(write_schema):
    result = pcdlint("check", "-t", "gpt-9", write_schema(CLEAN))
    assert result.returncode == EXIT_USAGE
    assert result.stderr.startswith("pcdlint: error: unknown tokenizer 'gpt-9'")
    assert len(result.stderr.strip().splitlines()) == 1


def test_hub_cache_miss_exit_2(write_schema, tmp_path):
    env_cache = {"HF_HUB_CACHE": str(tmp_path / "hf")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor",
            "check",
            "-t",
            "Qwen/Qwen2.5-1.5B-Instruct",
            str(write_schema(CLEAN)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env_cache, "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == EXIT_USAGE
    assert "not in the local Hugging Face cache" in result.stderr
    assert_no_traceback(result)


def test_output_file_never_overwrites_input(write_schema):
    path = write_schema(BAD)
    before = path.read_bytes()
    result = pcdlint("check", "--output", path, path)
    assert result.returncode == EXIT_USAGE and "refusing to overwrite an input" in result.stderr
    assert path.read_bytes() == before


def test_output_file_and_unknown_format(write_schema, tmp_path):
    path = write_schema(BAD)
    out = tmp_path / "out" / "report.json"
    assert pcdlint("check", "-f", "json", "-o", out, path).returncode == EXIT_FINDINGS
    assert json.loads(out.read_text())["summary"]["findings"] >= 2
    bad = pcdlint("check", "-f", "xml", path)
    assert bad.returncode == EXIT_USAGE and "unknown format 'xml'" in bad.stderr


def test_directories_walk_json_and_yaml():
    result = pcdlint("check", "-f", "json", FIXTURES / "schemas")
    files = sorted(Path(f["path"]).name for f in json.loads(result.stdout)["files"])
    assert files == sorted(
        p.name for p in (FIXTURES / "schemas").iterdir() if p.suffix in (".json", ".yaml", ".yml")
    )


def test_multiple_tokenizers_each_finding_names_its_own(write_schema):
    result = pcdlint("check", "-f", "json", "-t", "qwen2.5", "-t", "smollm2", write_schema(BAD))
    report = json.loads(result.stdout)
    assert [t["id"] for t in report["tokenizers"]] == ["qwen2.5", "smollm2"]
    assert {f["tokenizer"] for f in report["findings"]} == {"qwen2.5", "smollm2"}


def test_rules_and_explain():
    from auditor.linter.registry import load_rules

    listing = pcdlint("rules").stdout
    assert "PCD001  first-token-collision" in listing
    rows = {
        line.split()[0]: line.split()[3] for line in listing.splitlines() if re.match(r"^PCD\d{3}  ", line)
    }
    rules = load_rules()
    assert rows == {code: "default" if r.default else "opt-in" for code, r in rules.items()}
    assert {c for c, r in rules.items() if not r.default} >= {"PCD011", "PCD012"}
    assert {"PCD000", "PCD001", "PCD002", "PCD005", "PCD009", "PCD010", "PCD900"} <= {
        c for c, r in rules.items() if r.default
    }
    for code, rule in rules.items():  # every opt-in rule says why it is off
        if not rule.default:
            assert f"opt-in {code}: {rule.opt_in_reason}" in listing
    by_code = pcdlint("explain", "PCD001")
    by_name = pcdlint("explain", "first-token-collision")
    assert by_code.stdout == by_name.stdout
    assert by_code.stdout.startswith("# PCD001 first-token-collision")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in by_code.stdout
    unknown = pcdlint("explain", "PCD998")
    assert unknown.returncode == EXIT_USAGE and "unknown rule" in unknown.stderr
    assert pcdlint("explain", "internal-error").stdout.startswith("# PCD999 internal-error")


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("PCD01", "PCD001"),
        ("pcd0001", "PCD001"),
        ("PCD5", "PCD005"),
        ("first-token-colision", "first-token-collision"),
    ],
)
def test_explain_an_unknown_rule_says_which_one_was_meant(typed, meant):
    done = pcdlint("explain", typed)
    assert done.returncode == EXIT_USAGE and not done.stdout
    (line,) = done.stderr.strip().splitlines()
    assert f"unknown rule '{typed}'; did you mean {meant}?" in line, line
    assert "did you mean" not in pcdlint("explain", "zzzzzz").stderr


@pytest.mark.skipif(not (CORPUS / "pcd-presets").is_dir(), reason=NO_CORPUS)
def test_acceptance_high_cardinality_255():
    result = pcdlint("check", "-f", "json", CORPUS / "pcd-presets" / "high_cardinality_255.json")
    assert result.returncode == EXIT_FINDINGS
    report = json.loads(result.stdout)
    collisions = [f for f in report["findings"] if f["code"] == "PCD001"]
    assert [f["field"] for f in collisions] == ["customs_category"]
    buckets = collisions[0]["data"]["buckets"]
    assert [b["token"] for b in buckets] == ["0", "1", "2"]
    assert [b["size"] for b in buckets] == [100, 100, 55]
    # a plain gather + argmax returns the lowest index of each bucket
    assert [b["tie_winner"][:7] for b in buckets] == ["CAT_000", "CAT_100", "CAT_200"]
    assert all(b["tie_winner"] == b["options"][0] for b in buckets)
    # its PCD002 restates the collision: folded into the PCD001 finding, multi-token list kept
    collision = next(
        f for f in report["findings"] if f["code"] == "PCD001" and f["field"] == "customs_category"
    )
    assert [(f["code"], bool(f["data"]["multi_token_options"])) for f in collision["data"]["folded"]] == [
        ("PCD002", True)
    ]


@pytest.mark.slow  # a whole-corpus run
@pytest.mark.skipif(not (CORPUS / "pcd-presets").is_dir(), reason=NO_CORPUS)
def test_acceptance_presets_default_set_grouped_and_next_step():
    presets = CORPUS / "pcd-presets"
    result = pcdlint("check", presets)
    assert result.returncode == EXIT_FINDINGS
    lines = result.stdout.splitlines()
    assert not any(code in line for line in lines for code in ("PCD011", "PCD012"))
    headers = [HEADER_LINE.match(line) for line in lines if HEADER_LINE.match(line)]
    worst = [m.group(6).split(",")[0].split()[1] for m in headers]
    assert "error" in worst and worst == sorted(worst, key=["error", "warning", "info"].index)
    collisions = [line for line in lines if FINDING_LINE.match(line) and " PCD001 " in line]
    assert collisions and all(
        re.search(r"'[^']+', '[^']+'.* share '[^']+': '[^']+' always wins", line) for line in collisions
    )
    assert re.fullmatch(
        r"\d+ fields? will be decided wrongly\. Run pcdlint suggest FILE to see "
        r"verified fixes\.",
        lines[-1],
    ), lines[-1]
    everything = pcdlint("check", "--show-info", "--select", "ALL", presets).stdout
    assert "PCD011 info" in everything and "PCD012 info" in everything
    report = json.loads(pcdlint("check", "-f", "json", "--select", "ALL", presets).stdout)
    shown = [line for line in everything.splitlines() if FINDING_LINE.match(line)]
    assert len(shown) == len(report["findings"])  # nothing lost, only hidden by default


def test_help_texts_name_what_the_options_take():
    """The help a user reads is what the code accepts: every named split regex, and the
    client options of verify said for the systemone backend that uses them (issue 50)."""
    from auditor.tokenizers.convert import NAMED_PATTERNS

    check_help = " ".join(pcdlint("check", "--help").stdout.split())
    pattern_help = check_help.split("--tiktoken-pattern", 1)[1].split(" --", 1)[0]
    for name in NAMED_PATTERNS:
        assert name in pattern_help, (name, pattern_help)
    verify_help = " ".join(pcdlint("verify", "--help").stdout.split())
    assert "verify` only" not in verify_help
    eval_help = " ".join(pcdlint("eval", "--help").stdout.split())
    assert "systemone: decision requests" in eval_help.split("--backend", 1)[1]  # eval takes it too
    for option in ("--timeout", "--retries", "--concurrency"):
        text = verify_help.split(f"{option} ", 1)[1].split(" --", 1)[0]
        assert "systemone" in text, (option, text)
