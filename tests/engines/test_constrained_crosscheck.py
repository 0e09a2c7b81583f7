"""Cross-check: the `constrained` profile's oracle picks equal a real constrained decoder's.

xgrammar (CPU wheel) masks SmolLM2-135M's logits with a grammar of the field's options, as a
constrained decoder does, and decodes greedily after `{\\n  "<field>": `. A logits processor
pushes the model to option k: at step j it adds a large bias to option k's j-th canonical
token (the oracle "certain of option k, writing its tokens"). The option the real decoder ends
on must be the one the profile's simulation returns, for every option of a few colliding
fields. This is a check on the profile, not the product's evidence.
"""

from __future__ import annotations

import json

import pytest

from auditor.pcd.engines import get_engine
from auditor.pcd.scoring import SiteTokens
from support import get_tokenizer

pytestmark = pytest.mark.model

BIAS = 1.0e4
MAX_STEPS = 24
FIELDS = {
    "recommended_action": [
        "DELIVER",
        "DELIVER_WITH_WARNING",
        "QUARANTINE",
        "BLOCK_SENDER",
        "REPORT_TO_SECURITY",
    ],
    "lib": ["ES2015", "ES2015.Collection", "ES2016"],
    "locale": ["de", "default", "de-DE", "en"],
}


@pytest.fixture(scope="module")
def decoder():
    xgr = pytest.importorskip("xgrammar")
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from auditor.decoder import DecoderError, load_model

    try:
        loaded = load_model(device="cpu", dtype="float32", progress=False)
    except DecoderError as exc:
        pytest.skip(f"SmolLM2 unavailable: {exc}")
    vocab = loaded.model.config.vocab_size
    info = xgr.TokenizerInfo.from_huggingface(loaded.tokenizer, vocab_size=vocab)
    return xgr, torch, loaded, xgr.GrammarCompiler(info), vocab


def _site(name, options):
    from dataclasses import MISSING, fields

    from auditor.schema.sites import Site

    values = {f.name: None for f in fields(Site) if f.default is MISSING and f.default_factory is MISSING}
    values.update(
        name=name,
        field=name,
        options=options,
        pointer=f"/properties/{name}",
        option_pointers=[""] * len(options),
    )
    return Site(**values)


def _ebnf_string(text: str) -> str:
    return json.dumps(text)  # an EBNF string literal: \" and \\ escapes, as in JSON


def real_picks(decoder, suffix: str, options: list[str], pushes) -> list[str]:
    """Greedy constrained decoding with xgrammar, one batch row per push (row k pushed along
    option k's tokens); the text each row writes."""
    xgr, torch, loaded, compiler, vocab = decoder
    from transformers import DynamicCache

    compiled = compiler.compile_grammar("root ::= " + " | ".join(_ebnf_string(f'"{o}"') for o in options))
    rows = len(pushes)
    matchers = [xgr.GrammarMatcher(compiled) for _ in range(rows)]
    complete = {f'"{o}"' for o in options}
    prompt = loaded.tokenizer.encode("{\n" + suffix, add_special_tokens=False)
    cache = DynamicCache(config=loaded.model.config)
    bitmask = xgr.allocate_token_bitmask(rows, vocab)
    written: list[list[int]] = [[] for _ in range(rows)]
    done = [False] * rows
    feed = [prompt] * rows
    with torch.inference_mode():
        for step in range(MAX_STEPS):
            out = loaded.model(input_ids=torch.tensor(feed), cache=cache, use_cache=True, logits_to_keep=1)
            logits = out.logits[:, -1, :vocab].float().clone()
            for row, push in enumerate(pushes):
                if not done[row]:
                    matchers[row].fill_next_token_bitmask(bitmask, row)
                    if step < len(push):
                        logits[row, push[step]] += BIAS
            xgr.apply_token_bitmask_inplace(logits, bitmask)
            picks = torch.argmax(logits, dim=-1).tolist()
            for row, token in enumerate(picks):
                if done[row]:
                    continue
                assert matchers[row].accept_token(token), f"xgrammar refused its own pick {token}"
                written[row].append(token)
                done[row] = loaded.tokenizer.decode(written[row]) in complete
            if all(done):
                break
            feed = [[written[row][-1]] for row in range(rows)]  # finished rows repeat, ignored
    return [loaded.tokenizer.decode(w) for w in written]


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_constrained_oracle_picks_match_xgrammar(decoder, name):
    tokenizer = get_tokenizer("smollm2")
    options = FIELDS[name]
    tokens = SiteTokens(_site(name, options), tokenizer)
    engine = get_engine("constrained")
    plan = engine.field_plan(tokens)
    loaded = decoder[2]
    for text, sequence in zip(plan.texts, plan.sequences):  # both tokenizers cut alike
        assert loaded.tokenizer.encode(text, add_special_tokens=False) == list(sequence)
    assert get_engine("gather").field_plan(tokens).has_collision  # the fields do collide
    lost = {loss.index: loss.returned for loss in engine.losses(tokens)}
    got = real_picks(decoder, plan.suffix, options, plan.sequences)
    simulated = [plan.texts[lost.get(k, k)] for k in range(len(options))]
    assert got == simulated
