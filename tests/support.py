"""Test helpers: real tokenizers loaded once per session, corpus paths, running one rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from auditor.linter.engine import LintOptions, lint_model
from auditor.linter.registry import Rule
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from auditor.tokenizers.loader import builtin_available, load_tokenizer

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# PCDLINT_CORPUS: where the shared corpus is when this checkout is not beside it (a worktree)
CORPUS = Path(os.environ.get("PCDLINT_CORPUS") or REPO.parent / "shared" / "corpus")
# the one skip reason of every test that reads it (`make test` prints it: pytest -rs)
NO_CORPUS = (
    f"needs the shared corpus (third-party files, kept out of this repository) at {CORPUS}: "
    "set PCDLINT_CORPUS to a copy (docs/getting-started.md, 'What make test skips')"
)
RULE_TOKENIZERS = ("qwen2.5", "smollm2")

_tokenizers: dict = {}


def get_tokenizer(name: str):
    if name not in _tokenizers:
        if not builtin_available(name):
            from auditor.tokenizers.builtins import BUILTINS, canonical_name

            pytest.skip(BUILTINS[canonical_name(name) or name].missing())
        _tokenizers[name] = load_tokenizer(name)
    return _tokenizers[name]


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))


def slow_corpus(paths: list[Path]) -> list:
    """`paths` as pytest parameters, each file of the shared corpus marked `slow` (the fast loop,
    `make test-fast`, keeps the bundled fixtures and leaves the whole-corpus cases to `make test`)."""
    import pytest

    return [
        pytest.param(p, marks=pytest.mark.slow, id=p.name)
        if p.is_relative_to(CORPUS)
        else pytest.param(p, id=p.name)
        for p in paths
    ]


def run_rule(
    rule: Rule,
    schema,
    tokenizer,
    tmp_path: Path,
    options: dict | None = None,
    suffix: str = ".json",
    engine: str | None = None,
):
    path = tmp_path / f"case{suffix}"
    if isinstance(schema, str):
        path.write_text(schema, encoding="utf-8")
    else:
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False), encoding="utf-8")
    model = analyse(load_document(path, path.name))
    lint_options = LintOptions(select=[rule.code], rule_options={rule.code: options or {}})
    if engine:
        lint_options.engines = [engine]
    return lint_model(model, [tokenizer], [rule], lint_options).findings


def subset(expected, actual) -> bool:
    """Every key of `expected` is in `actual` with an equal (recursively subset) value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(subset(e, a) for e, a in zip(expected, actual))
        )
    return expected == actual


def text_findings(stdout: str) -> list[tuple[str, str]]:
    """(code, field) of each finding in `pcdlint check` text output: a header line per field
    (`path:line:col: field [tok] PCD001 error, …`), then its findings indented. File-level
    findings (no field) have field ""."""
    import re

    found, field = [], None
    for line in stdout.splitlines():
        header = re.match(r"^\S+:\d+:\d+: (.+?)(?: \[[^\]]+\])? PCD\d{3} \w+(?:, PCD\d{3} \w+)*$", line)
        if header:
            label = header.group(1)
            field = "" if label.startswith("/") or label == "(file)" else label
            continue
        finding = re.match(r"^    \d+:\d+ (PCD\d{3}) \w+: ", line)
        if finding:
            found.append((finding.group(1), field))
    return found


def run_cli_bytes(*args, cwd: Path | None = None, env: dict | None = None, input: str | bytes | None = None):
    """Run `pcdlint ARGS` in this process (click's runner) as a subprocess.CompletedProcess with
    bytes streams; an uncaught exception is written to stderr as the traceback a real process
    would print. `env`: variables to set (None: unset) while it runs."""
    import os
    import subprocess
    import traceback

    from click.testing import CliRunner

    from auditor.cli.main import cli

    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(
            cli,
            [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args],
            input=input,
            env=env,
            catch_exceptions=True,
        )
    finally:
        os.chdir(previous)
    stderr = result.stderr_bytes or b""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += (
            "Traceback (most recent call last):\n" + "".join(traceback.format_exception(result.exception))
        ).encode()
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes, stderr)


def run_cli(*args, cwd: Path | None = None, env: dict | None = None, input: str | bytes | None = None):
    """`run_cli_bytes` with text streams (decoded as click's runner decodes them)."""
    done = run_cli_bytes(*args, cwd=cwd, env=env, input=input)
    done.stdout = done.stdout.decode("utf-8", "replace")
    done.stderr = done.stderr.decode("utf-8", "replace")
    return done


def pcdlint_process(*args, timeout: int = 60):
    """`python -m auditor ARGS` as a separate process (offline, PCDLINT_DEBUG unset): what a user's
    shell runs, where a test needs a real process (signals, file descriptors, exit status)."""
    import os
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "auditor", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=timeout,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_DEBUG": ""},
    )


def one_line_error(done, message: str, max_chars: int | None = None) -> None:
    """Bad input: exit 2, one line on stderr holding `message`, no traceback (at most `max_chars`)."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    if max_chars is not None:
        assert len(done.stderr) < max_chars


def row_requests(request: Path, rows: Path, limit: int, directory: Path) -> list[str]:
    """One request file per labeled row (the request with the row's state), for `verify` to ask
    what `eval` asked of the same rows: the first `limit` rows of `rows`, written to `directory`."""
    import json

    body = json.loads(Path(request).read_text(encoding="utf-8"))
    paths = []
    for line in Path(rows).read_text(encoding="utf-8").splitlines()[:limit]:
        row = json.loads(line)
        path = directory / f"{row['id']}.json"
        path.write_text(json.dumps({**body, "state": row["state"]}), encoding="utf-8")
        paths.append(str(path))
    return paths


def scipy_paired_interval(a: list, b: list, seed: int):
    """The oracle for eval --compare's interval: scipy's paired percentile bootstrap of mean(b) -
    mean(a), 10,000 resamples, numpy's generator seeded as the report's seed."""
    import numpy as np
    from scipy.stats import bootstrap

    return bootstrap(
        (np.array(a, float), np.array(b, float)),
        lambda x, y, axis=-1: y.mean(axis=axis) - x.mean(axis=axis),
        paired=True,
        n_resamples=10_000,
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval


_seed: list[Path] = []


def _link(source: str, target: str) -> None:
    """Hard-link a seeded cache file (pcdlint replaces cache files, never writes into them);
    copy where links are refused."""
    import shutil

    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def seed_cache(cache: Path) -> Path:
    """Give a fresh PCDLINT_CACHE_DIR the default tokenizer's cache entries, as a first run
    would leave them (its rank tables: a check of ASCII options reads nothing else).

    Tests that need a cache of their own (analysis entries they tamper with, a directory they
    inspect) would otherwise read the Qwen rank file again in every subprocess. The entries are
    the real ones, written once per test process by the real CLI into a private directory; the
    analysis cache is never copied.
    """
    import shutil
    import subprocess
    import sys
    import tempfile

    if not _seed:
        seed = Path(tempfile.mkdtemp(prefix="pcdlint-seed-cache-"))
        schema = seed / "seed.json"
        schema.write_text('{"properties": {"a": {"enum": ["x", "y"]}}}', encoding="utf-8")
        subprocess.run(
            [sys.executable, "-m", "auditor", "check", "--no-cache", str(schema)],
            check=False,
            capture_output=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "PCDLINT_CACHE_DIR": str(seed / "cache")},
        )
        _seed.append(seed / "cache")
    if not cache.exists():  # hard links: the same files, so this process parses them once
        shutil.copytree(_seed[0], cache, ignore=shutil.ignore_patterns("analysis"), copy_function=_link)
    return cache


TRIAGE_CONTEXTS = 4  # distinct contexts of padded_triage_rows, cycled


def padded_triage_rows(path: Path, count: int) -> Path:
    """``count`` labeled rows for ``pcdlint eval fixtures/eval/support_triage_eval.json``: the
    support-triage fixture's first ``TRIAGE_CONTEXTS`` tickets, each padded to about 1 KB, cycled,
    each row with its own id (tests/eval/test_eval_scale.py, benchmarks/eval_schema_scale.py)."""
    data = FIXTURES / "eval" / "support_triage.jsonl"
    fixture = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()[:TRIAGE_CONTEXTS]]
    padding = " Further detail from the customer:" + " the same problem again" * 40
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            source = fixture[index % TRIAGE_CONTEXTS]
            row = {"id": f"row-{index}", "context": source["context"] + padding, "labels": source["labels"]}
            handle.write(json.dumps(row) + "\n")
    return path
