"""``verify_fields``: score a schema's fields the way PCD engines do, and check them."""

from __future__ import annotations

import sys

from auditor.decoder.errors import DecoderError
from auditor.decoder.model import LoadedModel, load_model
from auditor.decoder.pcd import DEFAULT_CACHE_BUDGET_BYTES, Scorer
from auditor.decoder.prompt import FieldSpec, build_prompt, letter_suffix, plan_field, written_field
from auditor.decoder.result import FieldResult, Ledger, VerifyResult

DEFAULT_CONTEXT = "No document was supplied. Choose the most typical value for each field."


def _progress(enabled: bool, total: int):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="verify", unit="stage", file=sys.stderr)


def _subset_probs(torch, logits, token_ids: list[int]):
    """Softmax over exactly the gathered logits, duplicates included, as a plain gather does."""
    return torch.softmax(logits[torch.tensor(token_ids)], dim=-1)


def _coupling_sources(fields: list[FieldSpec], plans, coupling) -> list[int]:
    if coupling is True:
        return [index for index, plan in enumerate(plans) if plan.kind == "string"]
    names = [field.name for field in fields]
    unknown = [name for name in coupling if name not in names]
    if unknown:
        raise DecoderError(f"--coupling names unknown field(s): {', '.join(unknown)}")
    return [names.index(name) for name in coupling]


def verify_fields(
    fields: list[FieldSpec],
    context: str,
    *,
    model: str | LoadedModel | None = None,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool = False,
    coupling: bool | list[str] = False,
    progress: bool | None = None,
    full_sequence_mode: str = "tree",
    parity: bool = True,
    cache_budget_bytes: int = DEFAULT_CACHE_BUDGET_BYTES,
) -> VerifyResult:
    """Run the PCD mechanism on a real model and score every field three ways.

    ``model`` is a spec (directory, cached hub id, ``.gguf``; None = SmolLM2 default)
    or an already loaded ``LoadedModel``. Raises ``DecoderError`` for problems the
    user can fix.
    """
    if not fields:
        raise DecoderError("no enum or boolean fields to verify")
    for spec in fields:
        if len(spec.options) < 1:
            raise DecoderError(f"field {spec.name!r} has no options")
    if progress is None:
        progress = sys.stderr.isatty()
    loaded = model if isinstance(model, LoadedModel) else load_model(
        model, device=device, dtype=dtype, allow_download=allow_download, progress=progress
    )
    import torch

    notes = list(loaded.notes)
    if not context or not context.strip():
        context = DEFAULT_CONTEXT
        notes.append("no context given: scored against a neutral default context (pass --context TEXT|@file)")
    chat_tokenizer, tokenizer = loaded.tokenizer, loaded.linter_tokenizer
    ledger = Ledger()
    scorer = Scorer(loaded, ledger, cache_budget_bytes)

    with ledger.stage("tokenize"):
        prompt_text = build_prompt(chat_tokenizer, fields, context)
        prompt_ids = tokenizer.encode(prompt_text)
        plans = [plan_field(tokenizer, spec, prompt_text, prompt_ids) for spec in fields]
    letter_plans = [plan for plan in plans if plan.letter_ids is not None and len(plan.options) > 1]
    sources = _coupling_sources(fields, plans, coupling) if coupling else []
    bar = _progress(progress, 3 + bool(letter_plans) + parity + bool(sources))

    def advance(stage: str) -> None:
        if bar is not None:
            bar.set_postfix_str(stage)
            bar.update(1)

    past = len(prompt_ids)
    with ledger.stage("prefill"):
        cache = scorer.prefill(prompt_ids, "prefill")
    advance("prefill")
    with ledger.stage("suffix"):
        suffix_logits = scorer.suffix_logits(cache, past, [plan.suffix_ids for plan in plans], "suffix")
    advance("suffix")
    with ledger.stage("teacher_forced"):
        full = scorer.teacher_forced(cache, past, plans, "teacher_forced", mode=full_sequence_mode)
    advance("teacher_forced")

    letter_probs: dict[str, list[float]] = {}
    if letter_plans:
        with ledger.stage("letter"):
            letter_text = build_prompt(chat_tokenizer, fields, context,
                                       {p.name: p.letters for p in letter_plans})
            letter_ids = tokenizer.encode(letter_text)
            letter_cache = scorer.prefill(letter_ids, "letter_prefill")
            heads = [tokenizer.encode(letter_suffix(plan.name)) for plan in letter_plans]
            logits = scorer.suffix_logits(letter_cache, len(letter_ids), heads, "letter_suffix")
            for plan, row in zip(letter_plans, logits):
                letter_probs[plan.name] = _subset_probs(torch, row, plan.letter_ids or []).tolist()
            del letter_cache
        advance("letter")

    parity_diffs: list[float | None] = [None] * len(plans)
    if parity:
        with ledger.stage("parity"):
            fresh = scorer.fresh_last_logits([prompt_ids + plan.suffix_ids for plan in plans], "parity")
            parity_diffs = [float((a - b).abs().max()) for a, b in zip(suffix_logits, fresh)]
        advance("parity")

    first_probs = [_subset_probs(torch, row, plan.scored_ids) for row, plan in zip(suffix_logits, plans)]
    picks = [int(torch.argmax(probs)) for probs in first_probs]
    results = []
    for index, (plan, spec, probs, scored) in enumerate(zip(plans, fields, first_probs, full)):
        groups = plan.collision_groups()
        identical = all(bool((probs[group] == probs[group[0]]).all()) for group in groups) if groups else None
        sums = torch.tensor(scored.sums)
        results.append(
            FieldResult(
                name=plan.name,
                kind=plan.kind,
                options=plan.options,
                flagged_codes=list(spec.flagged_codes),
                prefix=plan.prefix,
                suffix_text=plan.suffix_text,
                scored_tokens=[tokenizer.decode([token]) for token in plan.scored_ids],
                first_token_probs=probs.tolist(),
                first_token_pick=picks[index],
                collision_groups=groups,
                ties_bit_identical=identical,
                full_sequence_logprob_sum=scored.sums,
                full_sequence_logprob_mean=scored.means,
                full_sequence_probs=torch.softmax(sums, dim=-1).tolist(),
                full_sequence_pick=int(torch.argmax(sums)),
                full_sequence_pick_mean=int(torch.argmax(torch.tensor(scored.means))),
                letter_viable=plan.letter_ids is not None,
                letter_note=plan.letter_note,
                letter_probs=letter_probs.get(plan.name),
                letter_pick=(
                    int(torch.argmax(torch.tensor(letter_probs[plan.name]))) if plan.name in letter_probs else None
                ),
                parity_max_abs_diff=parity_diffs[index],
                prompt_cut_ok=plan.prompt_cut_ok,
                noncanonical_options=plan.noncanonical_options,
            )
        )

    coupling_report = []
    if sources:
        with ledger.stage("coupling"):
            for source in sources:
                value = plans[source].options[picks[source]]
                written = prompt_text + written_field(plans[source].name, value)
                written_ids = tokenizer.encode(written)
                others = [index for index in range(len(plans)) if index != source]
                if not others:
                    continue
                written_cache = scorer.prefill(written_ids, "coupling_prefill")
                rows = scorer.suffix_logits(
                    written_cache, len(written_ids), [plans[i].suffix_ids for i in others], "coupling_suffix"
                )
                del written_cache
                flips = []
                for index, row in zip(others, rows):
                    after = int(torch.argmax(_subset_probs(torch, row, plans[index].scored_ids)))
                    if after != picks[index]:
                        flip = {
                            "given": plans[source].name,
                            "value": value,
                            "field": plans[index].name,
                            "before": plans[index].options[picks[index]],
                            "after": plans[index].options[after],
                        }
                        flips.append(flip)
                        results[index].coupling_flips.append(flip)
                coupling_report.append({"given": plans[source].name, "value": value, "flips": flips})
        advance("coupling")
    if bar is not None:
        bar.close()

    return VerifyResult(
        model=loaded.name,
        tokenizer=loaded.tokenizer_name,
        device=loaded.device,
        dtype=loaded.dtype,
        prompt_tokens=len(prompt_ids),
        passes=dict(ledger.passes),
        seconds={stage: round(seconds, 4) for stage, seconds in ledger.seconds.items()},
        fields=results,
        notes=notes,
        coupling=coupling_report,
    )
