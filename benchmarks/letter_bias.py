"""Where letter-slot picks come from: the legend, the letter's position, or the letter itself.

For each preset, on the same model, counts the letter picks per letter (legend in schema
order, and reversed: A = the last option), the picks that flip when the legend is reversed,
the picks that keep the same *letter* under both orders (a pure letter bias: the value does
not matter), the agreement with full-sequence scoring, and the letters' prior: the
probability of each letter token right after ``"field": "`` in the prompt *without* any
legend (no letter means anything there, so a high prior is the letter's own pull as the
first character of a value).

    python benchmarks/letter_bias.py [--presets ../shared/corpus/pcd-presets] [NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from auditor.decoder import load_fields, load_model, verify_fields  # noqa: E402
from auditor.decoder.pcd import Scorer  # noqa: E402
from auditor.decoder.prompt import build_prompt, letter_suffix  # noqa: E402
from auditor.decoder.result import Ledger  # noqa: E402


def letter_priors(loaded, fields, context) -> dict[str, float]:
    """Mean probability of each letter A-Z right after ``"field": "`` without a legend."""
    import torch

    tokenizer = loaded.linter_tokenizer
    ids = tokenizer.encode(build_prompt(loaded.tokenizer, fields, context))
    scorer = Scorer(loaded, Ledger())
    cache = scorer.prefill(ids, "prefill")
    names = [f.name for f in fields if all(isinstance(o, str) for o in f.options)]
    heads = [tokenizer.encode(letter_suffix(name)) for name in names]
    rows = scorer.suffix_logits(cache, len(ids), heads, "heads")
    letters = [chr(ord("A") + i) for i in range(26)]
    letter_ids = [tokenizer.encode(letter)[0] for letter in letters]
    probs = torch.stack([torch.softmax(row, dim=-1)[torch.tensor(letter_ids)] for row in rows]).mean(0)
    return dict(zip(letters, probs.tolist()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", type=Path, default=REPO.parent / "shared" / "corpus" / "pcd-presets")
    parser.add_argument("names", nargs="*", default=["support_triage", "spam_email", "fintech_fraud"])
    args = parser.parse_args(argv)
    loaded = load_model(progress=False)
    total = {"fields": 0, "flips": 0, "same_letter": 0, "agree": 0, "last": 0, "by_letter": {}}
    for name in args.names:
        fields, context = load_fields(args.presets / f"{name}.json")
        result = verify_fields(fields, context, model=loaded, progress=False, parity="off")
        bias = result.letter_bias
        if not bias:
            print(f"{name}: no letter-viable field")
            continue
        sizes = sorted({len(f.options) for f in result.fields if f.letter_pick is not None})
        print(
            f"{name}: {bias['fields']} letter fields (sizes {sizes}); picks by letter {bias['letters']}, "
            f"reversed legend {bias['letters_reversed_legend']}; last letter picked {bias['last_letter']}x; "
            f"{bias['flips_when_reversed']} flip when reversed, {bias['same_letter_both_orders']} keep the same letter; "
            f"{bias['agree_with_full_sequence']} agree with full-sequence"
        )
        for f in result.fields:
            if f.letter_pick is not None:
                print(
                    f"  {f.name} ({len(f.options)}): letter {chr(65 + f.letter_pick)}={f.options[f.letter_pick]!r} "
                    f"p={max(f.letter_probs):.2f}; reversed -> {f.options[f.letter_pick_reversed]!r}; "
                    f"full-sequence {f.options[f.full_sequence_pick]!r}"
                )
        priors = letter_priors(loaded, fields, context)
        top = sorted(priors.items(), key=lambda kv: -kv[1])[:6]
        print(
            '  letter prior without a legend (mean p after \'"field": "\'): '
            + ", ".join(f"{k} {v:.3f}" for k, v in top)
            + "; A-E: "
            + ", ".join(f"{k} {priors[k]:.3f}" for k in "ABCDE")
        )
        total["fields"] += bias["fields"]
        total["flips"] += bias["flips_when_reversed"]
        total["same_letter"] += bias["same_letter_both_orders"]
        total["agree"] += bias["agree_with_full_sequence"]
        total["last"] += bias["last_letter"]
        for letter, count in bias["letters"].items():
            total["by_letter"][letter] = total["by_letter"].get(letter, 0) + count
    print(
        f"\nall: {total['fields']} fields; by letter {dict(sorted(total['by_letter'].items()))}; "
        f"last letter {total['last']}; {total['flips']} flip with the legend reversed; "
        f"{total['same_letter']} keep the same letter; {total['agree']} agree with full-sequence"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
