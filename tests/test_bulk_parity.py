"""Bulk tokenization (issue 17) changes speed, never output.

The whole shared corpus is linted in-process and its `check --format json` document (findings,
files, matrix and cost model; the tool version and tokenizer cache path aside) is compared with
digests recorded from main *before* the bulk path existed (fixtures/corpus_findings_digest.json):
one sha256 per file of that file's findings, one for the cost model, one for the whole
document. Two configurations: the default (qwen2.5, gather, suggestions, as `--format json`)
and every engine profile with smollm2 and qwen2.5 together without suggestions (as text output
with `--engine all`), so every engine's plan and both tokenizer families go through the bulk
path. When a rule legitimately changes its output, regenerate with PCDLINT_UPDATE_DIGESTS=1 and
review the diff of the changed files' findings.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from auditor.linter import engine
from auditor.linter.engine import LintOptions, LintRun, lint
from auditor.pcd.engines import ENGINES
from auditor.reporting import json_format
from auditor.reporting.escape import strict_json
from auditor.reporting.json_format import run_to_dict
from auditor.tokenizers.loader import LoadedTokenizer
from support import CORPUS, FIXTURES, NO_CORPUS, get_tokenizer

DIGESTS = FIXTURES / "corpus_findings_digest.json"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS),
]

CONFIGS = {
    "default": (("qwen2.5",), {}),
    "all-engines": (("qwen2.5", "smollm2"), {"engines": list(ENGINES), "suggestions": False}),
}


def _digest(value) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def corpus_run(tokenizer_names, options: dict) -> tuple[list[str], LintRun]:
    files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.json"))
    tokenizers = [get_tokenizer(name) for name in tokenizer_names]
    for tokenizer in tokenizers:
        tokenizer.forget()  # nothing left over from another test's run
    return files, lint(files, tokenizers, LintOptions(**options))


def corpus_digests(files: list[str], run: LintRun) -> dict[str, str]:
    """path → digest of that file's JSON findings; `<cost>` and `<document>` for the rest."""
    document = strict_json(run_to_dict(run))
    document.pop("tool")
    for described in document["tokenizers"]:
        described.pop("source")  # where the tokenizer file lies on this machine
    by_path: dict[str, list] = {path: [] for path in files}
    for finding in document["findings"]:
        by_path[finding["path"]].append(finding)
    out = {path: _digest(items) for path, items in by_path.items()}
    out["<cost>"] = _digest(document["summary"]["cost"])
    out["<document>"] = _digest(document)
    out["<findings>"] = str(len(document["findings"]))
    return out


@pytest.mark.parametrize("config", list(CONFIGS))
def test_corpus_json_equals_recorded_digest(config, monkeypatch):
    monkeypatch.chdir(CORPUS)  # relative paths: the digests do not depend on where the corpus is
    files, run = corpus_run(*CONFIGS[config])
    got = corpus_digests(files, run)
    recorded = json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}
    if os.environ.get("PCDLINT_UPDATE_DIGESTS"):
        recorded[config] = got
        DIGESTS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = recorded[config]
    assert int(got["<findings>"]) > 100, "the corpus must produce findings for this to mean anything"
    changed = sorted(k for k in expected.keys() | got.keys() if expected.get(k) != got.get(k))
    assert not changed, f"output changed for: {changed}"
    # the fast writer (C encoder, numpy re-indentation) writes the bytes json.dumps(indent=2) did
    reference = (
        json.dumps(strict_json(run_to_dict(run)), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )
    assert json_format.render(run) == reference


class CountingTokenizer:
    """A `tokenizers.Tokenizer` that counts its native encode calls and the texts they carry."""

    def __init__(self, real):
        self._real = real
        self.batches: list[int] = []  # texts per encode_batch call
        self.singles = 0

    def encode_batch(self, texts, **kwargs):
        self.batches.append(len(texts))
        return self._real.encode_batch(texts, **kwargs)

    def encode(self, text, **kwargs):
        self.singles += 1
        return self._real.encode(text, **kwargs)

    def __getattr__(self, name):
        return getattr(self._real, name)


def test_rules_read_the_bulk_batch(monkeypatch):
    """Tokenize once, in bulk: the engine's tokenize_run encodes nearly every text of a corpus
    run in its batches; rules and the cost model then read the memo (a few texts, such as one
    object per file for the cost model, stay single calls)."""
    monkeypatch.chdir(CORPUS)
    files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.json"))
    counting = CountingTokenizer(get_tokenizer("qwen2.5").hf)
    tokenizer = LoadedTokenizer(id="qwen2.5", source="", hf=counting)  # type: ignore[arg-type]
    bulk: list[int] = []
    real = engine.tokenize_run

    def counted(*args):
        real(*args)
        bulk.append(sum(counting.batches) + counting.singles)

    monkeypatch.setattr(engine, "tokenize_run", counted)
    lint(files, [tokenizer], LintOptions(suggestions=False, jobs=1))  # counted in this process
    later = sum(counting.batches) + counting.singles - bulk[0]
    assert bulk[0] > 40_000
    assert later <= 2 * len(files), (counting.batches[-10:], counting.singles)  # 36 texts today
