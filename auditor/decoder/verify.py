"""``verify_fields``: score a schema's fields the way PCD engines do, and check them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from auditor.backends import BackendOptions
from auditor.decoder.backends import PARITY_MODES, InProcessBackend, ScoreRequest
from auditor.decoder.constrained import constrained_pick
from auditor.decoder.decision import decision, letter_bias
from auditor.decoder.errors import DecoderError
from auditor.decoder.pcd import DEFAULT_CACHE_BUDGET_BYTES
from auditor.decoder.progress import Progress
from auditor.decoder.prompt import FieldSpec, build_prompt, letter_suffix, plan_field, written_field
from auditor.decoder.result import FieldResult, Ledger, VerifyResult
from auditor.pcd.engines.full_sequence import VARIANTS, live_pick
from auditor.softmax import softmax

DEFAULT_CONTEXT = "No document was supplied. Choose the most typical value for each field."


def _subset_probs(logprobs: list[float]) -> np.ndarray:
    """Softmax over exactly the gathered scores, duplicates included, as a plain gather does
    (in float32, what the decoder's tensors hold)."""
    return softmax(logprobs, float32=True)


def _argmax(values) -> int:
    """The first index of the largest value, in float32 as torch.argmax over a default tensor."""
    return int(np.argmax(np.asarray(values, dtype=np.float32)))


def _check_context_limit(backend, request: ScoreRequest) -> None:
    """A prompt with its longest scored text past the model's trained positions is an error:
    the scores would come from positions the model never saw (or a server would cut the prompt)."""
    limit = getattr(backend, "context_limit", None)
    if not limit:
        return
    need = max(
        len(request.prompt_ids) + len(plan.suffix_ids) + max((len(s) for s in plan.sequences), default=0)
        for plan in request.plans
    )
    for ids in (request.letter_ids, request.letter_reversed_ids):
        if ids is not None:
            need = max(
                need, len(ids) + max((len(head) + 1 for _text, head in request.letter_heads), default=1)
            )
    if need > limit:
        raise DecoderError(
            f"the prompt with its longest scored option is {need} tokens, more than the model's "
            f"context of {limit} tokens; shorten --context or the schema's descriptions"
        )


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
    model: Any = None,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool = False,
    coupling: bool | list[str] = False,
    progress: Progress | None = None,
    full_sequence_mode: str = "tree",
    parity: bool | str = True,
    cache_budget_bytes: int = DEFAULT_CACHE_BUDGET_BYTES,
    letters: bool = True,
    labels: Mapping[str, str] | None = None,
) -> VerifyResult:
    """Run the PCD mechanism on a real model and score every field four ways.

    ``model`` is a backend (decoder/backends.py), a loaded ``LoadedModel``, or a spec
    (directory, cached hub id, ``.gguf``; None = SmolLM2 default) loaded in-process.
    ``parity``: "fast" (default; True), "full" or "off" (False). ``letters=False`` skips the
    letter-slot scores (both legend orders). ``progress``: a
    ``Progress``, a bool, or None (on when stderr is a TTY). Raises ``DecoderError`` for
    problems the user can fix.
    """
    if not fields:
        raise DecoderError("no enum or boolean fields to verify")
    for spec in fields:
        if len(spec.options) < 1:
            raise DecoderError(f"field {spec.name!r} has no options")
    parity_mode = parity if isinstance(parity, str) else ("fast" if parity else "off")
    if parity_mode not in PARITY_MODES:
        raise DecoderError(f"unknown parity mode {parity!r}: use fast, full or off")
    if not isinstance(progress, Progress):
        progress = Progress(progress)
    backend = _backend(model, device, dtype, allow_download, progress, cache_budget_bytes, full_sequence_mode)

    notes = list(backend.notes)
    if not context or not context.strip():
        context = DEFAULT_CONTEXT
        notes.append("no context given: scored against a neutral default context (pass --context TEXT|@file)")
    chat_tokenizer, tokenizer = backend.tokenizer, backend.linter_tokenizer
    ledger = Ledger()

    with ledger.stage("tokenize"):
        prompt_text = build_prompt(chat_tokenizer, fields, context)
        prompt_ids = tokenizer.encode(prompt_text)
        plans = [plan_field(tokenizer, spec, prompt_text, prompt_ids) for spec in fields]
        letter_plans = [
            plan for plan in plans if letters and plan.letter_ids is not None and len(plan.options) > 1
        ]
        request = ScoreRequest(prompt_text, prompt_ids, plans, parity=parity_mode)
        if letter_plans:
            legend = {p.name: p.letters for p in letter_plans}
            request.letter_plans = letter_plans
            request.letter_text = build_prompt(chat_tokenizer, fields, context, legend)
            request.letter_ids = tokenizer.encode(request.letter_text)
            request.letter_reversed_text = build_prompt(
                chat_tokenizer, fields, context, legend, reversed_letters=True
            )
            request.letter_reversed_ids = tokenizer.encode(request.letter_reversed_text)
            request.letter_heads = [
                (letter_suffix(p.name, p.array_depth), tokenizer.encode(letter_suffix(p.name, p.array_depth)))
                for p in letter_plans
            ]
        _check_context_limit(backend, request)
    sources = _coupling_sources(fields, plans, coupling) if coupling else []

    scores = backend.score(request, ledger, progress)
    notes.extend(note for note in backend.notes if note not in notes)

    first_probs = [_subset_probs(s.first_token_logprobs) for s in scores]
    picks = [_argmax(probs) for probs in first_probs]
    results = []
    for index, (plan, spec, probs, scored) in enumerate(zip(plans, fields, first_probs, scores)):
        groups = plan.collision_groups()
        identical = all(bool((probs[group] == probs[group[0]]).all()) for group in groups) if groups else None
        sums = np.asarray([sum(values) for values in scored.sequence_logprobs], dtype=np.float32)
        means = [sum(values) / max(1, len(values)) for values in scored.sequence_logprobs]
        aligned = all(len(v) == len(s) for v, s in zip(scored.sequence_logprobs, plan.sequences))
        constrained = constrained_pick(plan.sequences, scored.sequence_logprobs).option if aligned else None
        letter = reversed_letter = None
        if scored.letter_logprobs is not None:
            letter = _subset_probs(scored.letter_logprobs).tolist()
        if scored.letter_logprobs_reversed is not None:
            # letter i of the reversed legend names option n-1-i: store per option
            reversed_letter = list(reversed(_subset_probs(scored.letter_logprobs_reversed).tolist()))
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
                full_sequence_logprob_sum=sums.tolist(),
                full_sequence_logprob_mean=means,
                full_sequence_probs=softmax(sums, float32=True).tolist(),
                full_sequence_pick=_argmax(sums),
                full_sequence_pick_mean=_argmax(means),
                letter_viable=plan.letter_ids is not None,
                letter_note=plan.letter_note,
                letter_probs=letter,
                letter_pick=None if letter is None else _argmax(letter),
                parity_max_abs_diff=scored.parity_max_abs_diff,
                prompt_cut_ok=plan.prompt_cut_ok,
                noncanonical_options=plan.noncanonical_options,
                constrained_pick=constrained,
                letter_probs_reversed=reversed_letter,
                letter_pick_reversed=None if reversed_letter is None else _argmax(reversed_letter),
                tokenization_mismatches=list(scored.mismatches),
                full_sequence_variants={
                    name: live_pick(name, scored.sequence_logprobs, plan.option_texts) for name in VARIANTS
                }
                if aligned
                else {},
            )
        )

    coupling_report = []
    if sources:
        with ledger.stage("coupling"), progress.stage("coupling", len(sources), "field") as tick:
            for source in sources:
                value = plans[source].options[picks[source]]
                written = prompt_text + written_field(plans[source].name, value, plans[source].array_depth)
                written_ids = tokenizer.encode(written)
                others = [index for index in range(len(plans)) if index != source]
                tick(1)
                if not others:
                    continue
                rows = backend.first_token_logprobs(
                    written, written_ids, [plans[i] for i in others], "coupling", ledger
                )
                flips = []
                for index, row in zip(others, rows):
                    after = _argmax(_subset_probs(row))
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

    for result in results:
        result.decides_answer, result.decision = decision(result, labels)
    return VerifyResult(
        model=backend.name,
        tokenizer=backend.tokenizer_name,
        device=backend.device,
        dtype=backend.dtype,
        prompt_tokens=len(prompt_ids),
        passes=dict(ledger.passes),
        seconds={stage: round(seconds, 4) for stage, seconds in ledger.seconds.items()},
        fields=results,
        notes=notes,
        coupling=coupling_report,
        backend="in-process" if isinstance(backend, InProcessBackend) else "openai",
        server=dict(backend.stats),
        load_seconds=round(backend.load_seconds, 4),
        letter_bias=letter_bias(results),
    )


def _backend(model, device, dtype, allow_download, progress, cache_budget_bytes, full_sequence_mode):
    """`model` itself where it is a field backend already, else the in-process backend on it
    (a LoadedModel, or a spec loaded here), opened by the decoder's one factory."""
    from auditor.decoder.open import open_backend

    if hasattr(model, "score") and hasattr(model, "tokenizer"):
        return model
    options = BackendOptions(
        model=model,
        device=device,
        dtype=dtype,
        allow_download=allow_download,
        cache_budget_bytes=cache_budget_bytes,
        full_sequence_mode=full_sequence_mode,
    )
    return open_backend(options, progress=progress)
