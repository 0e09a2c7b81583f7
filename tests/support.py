"""Test helpers: real tokenizers loaded once per session, corpus paths, running one rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from auditor.lint.engine import LintOptions, lint_model
from auditor.lint.registry import Rule
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from auditor.tokenizers.loader import builtin_available, load_tokenizer

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CORPUS = Path(os.environ.get("PCDLINT_CORPUS") or REPO.parent / "shared" / "corpus")  # beside the clone
RULE_TOKENIZERS = ("qwen2.5", "smollm2")

_tokenizers: dict = {}


def get_tokenizer(name: str):
    if name not in _tokenizers:
        if not builtin_available(name):
            pytest.skip(f"tokenizer {name} is not installed here")
        _tokenizers[name] = load_tokenizer(name)
    return _tokenizers[name]


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))

def run_rule(rule: Rule, schema, tokenizer, tmp_path: Path, options: dict | None = None,
             suffix: str = ".json"):
    path = tmp_path / f"case{suffix}"
    if isinstance(schema, str):
        path.write_text(schema, encoding="utf-8")
    else:
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False), encoding="utf-8")
    model = analyse(load_document(path, path.name))
    lint_options = LintOptions(select=[rule.code], rule_options={rule.code: options or {}})
    return lint_model(model, [tokenizer], [rule], lint_options).findings


def subset(expected, actual) -> bool:
    """Every key of `expected` is in `actual` with an equal (recursively subset) value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(expected) == len(actual)
                and all(subset(e, a) for e, a in zip(expected, actual)))
    return expected == actual


def run_cli(*args, cwd: Path | None = None, env: dict | None = None):
    """Run `pcdlint ARGS` in this process (click's runner): exit code, stdout and stderr, with an
    uncaught exception written to stderr as the traceback a real process would print."""
    import os
    import traceback
    from types import SimpleNamespace

    from click.testing import CliRunner

    from auditor.cli.main import cli

    previous = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=True)
    finally:
        os.chdir(previous)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(
            traceback.format_exception(result.exception))
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=stderr)
