"""Tokenizer load cost per built-in: cold (convert into an empty cache), warm (from the cache) and
a plain parse of the same tokenizer.json (`Tokenizer.from_str` of a cached conversion's payload,
`from_file` of a shipped tokenizer.json), as ratios (warm / plain).

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

    from auditor.cachedir import read_checked
    from auditor.tokenizers import cache, load_tokenizer
    from auditor.tokenizers.builtins import BUILTINS
    from auditor.tokenizers.cache import cache_entry

    names = sys.argv[1:] or list(BUILTINS)
    print(f"{'tokenizer':<15} {'cold s':>8} {'warm s':>8} {'plain s':>8} {'warm/plain':>10}  source")
    for name in names:
        builtin = BUILTINS[name]
        if not builtin.installed():
            print(f"{name:<15} skipped: {builtin.package} not installed")
            continue

        def build(name: str = name) -> None:
            """The `tokenizers` build (a tiktoken-native built-in defers it), not from this
            process's memo of parsed files."""
            cache._CONVERTED.clear()
            cache._PARSED.clear()
            load_tokenizer(name)
            BUILTINS[name].load()

        start = time.perf_counter()
        build()
        cold = time.perf_counter() - start
        warm = best_of(3, build)
        source = builtin.paths()[0]
        if builtin.build is None:
            plain = best_of(3, lambda source=source: Tokenizer.from_file(str(source)))
        else:  # (a checked entry: its payload is the tokenizer.json)
            checked = read_checked(cache_entry(source, builtin.kind or name), {})
            assert checked is not None, f"{name}: no cached conversion"
            text = checked[1].decode("utf-8")
            plain = best_of(3, lambda text=text: Tokenizer.from_str(text))
        print(
            f"{name:<15} {cold:>8.2f} {warm:>8.2f} {plain:>8.2f} {warm / plain:>9.2f}x  "
            f"{builtin.package}:{source.name}"
        )


if __name__ == "__main__":
    main()
