"""Where `fast.PYTHON_BPE_MAX` sits: building tiktoken's encoder against encoding in Python.

For each tiktoken-native built-in: the build of its fast encoder's tiktoken (the ranks' dict made
from the cached tokens, the ASCII tokens' ranks, `tiktoken.Encoding`), the ranks' dict alone
(which `python_bpe` needs too), and the cost per text of `python_bpe` and of the built tiktoken,
on the texts a lint of the shared corpus reads (every form of every option, recorded from a run
of the linter). The crossover is the number of texts below which `python_bpe` costs less than
building tiktoken and encoding with it; `PYTHON_BPE_MAX` should sit near it. Each figure is the
least of a few runs in this process. The cache is a fresh temporary folder.

Usage: python benchmarks/encoder_build.py [CORPUS] [--tokenizer NAME ...]  (default: qwen2.5)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tokenizer_load import best_of as least  # noqa: E402  (the sibling script: least of n runs)


def corpus_texts(corpus: Path, name: str) -> list[str]:
    """The ASCII texts a default lint of the corpus asks the tokenizer for, each once."""
    from auditor.linter.engine import LintOptions, lint
    from auditor.tokenizers.loader import load_tokenizer

    files = sorted(corpus.glob("pcd-presets*/*.json")) + sorted(corpus.glob("json-schema/*.json"))
    tokenizer = load_tokenizer(name)
    asked: list[str] = []
    with tokenizer.recording(asked):
        lint([str(f) for f in files], [tokenizer], LintOptions(jobs=1), use_cache=False)
    return [text for text in dict.fromkeys(asked) if text.isascii()]


def measure(name: str, corpus: Path) -> str:
    """One tokenizer's line of the table."""
    from auditor.tokenizers import fast
    from auditor.tokenizers.loader import load_tokenizer

    texts = corpus_texts(corpus, name)
    tables = load_tokenizer(name).rank_tables
    assert tables is not None, f"{name}: not a tiktoken-native built-in"
    build = least(5, lambda: fast.FastEncoder(tables)._ascii_ordinary)
    ranks = least(5, lambda: fast.FastEncoder(tables).ranks)
    encoder = fast.FastEncoder(tables)
    python, native = encoder._python, encoder._ascii_ordinary
    assert python is not None
    per_python = least(3, lambda: list(map(python, texts))) / len(texts)
    per_native = least(3, lambda: list(map(native, texts))) / len(texts)
    crossover = (build - ranks) / (per_python - per_native)
    return (
        f"{name:<10} {len(texts):>7,} {build * 1e3:>9.1f} {ranks * 1e3:>9.1f} {per_python * 1e6:>10.2f} "
        f"{per_native * 1e6:>12.2f} {crossover:>10,.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "corpus", nargs="?", default=os.environ.get("PCDLINT_CORPUS", REPO.parent / "shared" / "corpus")
    )
    parser.add_argument("--tokenizer", action="append", help="a tiktoken-native built-in (repeatable)")
    args = parser.parse_args()
    os.environ["PCDLINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="pcdlint-bench-encoder-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from auditor.tokenizers import fast

    print(f"PYTHON_BPE_MAX = {fast.PYTHON_BPE_MAX:,}; least of 5 runs (per text: of 3)")
    print(
        f"{'tokenizer':<10} {'texts':>7} {'build ms':>9} {'ranks ms':>9} {'python us':>10} "
        f"{'tiktoken us':>12} {'crossover':>10}"
    )
    for name in args.tokenizer or ["qwen2.5"]:
        print(measure(name, Path(args.corpus)))


if __name__ == "__main__":
    main()
