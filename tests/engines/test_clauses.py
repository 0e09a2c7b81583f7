"""Every clause of the engines' code, on its own field of fixtures/engines/clause_probe.json.

The probe is read by pcdlint's own parser and tokenized with two real tokenizers (qwen2.5 and
smollm2). For each field and engine the table says which options the engine never returns,
what it returns instead and which clause decides it (the engine modules' docstrings cite the
upstream file and line of each clause). An engine left out of a field's row loses nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.pcd.engines import ENGINES, get_engine
from auditor.pcd.scoring import SiteTokens
from auditor.schema.cache import analyse_file
from support import get_tokenizer

PROBE = Path(__file__).resolve().parents[2] / "fixtures" / "engines" / "clause_probe.json"
TOKENIZERS = ("qwen2.5", "smollm2")

# field -> engine -> {lost option index: (returned index or None, reason)}; `why` beside each
EXPECTED: dict[str, dict[str, dict[int, tuple[int | None, str]]]] = {
    # RLCD gathers encode(rest)[0]: '!' for both '!' and '! urgent' ('!"' would be a token of its
    # own); the greedy text '! urgent' then starts with '!', listed first
    "bare_remainder": {
        "gather": {1: (0, "tie")},
        "rlcd-mlx": {1: (0, "prefix-match")},
        "sum": {1: (0, "sequence-prefix")},
        "mean": {1: (0, "sequence-prefix")},
    },
    # the ',' token ends the greedy loop: the text is 'a', which 'a, b' (first) starts with
    "stop_comma": {"gather": {1: (0, "tie")}, "rlcd-mlx": {1: (0, "stop-char")}},
    # the escaped quote's token holds '"': the text is 'say', which 'say "bye"' starts with
    "stop_quote": {"gather": {1: (0, "tie")}, "rlcd-mlx": {1: (0, "stop-char")}},
    # the model writes `\n` escaped: 'line\\nthree' matches no raw choice and has no digits,
    # so choices[0] is returned (index 0 is returned that way too)
    "escaped_newline": {"gather": {1: (0, "tie")}, "rlcd-mlx": {1: (0, "first-choice-fallback")}},
    # ' b' is generated and stripped to 'b', which the option 'b' (first) matches
    "strip": {"gather": {3: (2, "tie")}, "rlcd-mlx": {1: (0, "strip")}},
    # 'v1' / 'v2' (stripped) match nothing: their digits pick choices[1] / choices[2]; 'w' has
    # none and falls to choices[0]
    "digit_fallback": {
        "gather": {1: (0, "tie")},
        "rlcd-mlx": {0: (1, "digit-fallback"), 1: (2, "digit-fallback"), 2: (0, "first-choice-fallback")},
    },
    # qwen2.5: 4 tokens are whole characters and the prefix match recovers both; smollm2 (byte
    # tokens): 4 tokens cut a character, nothing matches, choices[0] is returned (see below)
    "first_choice": {"gather": {1: (0, "tie")}},
    # the prefix match in schema order; `sum`/`mean` lose the extension to the shorter option,
    # `byte-norm` does not (fewer tokens per character), `sum-close` does not (the quote)
    "prefix_match": {
        "gather": {1: (0, "tie")},
        "rlcd-mlx": {1: (0, "prefix-match")},
        "sum": {1: (0, "sequence-prefix")},
        "mean": {1: (0, "sequence-prefix")},
    },
    # listed first, the extension wins the mean's tie (SGLang) but not the sum (lm-eval acc)
    "mean_order": {
        "gather": {1: (0, "tie")},
        "rlcd-mlx": {1: (0, "prefix-match")},
        "sum": {0: (1, "sequence-prefix")},
    },
    # openjev refuses the field ("Option IDs must be unique"); every other engine returns the
    # first 'yes' for the second
    "duplicate_ids": {
        "gather": {2: (0, "tie")},
        "rlcd-mlx": {2: (0, "prefix-match")},
        "openjev": {0: (None, "duplicate-id"), 1: (None, "duplicate-id"), 2: (None, "duplicate-id")},
        "constrained": {2: (0, "mask")},
        "sum": {2: (0, "sequence-prefix")},
        "sum-close": {2: (0, "sequence-prefix")},
        "mean": {2: (0, "sequence-prefix")},
        "byte-norm": {2: (0, "sequence-prefix")},
    },
    # openjev ids must be strings: a boolean field is refused
    "non_string_ids": {"openjev": {0: (None, "non-string-id"), 1: (None, "non-string-id")}},
}
BY_TOKENIZER = {
    ("smollm2", "first_choice"): {
        "rlcd-mlx": {1: (0, "first-choice-fallback"), 2: (0, "first-choice-fallback")}
    },
}
# engines that always lose what `sum` loses (`full-sequence` is `sum` under its earlier name)
ALIASES = {"full-sequence": "sum"}

# every clause the profiles model, and the field that shows it
CLAUSES = {
    "tie": "bare_remainder",
    "prefix-match": "prefix_match",
    "stop-char": "stop_comma",
    "strip": "strip",
    "digit-fallback": "digit_fallback",
    "first-choice-fallback": "escaped_newline",
    "duplicate-id": "duplicate_ids",
    "non-string-id": "non_string_ids",
    "sequence-prefix": "prefix_match",
}


@pytest.fixture(scope="module")
def probe():
    return {site.name: site for site in analyse_file(PROBE, str(PROBE)).sites}


def losses(site, tokenizer, engine: str) -> dict[int, tuple[int | None, str]]:
    tokens = SiteTokens(site, get_tokenizer(tokenizer))
    return {loss.index: (loss.returned, loss.reason) for loss in get_engine(engine).losses(tokens)}


def expected(tokenizer: str, field: str, engine: str) -> dict:
    row = {**EXPECTED[field], **BY_TOKENIZER.get((tokenizer, field), {})}
    return row.get(ALIASES.get(engine, engine), {})


def test_probe_has_one_field_per_row(probe):
    assert set(probe) == set(EXPECTED)
    assert set(CLAUSES.values()) <= set(EXPECTED)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("engine", list(ENGINES))
def test_each_engine_loses_what_its_clauses_say(probe, tokenizer, engine):
    for field, site in probe.items():
        assert losses(site, tokenizer, engine) == expected(tokenizer, field, engine), field


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_every_clause_decides_a_loss_on_its_field(probe, tokenizer):
    for clause, field in CLAUSES.items():
        reasons = {why for engine in ENGINES for _, why in losses(probe[field], tokenizer, engine).values()}
        assert clause in reasons, (clause, field)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_bare_remainder_collides_where_remainder_and_quote_do_not(probe, tokenizer):
    """The clause matters: with the quote, '!"' is its own first token; RLCD reads '!' alone."""
    tokens = SiteTokens(probe["bare_remainder"], get_tokenizer(tokenizer))
    plan = get_engine("gather").field_plan(tokens)
    assert plan.first_tokens[0] == plan.first_tokens[1]
    assert tokens.closed_sequences[0][0] != tokens.closed_sequences[1][0]  # type: ignore[index]


def test_first_choice_returns_index_zero_cut_mid_character(probe):
    """smollm2 spells each character in bytes: 4 greedy tokens end inside one, the text matches
    no choice and has no digits, so choices[0] is returned — for option 0 that is right."""
    from auditor.pcd.engines.rlcd_mlx import FIRST_CHOICE, greedy, match

    tokens = SiteTokens(probe["first_choice"], get_tokenizer("smollm2"))
    plan = get_engine("rlcd-mlx").field_plan(tokens)
    run = greedy(tokens, plan.sequences[0], tokens.prefix)
    assert "\ufffd" in run.text and run.budget_hit
    assert match(tuple(tokens.site.options), run.text) == (0, FIRST_CHOICE)
    assert 0 not in losses(probe["first_choice"], "smollm2", "rlcd-mlx")


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_stop_characters_cut_the_greedy_text(probe, tokenizer):
    from auditor.pcd.engines.rlcd_mlx import greedy

    for field, k, text in (("stop_comma", 1, "a"), ("stop_quote", 1, "say")):
        tokens = SiteTokens(probe[field], get_tokenizer(tokenizer))
        run = greedy(tokens, get_engine("rlcd-mlx").field_plan(tokens).sequences[k], tokens.prefix)
        assert run.stopped and run.text == text, field


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_raw_newline_token_stops_the_greedy_text(probe, tokenizer):
    """The newline stop: a model writing valid JSON escapes a newline (`escaped_newline` above),
    so only a raw newline, off the JSON, hits it; the loop stops before keeping that token."""
    from auditor.pcd.engines.rlcd_mlx import greedy

    loaded = get_tokenizer(tokenizer)
    tokens = SiteTokens(probe["escaped_newline"], loaded)
    run = greedy(tokens, tuple(loaded.encode('line\ntwo"')), tokens.prefix)
    assert run.stopped and run.text == "line"
