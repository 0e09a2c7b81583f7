"""The composite GitHub Action: action.yml's shape, and its lint step (action/run.sh) run locally
the way the runner runs it, with GITHUB_ACTIONS, GITHUB_STEP_SUMMARY and GITHUB_OUTPUT set."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from auditor.reporting.action_summary import MAX_ROWS, render
from support import REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
BAD = '{"type": "object", "properties": {"category": {"enum": ["CAT_000_Live", "CAT_001_Meat", "CAT_102_Fish"]}}}\n'
CLEAN = '{"type": "object", "properties": {"risk": {"enum": ["low", "high"]}}}\n'


def _sarif_available() -> bool:
    from auditor.reporting import formatters

    return "sarif" in formatters()


needs_sarif = pytest.mark.skipif(
    not _sarif_available(),
    reason="the action runs `pcdlint check --format github --output-sarif`; "
    "the sarif/github formatters (reports issue) are not in this branch yet",
)


def _step(uses_prefix: str | None = None, step_id: str | None = None, name: str | None = None) -> dict:
    for step in STEPS:
        if uses_prefix and step.get("uses", "").startswith(uses_prefix):
            return step
        if step_id and step.get("id") == step_id:
            return step
        if name and step.get("name") == name:
            return step
    raise AssertionError(f"no step {uses_prefix or step_id or name}")


def test_inputs_and_defaults():
    inputs = ACTION["inputs"]
    assert {"paths", "tokenizers", "fail-on", "sarif-file", "upload-sarif", "category"} <= set(inputs)
    assert inputs["upload-sarif"]["default"] == "true"
    assert inputs["fail-on"]["default"] == "error"
    assert all(spec.get("description") for spec in inputs.values())
    assert ACTION["runs"]["using"] == "composite"


def test_no_expression_inside_run_scripts():
    """Inputs reach scripts through env:, never `${{ }}` in run: (script injection)."""
    scripts = [step["run"] for step in STEPS if "run" in step]
    assert scripts
    assert not any("${{" in script for script in scripts)


def test_lint_step_passes_every_input_through_env():
    step = _step(step_id="pcdlint")
    assert step["run"].strip() == 'bash "$GITHUB_ACTION_PATH/action/run.sh"'
    assert (REPO / "action" / "run.sh").is_file()
    env = step["env"]
    for name, value in {
        "PCDLINT_PATHS": "paths",
        "PCDLINT_TOKENIZERS": "tokenizers",
        "PCDLINT_FAIL_ON": "fail-on",
        "PCDLINT_MAX_WARNINGS": "max-warnings",
        "PCDLINT_SARIF_FILE": "sarif-file",
    }.items():
        assert env[name] == f"${{{{ inputs.{value} }}}}"
    install = next(s for s in STEPS if "pip install" in s.get("run", ""))
    assert install["env"]["PCDLINT_SOURCE"] == "${{ github.action_path }}"


def test_caches_converted_tokenizers_and_hf_home():
    cached = _step("actions/cache@")["with"]["path"].splitlines()
    env = _step(step_id="pcdlint")["env"]
    assert env["PCDLINT_CACHE_DIR"] in cached and env["HF_HOME"] in cached


def test_the_cache_is_saved_anew_each_run_and_restored_from_the_latest():
    """A saved cache never changes: with one key per tokenizer set, the analysis and encoding
    entries of the first run would be all that later runs restore. One key per run, restored
    from the latest of the same set."""
    cache = _step("actions/cache@")["with"]
    key = cache["key"]
    assert key.endswith("-${{ github.run_id }}")
    restore = cache["restore-keys"].splitlines()
    assert restore[0] == key.removesuffix("${{ github.run_id }}")
    assert all(key.startswith(prefix) for prefix in restore)
    prune = _step(step_id=None, name="Prune the cache")
    assert prune["env"]["PCDLINT_CACHE_DIR"] == _step(step_id="pcdlint")["env"]["PCDLINT_CACHE_DIR"]
    assert STEPS.index(_step("actions/cache@")) < STEPS.index(prune) < STEPS.index(_step(step_id="pcdlint"))


def test_pruning_drops_old_cache_entries_only(tmp_path):
    """action/prune-cache.sh on a real cache directory: the analysis and encoding entries a
    real run wrote stay; the same entries made 40 days old go (their folders too); converted
    tokenizers and rank tables stay whatever their age; a run afterwards writes them again."""
    cache = tmp_path / "cache"
    schema = tmp_path / "schema.json"
    schema.write_text(BAD, encoding="utf-8")
    env = dict(os.environ, PCDLINT_CACHE_DIR=str(cache))
    lint = [sys.executable, "-m", "auditor", "check", "--format", "json", str(schema)]
    first = subprocess.run(lint, capture_output=True, timeout=300, env=env)
    assert first.returncode == 1, first.stderr
    entries = sorted(p for p in (cache / "analysis").rglob("*") if p.is_file())
    entries += sorted(p for p in (cache / "encodings").rglob("*") if p.is_file())
    tables = sorted(p for p in cache.iterdir() if p.is_file())
    assert len(entries) == 2 and tables

    def prune() -> None:
        subprocess.run(
            ["bash", str(REPO / "action" / "prune-cache.sh")],
            check=True,
            timeout=60,
            env={**env, "PCDLINT_PYTHON": sys.executable},
        )

    prune()
    assert all(p.is_file() for p in entries + tables)
    old = time.time() - 40 * 86400
    for path in entries + tables:
        os.utime(path, (old, old))
    prune()
    assert not any(p.exists() for p in entries)
    assert not any((cache / "encodings").iterdir()), "the emptied folders go too"
    assert all(p.is_file() for p in tables)
    again = subprocess.run(lint, capture_output=True, timeout=300, env=env)
    assert again.returncode == 1 and again.stdout == first.stdout
    assert all(p.is_file() for p in entries)


def test_uploads_sarif_written_by_the_lint_step():
    upload = _step("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.pcdlint.outputs.sarif-file }}"
    assert upload["with"]["category"] == "${{ inputs.category }}"
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    run_script = (REPO / "action" / "run.sh").read_text(encoding="utf-8")
    assert '--output-sarif "$sarif_file"' in run_script and "--format github" in run_script


def _outputs(text: str) -> dict[str, list[str]]:
    """GITHUB_OUTPUT read as the runner reads it: `name=value` lines and `name<<DELIMITER`
    blocks (the value is every line up to the delimiter line)."""
    found: dict[str, list[str]] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for body in lines:
                if body == delimiter:
                    break
                value.append(body)
            else:
                raise AssertionError(f"unterminated output {name}")
            found.setdefault(name, []).append("\n".join(value))
        elif line:
            name, value = line.split("=", 1)
            found.setdefault(name, []).append(value)
    return found


def _run_step(
    tmp_path: Path, files: dict[str, str] | None = None, **inputs: str
) -> tuple[subprocess.CompletedProcess, str, str]:
    for name, text in (files or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "bad.json").write_text(BAD, encoding="utf-8")
    (tmp_path / "clean.json").write_text(CLEAN, encoding="utf-8")
    (tmp_path / ".pcdlint.toml").write_text("", encoding="utf-8")
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = dict(
        os.environ,
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_OUTPUT=str(outputs),
        HF_HUB_OFFLINE="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        PCDLINT_PYTHON=sys.executable,
        **inputs,
    )
    done = subprocess.run(
        ["bash", str(REPO / "action" / "run.sh")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    read = lambda p: p.read_text(encoding="utf-8") if p.exists() else ""  # noqa: E731
    return done, read(summary), read(outputs)


@needs_sarif
def test_step_annotates_and_summarises_findings(tmp_path):
    done, summary, outputs = _run_step(
        tmp_path, PCDLINT_PATHS="bad.json clean.json", PCDLINT_SARIF_FILE="out/pcdlint.sarif"
    )
    assert done.returncode == 1, done.stderr
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any("bad.json" in line and "PCD001" in line for line in annotations), done.stdout
    assert (tmp_path / "out" / "pcdlint.sarif").is_file()
    assert _outputs(outputs) == {"exit-code": ["1"], "sarif-file": ["out/pcdlint.sarif"]}
    assert "failed (findings at or above `error`)" in summary
    assert "### 1 field with errors" in summary, summary
    assert re.search(
        r"^\| \w+ \| `bad\.json:1:\d+` \| qwen2\.5 \| PCD001 error[^|]* \| [^|]*share", summary, re.MULTILINE
    ), summary
    assert "clean.json" not in summary


@needs_sarif
def test_step_passes_on_clean_files(tmp_path):
    done, summary, outputs = _run_step(
        tmp_path, PCDLINT_PATHS="clean.json", PCDLINT_TOKENIZERS="qwen2.5, smollm2"
    )
    assert done.returncode == 0, done.stderr
    assert "::error" not in done.stdout
    assert _outputs(outputs)["exit-code"] == ["0"]
    assert "**0 findings** — passed" in summary


WARNINGS = '{"type": "object", "properties": {"a": {"enum": ["Yes", "yes", "No"]}}}\n'


@needs_sarif
@pytest.mark.parametrize(("limit", "code"), [("", 0), ("1", 0), ("0", 1)])
def test_step_max_warnings(tmp_path, limit, code):
    done, summary, outputs = _run_step(
        tmp_path, {"warn.json": WARNINGS}, PCDLINT_PATHS="warn.json", PCDLINT_MAX_WARNINGS=limit
    )
    assert done.returncode == code, done.stderr
    assert _outputs(outputs)["exit-code"] == [str(code)]
    if code:
        assert "failed (1 warning, more than max-warnings 0)" in summary, summary
    else:
        assert "— passed" in summary


@needs_sarif
def test_step_reports_usage_error(tmp_path):
    done, summary, outputs = _run_step(
        tmp_path, PCDLINT_PATHS="clean.json", PCDLINT_TOKENIZERS="no-such-tokenizer"
    )
    assert done.returncode == 2
    assert _outputs(outputs) == {"exit-code": ["2"]}
    assert "did not produce a report (exit code 2)" in summary


def test_inputs_are_not_evaluated_by_the_shell(tmp_path):
    done, _, outputs = _run_step(
        tmp_path,
        PCDLINT_PATHS="$(touch pwned) `touch pwned2` *.json",
        PCDLINT_TOKENIZERS="qwen2.5;touch pwned3",
    )
    assert done.returncode == 2
    assert not any((tmp_path / name).exists() for name in ("pwned", "pwned2", "pwned3"))
    assert _outputs(outputs)["exit-code"] == ["2"]


def test_summary_escapes_and_caps_rows():
    results = [
        {
            "ruleId": "PCD002",
            "level": "warning",
            "message": {"text": f"a | b\nc {i}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": "s.json"},
                        "region": {"startLine": i + 1, "startColumn": 3},
                    }
                }
            ],
            "properties": {"tokenizer": "qwen2.5", "field": f"f{i}", "fieldPointer": f"/properties/f{i}"},
        }
        for i in range(MAX_ROWS + 5)
    ]
    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "pcdlint", "rules": [{"id": "PCD002", "name": "multi-token-option"}]}
                },
                "results": results,
            }
        ],
    }
    text = render(sarif, exit_code=0, fail_on="error")
    assert f"**{MAX_ROWS + 5} findings** ({MAX_ROWS + 5} warning) — passed" in text
    assert "| PCD002 multi-token-option | 55 |" in text
    assert "No field has an error." in text
    assert f"{MAX_ROWS + 5} fields with warnings" in text
    assert "| f0 | `s.json:1:3` | qwen2.5 | PCD002 warning | a \\| b c 0 |" in text
    assert text.count("| PCD002 warning |") == MAX_ROWS
    assert "… and 5 more" in text


def test_summary_one_row_per_field_with_errors_first():
    def result(level, code, field, line, text):
        return {
            "ruleId": code,
            "level": level,
            "message": {"text": f"{field}: {text}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": "s.json"},
                        "region": {"startLine": line, "startColumn": 9},
                    }
                }
            ],
            "properties": {"tokenizer": "qwen2.5", "field": field, "fieldPointer": f"/properties/{field}"},
        }

    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "pcdlint", "rules": []}},
                "results": [
                    result("warning", "PCD002", "queue", 4, "multi"),
                    result("error", "PCD001", "queue", 4, "collide"),
                    result("warning", "PCD002", "mood", 9, "prefix"),
                ],
            }
        ],
    }
    text = render(sarif, exit_code=1)
    errors = text[text.index("### 1 field with errors") : text.index("<details>")]
    assert errors.count("| queue |") == 1 and "| PCD001 error, PCD002 warning | collide |" in errors
    assert "mood" not in errors and "| mood |" in text[text.index("<details>") :]


def test_install_and_summary_never_import_from_the_workspace():
    install = next(s for s in STEPS if "pip install" in s.get("run", ""))
    assert install["run"].startswith("python -I -m pip install")
    run_script = (REPO / "action" / "run.sh").read_text(encoding="utf-8")
    assert '"$python" -I -m auditor.reporting.action_summary' in run_script
    assert 'pcdlint "${args[@]}" -- "${paths[@]}"' in run_script
    assert "rm -f" not in run_script  # nothing is deleted before pcdlint checks its outputs


PLANTED = "import pathlib\npathlib.Path(__file__).resolve().parent.joinpath('PWNED').write_text('x')\n"


@needs_sarif
def test_step_runs_nothing_from_the_workspace(tmp_path):
    """A repository holding modules named like the standard library, click or auditor itself
    (each writes a marker when imported) is linted, never imported."""
    planted = dict.fromkeys(
        (
            "argparse.py",
            "click.py",
            "csv.py",
            "fnmatch.py",
            "orjson.py",
            "tomllib.py",
            "json.py",
            "re.py",
            "auditor/__init__.py",
            "auditor/reporting/__init__.py",
        ),
        PLANTED,
    )
    done, summary, _ = _run_step(tmp_path, files=planted, PCDLINT_PATHS="bad.json")
    assert done.returncode == 1, done.stderr
    assert "### 1 field with errors" in summary
    assert not list(tmp_path.rglob("PWNED"))


@needs_sarif
def test_inputs_split_on_newlines_too(tmp_path):
    """A multi-line `paths` or `tokenizers` input: every line counts (not only the first)."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    done, summary, _ = _run_step(tmp_path / "a", PCDLINT_PATHS="clean.json\n  bad.json\n")
    assert done.returncode == 1, done.stderr
    assert "bad.json" in summary
    done, _, outputs = _run_step(
        tmp_path / "b", PCDLINT_PATHS="clean.json", PCDLINT_TOKENIZERS="qwen2.5\nno-such-tokenizer"
    )
    assert done.returncode == 2 and "no-such-tokenizer" in done.stderr
    assert _outputs(outputs)["exit-code"] == ["2"]


@needs_sarif
def test_sarif_file_with_a_newline_cannot_inject_an_output(tmp_path):
    done, _, outputs = _run_step(
        tmp_path, PCDLINT_PATHS="bad.json", PCDLINT_SARIF_FILE="x.sarif\nexit-code=0"
    )
    assert done.returncode == 1, done.stderr
    assert _outputs(outputs) == {"exit-code": ["1"], "sarif-file": ["x.sarif\nexit-code=0"]}


@needs_sarif
@pytest.mark.parametrize("paths", ["bad.json", "."])
def test_sarif_file_equal_to_a_linted_file_is_refused_and_kept(tmp_path, paths):
    done, summary, outputs = _run_step(tmp_path, PCDLINT_PATHS=paths, PCDLINT_SARIF_FILE="bad.json")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "refusing to overwrite an input file" in done.stderr
    assert done.stdout == ""  # refused before any report, annotations included, is written
    assert (tmp_path / "bad.json").read_text(encoding="utf-8") == BAD
    assert _outputs(outputs) == {"exit-code": ["2"]}
    assert "did not produce a report (exit code 2)" in summary


def test_stale_sarif_is_not_reported_after_a_usage_error(tmp_path):
    (tmp_path / "old.sarif").write_text('{"version": "2.1.0", "runs": []}', encoding="utf-8")
    done, summary, outputs = _run_step(
        tmp_path,
        PCDLINT_PATHS="clean.json",
        PCDLINT_SARIF_FILE="old.sarif",
        PCDLINT_TOKENIZERS="no-such-tokenizer",
    )
    assert done.returncode == 2
    assert _outputs(outputs) == {"exit-code": ["2"]}
    assert "did not produce a report" in summary


def test_cache_key_is_built_from_sanitised_tokenizers(tmp_path):
    key_step = _step(step_id="cache-key")
    assert key_step["env"]["PCDLINT_TOKENIZERS"] == "${{ inputs.tokenizers }}"
    cache_key = _step("actions/cache@")["with"]["key"]
    assert "inputs." not in cache_key and "${{ steps.cache-key.outputs.key }}" in cache_key

    def key(tokenizers: str) -> str:
        outputs = tmp_path / "out.txt"
        outputs.unlink(missing_ok=True)
        subprocess.run(
            ["bash", str(REPO / "action" / "cache-key.sh")],
            check=True,
            timeout=60,
            env=dict(os.environ, PCDLINT_TOKENIZERS=tokenizers, GITHUB_OUTPUT=str(outputs)),
        )
        return _outputs(outputs.read_text(encoding="utf-8"))["key"][0]

    assert key("qwen2.5,smollm2") == "qwen2.5-smollm2"
    assert key("qwen2.5, smollm2\n/models/tok.json") == "qwen2.5-smollm2-_models_tok.json"
    hostile = key("a,b\nc*d $(x) \u00e9" + "z" * 600)
    assert re.fullmatch(r"[A-Za-z0-9._-]{1,200}", hostile), hostile
    assert key(" , ") == "none"


@pytest.mark.parametrize(
    ("event", "setting", "enabled"),
    [
        ("push", "auto", "true"),
        ("pull_request", "auto", "true"),
        ("merge_group", "auto", "true"),
        ("pull_request_target", "auto", "false"),
        ("workflow_run", "auto", "false"),
        ("issue_comment", "auto", "false"),
        ("pull_request_target", "true", "true"),
        ("push", "false", "false"),
    ],
)
def test_the_cache_is_used_only_where_its_scope_is_trusted(tmp_path, event, setting, enabled):
    """Issue 49: a run that holds the base branch's cache scope while it works on a pull
    request's files (pull_request_target, workflow_run, comments) neither restores nor saves
    a cache under `cache: auto`: what it saved, every run of the base branch would restore."""
    cache_step = _step("actions/cache@")
    assert cache_step["if"] == "${{ steps.cache-key.outputs.enabled == 'true' }}"
    env = _step(step_id="cache-key")["env"]
    assert (
        env["PCDLINT_CACHE"] == "${{ inputs.cache }}" and env["PCDLINT_EVENT"] == "${{ github.event_name }}"
    )
    assert ACTION["inputs"]["cache"]["default"] == "auto"
    outputs = tmp_path / "out.txt"
    subprocess.run(
        ["bash", str(REPO / "action" / "cache-key.sh")],
        check=True,
        timeout=60,
        env=dict(
            os.environ,
            PCDLINT_TOKENIZERS="qwen2.5",
            PCDLINT_EVENT=event,
            PCDLINT_CACHE=setting,
            GITHUB_OUTPUT=str(outputs),
        ),
    )
    assert _outputs(outputs.read_text(encoding="utf-8"))["enabled"] == [enabled]


def _prune(cache: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(REPO / "action" / "prune-cache.sh")],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PCDLINT_CACHE_DIR=str(cache), PCDLINT_PYTHON=sys.executable, **env),
    )


@needs_sarif
def test_a_poisoned_cache_leaves_the_gate_as_a_clean_one(tmp_path):
    """Issue 49: the Action's restored cache, poisoned (tampered rank tables; FIFOs in place of
    entries, which hung the gate; links to /dev/zero and out of the cache; an analysis entry
    dated ahead whose sites were dropped and re-checksummed, which would pass the gate): the
    prune step and the lint step exit as with a clean cache, with the same annotations."""
    import hashlib
    import json
    import shutil

    clean_cache = tmp_path / "clean-cache"
    clean, _, _ = _run_step(tmp_path, PCDLINT_PATHS="bad.json clean.json", PCDLINT_CACHE_DIR=str(clean_cache))
    assert clean.returncode == 1, clean.stderr
    cache = tmp_path / "cache"
    shutil.copytree(clean_cache, cache)
    (tables,) = cache.glob("tables-v*.bin")
    header, payload = tables.read_bytes().split(b"\n", 1)
    line, blob = payload.split(b"\n", 1)
    tokens = blob.split(b"\0")
    at = tokens.index(b"CAT")  # (the schema's prefix: its token and the next one swapped)
    tokens[at], tokens[at + 1] = tokens[at + 1], tokens[at]
    tables.write_bytes(header + b"\n" + line + b"\n" + b"\0".join(tokens))
    for entry in [next(cache.glob("analysis/*.json")), next(cache.glob("encodings/*/*.json"))]:
        entry.unlink()
        os.mkfifo(entry)
    os.mkfifo(tmp_path / "outside.fifo")
    (cache / "sha256" / "planted.txt").symlink_to(tmp_path / "outside.fifo")
    (cache / "analysis" / "zero.json").symlink_to("/dev/zero")
    # an entry for bad.json's bytes with no site, checksum made to match, dated a day ahead
    (entry,) = [e for e in clean_cache.glob("analysis/*.json") if b"category" in e.read_bytes()]
    head, body = entry.read_bytes().split(b"\n", 1)
    data = json.loads(body)
    data["sites"] = []
    body = json.dumps(data).encode()
    fields = json.loads(head)
    fields.update(bytes=len(body), sha256=hashlib.sha256(body).hexdigest())
    forged = cache / "analysis" / entry.name
    forged.unlink(missing_ok=True)
    forged.write_bytes(json.dumps(fields).encode() + b"\n" + body)
    ahead = time.time() + 86400
    os.utime(forged, (ahead, ahead))

    pruned = _prune(cache)
    assert pruned.returncode == 0, pruned.stderr
    assert "not a regular file" in pruned.stderr and "dated in the future" in pruned.stderr
    assert not forged.exists() and not (cache / "analysis" / "zero.json").is_symlink()
    poisoned, _, outputs = _run_step(
        tmp_path, PCDLINT_PATHS="bad.json clean.json", PCDLINT_CACHE_DIR=str(cache)
    )
    assert poisoned.returncode == clean.returncode == 1, poisoned.stderr
    assert poisoned.stdout == clean.stdout
    assert _outputs(outputs)["exit-code"][-1] == "1"


def test_pruning_removes_what_is_no_regular_file_and_what_is_dated_ahead(tmp_path):
    """action/prune_cache.py on a planted cache: links (to files, folders, devices), FIFOs and
    files dated ahead go, a file over pcdlint's read limit goes (sparse: nothing is written),
    ordinary entries stay; a cache directory that is a link goes whole."""
    cache = tmp_path / "cache"
    (cache / "analysis").mkdir(parents=True)
    keep = cache / "tables-v4-0.bin"
    keep.write_bytes(b"x")
    fresh = cache / "analysis" / "a.json"
    fresh.write_bytes(b"{}")
    os.mkfifo(cache / "analysis" / "fifo.json")
    (cache / "link.bin").symlink_to(keep)
    (cache / "folder").symlink_to(tmp_path)
    (cache / "zero.bin").symlink_to("/dev/zero")
    ahead = cache / "analysis" / "ahead.json"
    ahead.write_bytes(b"{}")
    os.utime(ahead, (time.time() + 3600, time.time() + 3600))
    big = cache / "big.json"
    big.write_bytes(b"")
    os.truncate(big, 300 * 1024 * 1024)
    done = _prune(cache)
    assert done.returncode == 0, done.stderr
    left = sorted(str(p.relative_to(cache)) for p in cache.rglob("*"))
    assert left == ["analysis", "analysis/a.json", "tables-v4-0.bin"], left
    assert tmp_path.is_dir() and (tmp_path / "cache").is_dir()
    linked = tmp_path / "linked-cache"
    linked.symlink_to(cache)
    assert _prune(linked).returncode == 0 and not linked.exists() and keep.is_file()
