"""`--engine sum-close` and `pcdlint verify`'s full-sequence pick agree, on SmolLM2-135M.

verify scores every field of the clause probe (fixtures/engines/clause_probe.json) and of the
preset fixtures in fixtures/schemas on the real model. Per field: its sum-close pick (the variant computed by the shared
`full_sequence.live_pick`) is its full-sequence pick, and never an option the `sum-close`
profile says is never returned. Then the model is pushed towards each option k in turn, as the
profile's oracle is: at every position on option k's path a large bias is added to option k's
next token (the tokens verify teacher-forces, after `{` and the field's suffix, read from one
batched forward pass per field);
the sum-close pick of the pushed log-probs must be the option the profile returns for k.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.pcd.engines import get_engine
from auditor.pcd.engines.full_sequence import VARIANTS, live_pick
from auditor.pcd.scoring import SiteTokens
from auditor.schema.cache import analyse_file

pytestmark = pytest.mark.model

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PRESETS = [
    FIXTURES / "engines" / "clause_probe.json",
    FIXTURES / "schemas" / "clean_sentiment.json",
    FIXTURES / "schemas" / "customs_preset.yaml",
    FIXTURES / "schemas" / "risk_triage.json",
]
BIAS = 1.0e4


_RUNS: dict = {}


@pytest.fixture(params=PRESETS, ids=lambda p: p.name)
def verified(request, smollm2_model):
    """(fields, verify result, the linter's sites by name) of one preset, verified once."""
    from auditor.decoder import load_fields, verify_fields

    path = request.param
    if path not in _RUNS:
        fields, context = load_fields(path)
        result = verify_fields(
            fields, context, model=smollm2_model, progress=False, letters=False, parity="off"
        )
        sites = {site.name: site for site in analyse_file(path, str(path)).sites}
        _RUNS[path] = fields, result, sites
    return _RUNS[path]


def profile_pick(site, tokenizer, k: int) -> int:
    engine = get_engine("sum-close")
    tokens = SiteTokens(site, tokenizer)
    lost = {loss.index: loss.returned for loss in engine.losses(tokens)}
    return lost.get(k, k)  # type: ignore[return-value]


def test_verify_reports_every_variant_and_sum_close_is_its_full_sequence_pick(verified, smollm2_model):
    from auditor.eval.schema_verify import verification_summary

    _, result, sites = verified
    tokenizer = smollm2_model.linter_tokenizer
    assert {f.name for f in result.fields} == set(sites)
    for field in result.fields:
        assert set(field.full_sequence_variants) == set(VARIANTS), field.name
        pick = field.full_sequence_variants["sum-close"]
        assert pick == field.full_sequence_pick, field.name
        shown = verification_summary(field, result)["full_sequence_variants"]  # check --verify's
        assert shown == {name: field.options[i] for name, i in field.full_sequence_variants.items()}
        tokens = SiteTokens(sites[field.name], tokenizer)
        never = {loss.index for loss in get_engine("sum-close").losses(tokens)}
        assert pick not in never, field.name


def teacher_forced_logits(loaded, head: list[int], sequences: list[list[int]]):
    """The logits before each token of each option's sequence after `head`: one batched pass."""
    import torch

    rows = [head + list(s) for s in sequences]
    width = max(map(len, rows))
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    with torch.inference_mode():
        logits = loaded.model(input_ids=ids, attention_mask=mask).logits.float()
    return [logits[row, len(head) - 1 : len(head) - 1 + len(s)] for row, s in enumerate(sequences)]


def pushed_logprobs(logits, sequences: list[list[int]], k: int) -> list[list[float]]:
    """Each option's teacher-forced log-probs with the model pushed along option k's tokens."""
    import torch

    wanted = sequences[k]
    out = []
    for before, sequence in zip(logits, sequences):
        values = []
        for step, token in enumerate(sequence):
            scores = before[step].clone()
            if step < len(wanted) and list(sequence[:step]) == list(wanted[:step]):
                scores[wanted[step]] += BIAS  # on option k's path: the push
            values.append(float(torch.log_softmax(scores, dim=-1)[token]))
        out.append(values)
    return out


def test_pushed_model_picks_what_the_profile_returns(verified, smollm2_model):
    from auditor.decoder.prompt import build_prompt, plan_field

    fields, _, sites = verified
    tokenizer = smollm2_model.linter_tokenizer
    prompt_text = build_prompt(smollm2_model.tokenizer, fields, "No document.")
    prompt_ids = tokenizer.encode(prompt_text)
    checked = 0
    for spec in fields:
        plan = plan_field(tokenizer, spec, prompt_text, prompt_ids)
        profile_plan = get_engine("sum-close").field_plan(SiteTokens(sites[spec.name], tokenizer))
        assert [tuple(s) for s in plan.sequences] == list(profile_plan.sequences), spec.name
        # (the push decides; a short head after `{` keeps the model run small)
        logits = teacher_forced_logits(
            smollm2_model, tokenizer.encode("{\n") + list(plan.suffix_ids), plan.sequences
        )
        for k in range(len(plan.options)):
            logprobs = pushed_logprobs(logits, plan.sequences, k)
            assert live_pick("sum-close", logprobs, plan.option_texts) == profile_pick(
                sites[spec.name], tokenizer, k
            ), (spec.name, k)
            checked += 1
    assert checked >= 2 * len(fields)
