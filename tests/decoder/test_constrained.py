"""The constrained-decoding pick against a real grammar engine (xgrammar, CPU) on SmolLM2.

For every enum field of a real preset, xgrammar's matcher masks SmolLM2's logits to an EBNF
grammar of the field's values, greedy decoding runs step by step from prompt + suffix, and
the decoded value must be the one ``constrained_pick`` found by walking the option trie
with the teacher-forced log-probs (no decoding at all).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.decoder.constrained import constrained_pick
from support import CORPUS, NO_CORPUS

REPO = Path(__file__).resolve().parents[2]
PRESET = CORPUS / "pcd-presets" / "spam_email.json"


def test_trie_walk_takes_the_best_child_at_each_node():
    # options: [1, 2, C], [1, 3, C], [4, C]; C = 9 closes
    sequences = [[1, 2, 9], [1, 3, 9], [4, 9]]
    logprobs = [[-0.5, -2.0, 0.0], [-0.5, -0.1, 0.0], [-0.9, 0.0]]
    pick = constrained_pick(sequences, logprobs)
    assert pick.option == 1 and pick.steps == 3 and pick.branch_points == 2
    # the full-sequence argmax would be option 1 as well, but first-token-best + early close differ:
    assert constrained_pick([[1, 2, 9], [1, 9]], [[-0.1, -3.0, 0.0], [-0.1, -0.2]]).option == 1
    # equal scores tie to the lower token id, as argmax over masked logits does
    assert constrained_pick([[5, 9], [4, 9]], [[-1.0, 0.0], [-1.0, 0.0]]).option == 1


@pytest.mark.model
def test_pick_matches_xgrammar_greedy_decoding():
    xgr = pytest.importorskip("xgrammar")
    torch = pytest.importorskip("torch")
    if not PRESET.is_file():
        pytest.skip(NO_CORPUS)
    from auditor.decoder import DecoderError, load_fields, load_model, verify_fields

    try:
        loaded = load_model(device="cpu", dtype="float32", progress=False)
    except DecoderError as exc:
        pytest.skip(f"default model unavailable: {exc}")
    fields, context = load_fields(PRESET)
    fields = [f for f in fields if all(isinstance(o, str) for o in f.options)]
    result = verify_fields(fields, context, model=loaded, progress=False, parity="off")

    from auditor.decoder.prompt import build_prompt

    tokenizer, model = loaded.tokenizer, loaded.model
    encode = loaded.linter_tokenizer.encode
    info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=model.config.vocab_size)
    compiler = xgr.GrammarCompiler(info)
    prompt_ids = encode(build_prompt(tokenizer, fields, context))
    agree = 0
    for field in result.fields:
        remainders = [option[len(field.prefix) :] for option in field.options]
        grammar = "root ::= (" + " | ".join(json.dumps(r) for r in remainders) + ') "\\""'
        matcher = xgr.GrammarMatcher(compiler.compile_grammar(grammar))
        bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
        ids = prompt_ids + encode(field.suffix_text)
        decoded = []
        with torch.inference_mode():
            # prompt + suffix once, then one token a step through the KV cache, as a decoder runs
            out = model(input_ids=torch.tensor([ids]), use_cache=True)
            for _step in range(32):
                logits = out.logits[0, -1].float()
                matcher.fill_next_token_bitmask(bitmask)
                xgr.apply_token_bitmask_inplace(logits.unsqueeze(0), bitmask)
                token = int(torch.argmax(logits))
                if token in info.stop_token_ids:
                    break
                assert matcher.accept_token(token)
                decoded.append(token)
                out = model(input_ids=torch.tensor([[token]]), cache=out.past_key_values, use_cache=True)
        text = tokenizer.decode(decoded)
        assert text.endswith('"'), text
        value = field.prefix + text[:-1]
        assert value in field.options
        assert value == field.options[field.constrained_pick], (field.name, value)
        agree += 1
    assert agree == len(result.fields) >= 5
