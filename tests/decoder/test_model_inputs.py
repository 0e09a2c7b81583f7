"""Model directories that do not hold one consistent model are one line, exit 2, before or
instead of an allocation or an index error mid-run (issue 36).

The models are tiny real Llama checkpoints written by transformers (random weights) with
SmolLM2's real tokenizer beside them, then made inconsistent the way a mixed-up download is.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from support import get_tokenizer

SCHEMA = {"type": "object", "properties": {"c": {"enum": ["CAT_1", "CAT_2"]}}}


def tiny_model(directory, vocab_size: int = 49152, **config_changes):
    pytest.importorskip("torch")
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    LlamaForCausalLM(config).save_pretrained(directory)
    get_tokenizer("smollm2").hf.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast"})
    )
    if config_changes:
        data = json.loads((directory / "config.json").read_text())
        data.update(config_changes)
        (directory / "config.json").write_text(json.dumps(data))
    return directory


def verify_model(model_dir, write_schema, *extra):
    result = CliRunner().invoke(
        cli,
        [
            "verify",
            str(write_schema(SCHEMA)),
            "--model",
            str(model_dir),
            "--quiet",
            "--device",
            "cpu",
            *extra,
        ],
    )
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"vocab_size": 10**12}, "vocab_size = 1000000000000 (expected an integer from 1 to 2097152)"),
        ({"hidden_size": "16"}, "hidden_size = '16' (expected an integer"),
        ({"text_config": {"vocab_size": -1}}, "vocab_size = -1"),
    ],
)
def test_an_impossible_config_is_refused_before_loading(changes, says, tmp_path, write_schema):
    directory = tmp_path / "model"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 64, **changes}))
    assert says in verify_model(directory, write_schema)


@pytest.mark.model
def test_weights_that_do_not_match_the_config_are_one_line(tmp_path, write_schema):
    line = verify_model(tiny_model(tmp_path / "model", hidden_size=32), write_schema)
    assert "the weights' shapes do not match config.json" in line


@pytest.mark.model
def test_a_tokenizer_larger_than_the_embedding_is_one_line(tmp_path, write_schema):
    line = verify_model(tiny_model(tmp_path / "model", vocab_size=64), write_schema)
    assert "the tokenizer has 49152 tokens but the model's embedding has 64 rows" in line


@pytest.mark.model
def test_a_prompt_longer_than_the_model_positions_is_one_line(tmp_path, write_schema):
    line = verify_model(tiny_model(tmp_path / "model"), write_schema, "--context", "word " * 200)
    assert "more than the model's context of 128 tokens" in line
