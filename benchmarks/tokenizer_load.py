"""Tokenizer load cost per built-in: cold (convert into an empty cache), warm (from the cache) and
a plain `Tokenizer.from_file` of the same cached tokenizer.json, as ratios (warm / plain).

Built-ins whose package is not installed are listed as skipped. The cache is a fresh temporary
folder, so the user's cache is neither used nor touched.

Usage: python benchmarks/tokenizer_load.py [NAME ...]   (default: every built-in)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def best_of(n: int, func) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    os.environ["PCDLINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="pcdlint-bench-tokenizers-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from tokenizers import Tokenizer

    from auditor.tokenizers import load_tokenizer
    from auditor.tokenizers.builtins import BUILTINS
    from auditor.tokenizers.cache import cache_entry

    names = sys.argv[1:] or list(BUILTINS)
    print(f"{'tokenizer':<15} {'cold s':>8} {'warm s':>8} {'plain s':>8} {'warm/plain':>10}  source")
    for name in names:
        builtin = BUILTINS[name]
        if not builtin.installed():
            print(f"{name:<15} skipped: {builtin.package} not installed")
            continue
        start = time.perf_counter()
        load_tokenizer(name)
        cold = time.perf_counter() - start
        warm = best_of(3, lambda name=name: load_tokenizer(name))
        source = builtin.paths()[0]
        cached = source if builtin.build is None else cache_entry(source, builtin.kind or name)
        plain = best_of(3, lambda cached=cached: Tokenizer.from_file(str(cached)))
        print(
            f"{name:<15} {cold:>8.2f} {warm:>8.2f} {plain:>8.2f} {warm / plain:>9.2f}x  "
            f"{builtin.package}:{source.name}"
        )


if __name__ == "__main__":
    main()
