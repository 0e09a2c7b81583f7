"""The cost model: critical-path forward passes of PCD versus naive autoregressive decoding.

Per file, tokenizer and engine profile, with the file's enum fields as one JSON object:

- PCD = 1 prefill + 1 batched suffix pass + the sequential passes the engine's own procedure
  needs (`EngineProfile.extra_passes`): `gather` 0 (a collision makes it wrong, not slow),
  `rlcd-mlx` up to 4 greedy steps on a field with a collision, `openjev` 0, `full-sequence`
  one more batched teacher-forced pass, `constrained` one pass per token of the longest option
  after the first. Fields run in parallel, so the file costs its worst field.
- naive = one forward pass per token of the whole object (`{`, keys, punctuation, values, `}`;
  the prefill yields the first token), once with each field's longest option (in tokens) and
  once with the mean option length per field.

For the run: the worst file (fields of different files are different requests) and totals.
The first engine of the run fills the historical keys; `engines` holds every engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from auditor.pcd.engines import DEFAULT_ENGINE, EngineProfile, get_engine
from auditor.pcd.scoring import SiteTokens
from auditor.pcd.texts import field_text
from auditor.tokenizers.loader import LoadedTokenizer

# site, tokenizer → its SiteTokens (a run hands back the ones it made)
SiteTokensOf = Callable[[Any, LoadedTokenizer], SiteTokens]


class CostedRun(Protocol):
    """What run_cost reads of a lint run (auditor.linter's LintRun; `engines` and
    `names_decisions` are read where present)."""

    tokenizers: list[LoadedTokenizer]
    files: list[Any]


def _field_lengths(tokens: SiteTokens) -> list[int]:
    """Tokens of `  "<field>": <option>` for every option, as the model writes it (memo reads:
    the engine encoded the texts not joined from their parts with the run's one batch, group
    "cost")."""
    return tokens.field_lengths


def _pcd(sites, tokenizer, site_tokens, engine: EngineProfile) -> dict:
    worst_steps, worst_field = 0, sites[0].field
    for site in sites:
        steps = engine.extra_passes(site_tokens(site, tokenizer))
        if steps > worst_steps:
            worst_steps, worst_field = steps, site.field
    return {
        "prefill": 1,
        "suffix_pass": 1,
        "fallback_steps": worst_steps,
        "worst_field": worst_field if worst_steps else None,
        "passes": 2 + worst_steps,
        "engine": engine.name,
    }


def file_cost(
    sites: Sequence[Any],
    tokenizer: LoadedTokenizer,
    site_tokens: SiteTokensOf = SiteTokens,
    engines: list[EngineProfile] | None = None,
) -> dict | None:
    """Cost of one file's fields under one tokenizer; `site_tokens(site, tokenizer)` may hand
    back the tokenization the engine already made (FileResult.site_tokens). The first engine
    (default gather) fills `pcd` and the speedups; `engines` has one entry per engine."""
    if not sites:
        return None
    engines = engines or [get_engine(DEFAULT_ENGINE)]
    chosen, longest_fields, mean_fields = [], 0, 0.0
    for site in sites:
        tokens = site_tokens(site, tokenizer)
        lengths = _field_lengths(tokens)
        longest = lengths.index(max(lengths))  # (the first of the longest)
        chosen.append(field_text(tokens.site, longest))
        longest_fields += lengths[longest]
        mean_fields += sum(lengths) / len(lengths)
    object_tokens = len(tokenizer.ids("{\n" + ",\n".join(chosen) + "\n}"))
    skeleton = object_tokens - longest_fields  # braces, commas and newlines between fields
    naive_mean = round(skeleton + mean_fields, 1)
    per_engine = {}
    for engine in engines:
        pcd = _pcd(sites, tokenizer, site_tokens, engine)
        per_engine[engine.name] = {
            "pcd": pcd,
            "speedup_longest": round(object_tokens / pcd["passes"], 1),
            "speedup_mean": round(naive_mean / pcd["passes"], 1),
        }
    first = per_engine[engines[0].name]
    return {
        "fields": len(sites),
        "pcd": first["pcd"],
        "naive": {"passes_longest": object_tokens, "passes_mean": naive_mean},
        "speedup_longest": first["speedup_longest"],
        "speedup_mean": first["speedup_mean"],
        "engines": per_engine,
    }


def _totals(files: dict, key) -> dict:
    pcd_total = sum(key(c)["pcd"]["passes"] for c in files.values())
    naive_total = sum(c["naive"]["passes_longest"] for c in files.values())
    return {
        "pcd_passes_worst": max((key(c)["pcd"]["passes"] for c in files.values()), default=0),
        "pcd_passes_total": pcd_total,
        "speedup_longest": round(naive_total / pcd_total, 1) if pcd_total else None,
    }


def _costed(run, sites: list) -> list:
    """The sites the PCD cost model prices: a schema's fields, and a decision request's
    questions only where an engine named scores their option names (run.names_decisions)."""
    names = getattr(run, "names_decisions", False)
    return [site for site in sites if not hasattr(site, "name_scored") or site.name_scored(names)]


def _engines(run: CostedRun) -> list:
    """The engines the run is priced for (the default engine where it names none)."""
    return list(getattr(run, "engines", None) or [get_engine(DEFAULT_ENGINE)])


def result_costs(run: CostedRun, result: Any) -> dict[str, dict | None]:
    """tokenizer id → file_cost of one of the run's files (its FileResult)."""
    engines = _engines(run)
    sites = _costed(run, result.model.sites)
    return {t.id: file_cost(sites, t, result.site_tokens, engines) for t in run.tokenizers}


def run_cost(run: CostedRun) -> dict:
    """tokenizer id → {"files": {path: cost}, "run": totals and worst file}."""
    engines = _engines(run)
    # each file's costs: as lint_models or a pool worker computed them, else now
    known = [
        result.costs if all(t.id in result.costs for t in run.tokenizers) else result_costs(run, result)
        for result in run.files
    ]
    out = {}
    for tokenizer in run.tokenizers:
        files = {}
        for result, costs in zip(run.files, known):
            cost = costs[tokenizer.id]
            if cost is not None:
                files[result.model.path] = cost
        naive_total = sum(c["naive"]["passes_longest"] for c in files.values())
        first = _totals(files, lambda c: c)
        out[tokenizer.id] = {
            "files": files,
            "run": {
                "files": len(files),
                "pcd_passes_worst": first["pcd_passes_worst"],
                "pcd_passes_total": first["pcd_passes_total"],
                "naive_passes_longest_total": naive_total,
                "naive_passes_mean_total": round(sum(c["naive"]["passes_mean"] for c in files.values()), 1),
                "speedup_longest": first["speedup_longest"],
                "engine": engines[0].name,
                "engines": {e.name: _totals(files, lambda c, n=e.name: c["engines"][n]) for e in engines},
            },
        }
    return out
