"""Per engine profile: fields with findings and unreachable options over the shared corpus.

For every engine: the enum fields (sites) with a finding of a per-engine rule (PCD001, PCD004,
PCD013), the fields with at least one unreachable option, and the unreachable options by
reason (the clause that decides each loss: see the engine modules' docstrings); for rlcd-mlx,
every option lost to its greedy fallback (prefix match, budget, stop characters, strip, digit and
first-choice fallbacks).

Usage: python benchmarks/engine_losses.py [-t TOKENIZER] [CORPUS_DIR ...]
       (default: qwen2.5 over ../shared/corpus/{pcd-presets,json-schema,pcd-presets-other})
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor.linter.engine import LintOptions, lint  # noqa: E402
from auditor.pcd.engines import ENGINES  # noqa: E402
from auditor.tokenizers import load_tokenizer  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
DIRS = ("pcd-presets", "json-schema", "pcd-presets-other")
FALLBACK = ("prefix-match", "budget", "stop-char", "strip", "digit-fallback", "first-choice-fallback")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-t", "--tokenizer", default="qwen2.5")
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = args.paths or [str(CORPUS / d) for d in DIRS]
    tokenizer = load_tokenizer(args.tokenizer)
    options = LintOptions(select=["PCD001", "PCD004", "PCD013"], engines=list(ENGINES), suggestions=False)
    run = lint(paths, [tokenizer], options)
    sites = sum(len(r.model.sites) for r in run.files)
    print(f"{args.tokenizer}: {len(run.files)} files, {sites} fields")
    print(
        f"{'engine':<14} {'fields w/ findings':>18} {'fields w/ losses':>16} {'unreachable':>11}  by reason"
    )
    listed, refused = [], []
    for engine in ENGINES.values():
        flagged = {(f.path, f.site_pointer) for f in run.findings if f.engine == engine.name}
        fields_lost, reasons = 0, Counter()
        for result in run.files:
            for site in result.model.sites:
                losses = engine.losses(result.site_tokens(site, tokenizer))
                fields_lost += bool(losses)
                reasons.update(loss.reason for loss in losses)
                if engine.name == "rlcd-mlx":
                    listed += [
                        (result.model.path, site.field, loss) for loss in losses if loss.reason in FALLBACK
                    ]
                    capped = [loss for loss in losses if loss.reason == "option-cap"]
                    if capped:
                        refused.append((result.model.path, site.field, len(capped)))
        shown = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items()))
        print(f"{engine.name:<14} {len(flagged):>18} {fields_lost:>16} {sum(reasons.values()):>11}  {shown}")
    print(f"\nrlcd-mlx: options lost to the greedy fallback ({len(listed)}):")
    for path, field, loss in listed:
        print(f"  {Path(path).name} {field}: {loss.option!r} → {loss.returned_option!r} ({loss.reason})")
    print(
        f"rlcd-mlx: fields refused for more than 255 options ({len(refused)}, "
        f"{sum(n for *_, n in refused)} options):"
    )
    for path, field, n in refused:
        print(f"  {Path(path).name} {field}: {n} options")


if __name__ == "__main__":
    main()
