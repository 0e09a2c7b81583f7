"""The cost model: critical-path forward passes of PCD versus naive autoregressive decoding.

Per file and tokenizer, with the file's enum fields as one JSON object:

- PCD = 1 prefill + 1 batched suffix pass + the sequential steps a collision fallback needs.
  For each colliding bucket, the fallback appends the shared tokens one pass at a time until
  the bucket's options' token sequences (remainder + closing quote) diverge; a field costs its
  worst bucket, and fields run in parallel, so the file costs its worst field.
- naive = one forward pass per token of the whole object (`{`, keys, punctuation, values, `}`;
  the prefill yields the first token), once with each field's longest option (in tokens) and
  once with the mean option length per field.

For the run: the worst file (fields of different files are different requests) and totals.
"""

from __future__ import annotations

import itertools

from auditor.pcd.scoring import SiteTokens, field_head, json_text


def _common_prefix_length(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def fallback_steps(tokens: SiteTokens) -> int:
    """Sequential passes the worst colliding bucket needs until its options diverge."""
    worst = 0
    for _, indexes in tokens.collisions:
        sequences = sorted(tokens.sequence(tokens.options[i]) for i in indexes)
        for a, b in itertools.pairwise(sequences):
            worst = max(worst, _common_prefix_length(a, b))
    return worst


def _rendered(value) -> str:
    return f'"{json_text(value)}"' if isinstance(value, str) else json_text(value)


def _field_lengths(tokens: SiteTokens) -> list[int]:
    """Tokens of `  "<field>": <option>` for every option, as the model writes it."""
    base = field_head(tokens.site.name)
    return [len(ids) for ids in tokens.tokenizer.encode_batch(
        [base + _rendered(v) for v in tokens.site.options])]


def file_cost(sites, tokenizer, site_tokens=SiteTokens) -> dict | None:
    """Cost of one file's fields under one tokenizer; `site_tokens(site, tokenizer)` may hand
    back the tokenization the engine already made (FileResult.site_tokens)."""
    if not sites:
        return None
    worst_steps, worst_field = 0, sites[0].field
    chosen, longest_fields, mean_fields = [], 0, 0.0
    for site in sites:
        tokens = site_tokens(site, tokenizer)
        steps = fallback_steps(tokens)
        if steps > worst_steps:
            worst_steps, worst_field = steps, site.field
        lengths = _field_lengths(tokens)
        longest = max(range(len(lengths)), key=lengths.__getitem__)
        chosen.append(field_head(site.name) + _rendered(site.options[longest]))
        longest_fields += lengths[longest]
        mean_fields += sum(lengths) / len(lengths)
    object_tokens = len(tokenizer.encode("{\n" + ",\n".join(chosen) + "\n}"))
    skeleton = object_tokens - longest_fields  # braces, commas and newlines between fields
    naive_mean = round(skeleton + mean_fields, 1)
    pcd = 2 + worst_steps
    return {
        "fields": len(sites),
        "pcd": {"prefill": 1, "suffix_pass": 1, "fallback_steps": worst_steps,
                "worst_field": worst_field if worst_steps else None, "passes": pcd},
        "naive": {"passes_longest": object_tokens, "passes_mean": naive_mean},
        "speedup_longest": round(object_tokens / pcd, 1),
        "speedup_mean": round(naive_mean / pcd, 1),
    }


def run_cost(run) -> dict:
    """tokenizer id → {"files": {path: cost}, "run": totals and worst file}."""
    out = {}
    for tokenizer in run.tokenizers:
        files = {}
        for result in run.files:
            cost = file_cost(result.model.sites, tokenizer, result.site_tokens)
            if cost is not None:
                files[result.model.path] = cost
        pcd_total = sum(c["pcd"]["passes"] for c in files.values())
        naive_total = sum(c["naive"]["passes_longest"] for c in files.values())
        out[tokenizer.id] = {
            "files": files,
            "run": {
                "files": len(files),
                "pcd_passes_worst": max((c["pcd"]["passes"] for c in files.values()), default=0),
                "pcd_passes_total": pcd_total,
                "naive_passes_longest_total": naive_total,
                "naive_passes_mean_total": round(sum(c["naive"]["passes_mean"] for c in files.values()), 1),
                "speedup_longest": round(naive_total / pcd_total, 1) if pcd_total else None,
            },
        }
    return out
