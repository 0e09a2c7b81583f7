"""Engine profiles, checked against their documented procedures with real tokenizers."""

from __future__ import annotations

from dataclasses import MISSING, fields

import pytest

from auditor.pcd.engines import ENGINES, get_engine
from auditor.pcd.scoring import SiteTokens
from auditor.schema.sites import Site

DELIVER = ["DELIVER", "DELIVER_WITH_WARNING", "QUARANTINE", "BLOCK_SENDER", "REPORT_TO_SECURITY"]


def tokens_for(tokenizer, name, options) -> SiteTokens:
    values = {f.name: None for f in fields(Site) if f.default is MISSING and f.default_factory is MISSING}
    values.update(
        name=name,
        field=name,
        options=options,
        pointer=f"/properties/{name}",
        option_pointers=[""] * len(options),
    )
    return SiteTokens(Site(**values), tokenizer)


def lost(engine: str, tokens) -> dict:
    return {
        tokens.site.options[loss.index]: (loss.returned_option, loss.reason)
        for loss in get_engine(engine).losses(tokens)
    }


def test_registry_names_the_profiles_and_gather_is_default():
    from auditor.pcd.engines import DEFAULT_ENGINE

    assert list(ENGINES) == [
        "gather",
        "rlcd-mlx",
        "openjev",
        "constrained",
        "full-sequence",
        "sum",
        "sum-close",
        "mean",
        "byte-norm",
    ]
    assert DEFAULT_ENGINE == "gather"
    with pytest.raises(ValueError, match="unknown engine 'vllm'"):
        get_engine("vllm")


@pytest.mark.parametrize("name", ["gather", "rlcd-mlx"])
def test_rlcd_scores_booleans_after_the_space(qwen, name):
    tokens = tokens_for(qwen, "flag", [True, False])
    plan = get_engine(name).field_plan(tokens)
    assert plan.suffix == '  "flag": '  # RLCD: `": ` then encode("true")
    assert plan.sequences == (tuple(qwen.encode("true")), tuple(qwen.encode("false")))
    assert tokens.literal_suffix == '  "flag":'  # pcdlint's own canonical cut differs
    assert get_engine(name).losses(tokens) == []


def test_rlcd_candidate_sequences_carry_the_closing_quote(qwen):
    tokens = tokens_for(qwen, "tier", ["TIER_1", "TIER_2", "DIRECTOR"])
    plan = get_engine("gather").field_plan(tokens)
    assert plan.sequences == tuple(tuple(qwen.encode(o + '"')) for o in ["TIER_1", "TIER_2", "DIRECTOR"])


def test_gather_ties_go_to_the_lowest_index(qwen):
    options = ["CAT_000_Live_Animals", "CAT_001_Meat", "CAT_002_Fish", "CAT_103_Tools"]
    got = lost("gather", tokens_for(qwen, "category", options))
    assert got == {
        "CAT_001_Meat": ("CAT_000_Live_Animals", "tie"),
        "CAT_002_Fish": ("CAT_000_Live_Animals", "tie"),
    }


def test_rlcd_mlx_prefix_match_in_schema_order(qwen, smollm2):
    for tokenizer in (qwen, smollm2):
        tokens = tokens_for(tokenizer, "action", DELIVER)
        assert lost("rlcd-mlx", tokens) == {"DELIVER_WITH_WARNING": ("DELIVER", "prefix-match")}
        # the other way round `c.startswith(generated)` picks the longer one for DELIVER:
        # either order loses one of the two
        swapped = [DELIVER[1], DELIVER[0], *DELIVER[2:]]
        assert lost("rlcd-mlx", tokens_for(tokenizer, "action", swapped)) == {
            "DELIVER": ("DELIVER_WITH_WARNING", "prefix-match")
        }


def test_rlcd_mlx_generated_text_is_four_greedy_tokens(qwen):
    from auditor.pcd.engines.rlcd_mlx import greedy

    tokens = tokens_for(
        qwen, "outcome", ["REFUND_REQUEST_APPROVED_BY_MANAGER", "REFUND_REQUEST_APPROVED_BY_SYSTEM", "OTHER"]
    )
    sequence = tuple(qwen.encode('REFUND_REQUEST_APPROVED_BY_SYSTEM"'))
    assert len(sequence) > 4
    run = greedy(tokens, sequence, "")
    text = run.text
    assert text == qwen.decode(list(sequence[:4])) and run.budget_hit and not run.stopped
    assert "REFUND_REQUEST_APPROVED_BY_SYSTEM".startswith(text)
    assert lost("rlcd-mlx", tokens) == {
        "REFUND_REQUEST_APPROVED_BY_SYSTEM": ("REFUND_REQUEST_APPROVED_BY_MANAGER", "budget")
    }


def test_rlcd_mlx_fallback_only_runs_on_a_collision(qwen):
    # no first-token collision: gather decides and `default` is returned despite `de`
    tokens = tokens_for(qwen, "locale", ["de", "default", "en"])
    assert not get_engine("rlcd-mlx").field_plan(tokens).has_collision
    assert lost("rlcd-mlx", tokens) == {}
    assert get_engine("rlcd-mlx").extra_passes(tokens) == 0


def test_openjev_limits_and_letters(qwen):
    engine = get_engine("openjev")
    assert engine.letters == "ABCDEFGHIJKLMNOP"
    for n, refused in ((1, True), (2, False), (16, False), (17, True), (22, True)):
        tokens = tokens_for(qwen, "code", [f"X{i:02d}" for i in range(n)])
        losses = engine.losses(tokens)
        assert (len(losses) == n) is refused, n
        assert all(loss.reason == "option-cap" for loss in losses)
    plan = engine.field_plan(tokens_for(qwen, "code", ["X00", "X01", "X02"]))
    assert plan.letters == ("A", "B", "C") and plan.suffix == '  "code": "'


def test_full_sequence_prefix_loses_whatever_the_order(qwen):
    for order in (DELIVER, [DELIVER[1], DELIVER[0], *DELIVER[2:]]):
        got = lost("full-sequence", tokens_for(qwen, "action", order))
        assert got == {"DELIVER_WITH_WARNING": ("DELIVER", "sequence-prefix")}


def test_constrained_returns_every_option_and_pays_per_token(qwen):
    tokens = tokens_for(qwen, "action", DELIVER)
    engine = get_engine("constrained")
    assert engine.losses(tokens) == []
    assert engine.extra_passes(tokens) == max(len(qwen.encode(f'"{o}"')) for o in DELIVER) - 1


def test_constrained_walk_stops_when_the_mask_has_no_path(qwen):
    from auditor.pcd.engines.constrained import walk

    plan = get_engine("constrained").field_plan(tokens_for(qwen, "risk", ["low", "high"]))
    assert walk(plan, plan.sequences[0]) == 0 and walk(plan, plan.sequences[1]) == 1
    assert walk(plan, tuple(qwen.encode('"medium"'))) is None
