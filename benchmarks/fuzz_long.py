"""The long fuzz run (issue 13): the property of tests/fuzzing.py on >= 10,000 examples.

    python benchmarks/fuzz_long.py [--examples 10000] [--json-every 10] [--seed N]

Prints the number of examples run and the failures (the run stops at the first failure, which
Hypothesis shrinks and prints). Every example runs `pcdlint check` in-process with the real
qwen2.5 tokenizer (loaded once); one example in --json-every reads the JSON report (which also
computes verified suggestions), the others the SARIF report.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.pop("GITHUB_ACTIONS", None)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--json-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()

    from click.testing import CliRunner
    from fuzzing import check_property, documents
    from hypothesis import HealthCheck, given, seed, settings

    import auditor.tokenizers.loader
    from auditor.cli.main import cli

    tokenizer = auditor.tokenizers.loader.load_tokenizer("qwen2.5")
    auditor.tokenizers.loader.load_tokenizer = lambda *args, **kwargs: tokenizer
    os.environ["PCDLINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="pcdlint-fuzz-cache-")
    runner = CliRunner()
    counts = {"examples": 0, "exit 0": 0, "exit 1": 0, "exit 2": 0}

    @settings(
        max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(document=documents())
    def run(document):
        counts["examples"] += 1
        code = check_property(document, runner, cli, json_report=counts["examples"] % args.json_every == 0)
        counts[f"exit {code}"] += 1
        if counts["examples"] % 500 == 0:
            print(
                f"  … {counts['examples']} examples, 0 failures so far "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )

    if args.seed is not None:
        run = seed(args.seed)(run)
    started = time.perf_counter()
    failures = 0
    try:
        run()
    except Exception as exc:  # Hypothesis has printed the shrunk failing example
        failures = 1
        print(f"FAILURE: {type(exc).__name__}: {str(exc)[:2000]}")
    elapsed = time.perf_counter() - started
    print(
        f"fuzz_long: {counts['examples']} examples in {elapsed:.0f} s, {failures} failures "
        f"(exit 0: {counts['exit 0']}, exit 1: {counts['exit 1']}, exit 2: {counts['exit 2']})"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
