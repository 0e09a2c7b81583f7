"""The built-in tokenizers are the real ones: known ids, special tokens, caching, errors."""

from __future__ import annotations

import os

import pytest

from auditor.errors import TokenizerError
from auditor.tokenizers.loader import cache_dir, load_tokenizer


def test_qwen25_known_ids(qwen):
    assert qwen.encode("Hello, world!") == [9707, 11, 1879, 0]
    assert qwen.encode("MEDIUM") == [44, 50786]
    assert qwen.encode("<|im_start|>") == [151644]


def test_qwen25_added_tokens_at_real_ids(qwen):
    specials = qwen.special_tokens
    assert len(specials) == 22
    assert specials["<|endoftext|>"] == 151643
    assert specials["<|im_end|>"] == 151645
    assert specials["<|file_sep|>"] == 151664
    assert qwen.vocab_size == 151665


def test_qwen25_nfc_normalizer(qwen):
    # "é" as e + combining accent is normalised to the precomposed character first
    assert qwen.encode("caf\u0065\u0301") == qwen.encode("caf\u00e9")


def test_smollm2_keeps_its_digit_pre_tokenizer(smollm2):
    # transformers' own GGUF conversion gives [81, 216, 216, 33] here (digits pre-tokenizer lost)
    assert smollm2.encode("a  1") == [81, 256, 33]
    assert smollm2.encode("2024") == [34, 32, 34, 36]
    assert smollm2.special_tokens["<|im_start|>"] == 1


def test_qwen36_is_a_different_vocabulary():
    tok = load_tokenizer("qwen3.6")
    assert tok.vocab_size == 248077
    assert tok.special_tokens["<|im_start|>"] == 248045


def test_conversion_is_cached_by_sha256(tmp_path, monkeypatch):
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path))
    first = load_tokenizer("qwen2.5")
    assert first.encode("MEDIUM") == [44, 50786]
    # ASCII text encodes from the rank tables (read once, then kept); the `tokenizers` build
    # is converted and cached where something first asks for it
    assert len(list(tmp_path.glob("tables-v*-*.bin"))) == 1
    assert not list(tmp_path.glob("qwen2-v*-*.json"))
    assert first.hf.get_vocab_size(with_added_tokens=True) == first.vocab_size
    cached = list(tmp_path.glob("qwen2-v*-*.json"))
    assert len(cached) == 1
    assert not list(tmp_path.glob(".tmp-*")), "writes are atomic: no temp files left"
    again = load_tokenizer("qwen2.5")
    assert again.encode("MEDIUM") == first.encode("MEDIUM")
    assert cache_dir() == tmp_path


def test_a_damaged_rank_tables_entry_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PCDLINT_CACHE_DIR", str(tmp_path))
    assert load_tokenizer("qwen2.5").encode("MEDIUM") == [44, 50786]
    (entry,) = tmp_path.glob("tables-v*-*.bin")
    for damage in (b"", b"\x00garbage", entry.read_bytes()[:1000]):
        entry.write_bytes(damage)
        assert load_tokenizer("qwen2.5").encode("MEDIUM") == [44, 50786]
        assert entry.stat().st_size > 1_000_000, "rewritten whole"


def test_tokenizer_json_path_and_directory(tmp_path, qwen):
    (tmp_path / "tokenizer.json").write_text(qwen.hf.to_str(), encoding="utf-8")
    by_file = load_tokenizer(str(tmp_path / "tokenizer.json"))
    by_dir = load_tokenizer(str(tmp_path))
    assert by_file.encode("MEDIUM") == by_dir.encode("MEDIUM") == [44, 50786]


def test_an_unchanged_tokenizer_file_is_parsed_once_per_process(tmp_path, smollm2, qwen):
    """In-process callers (a test suite, `auditor.lint` per test) parse a file once; a file
    replaced is read again."""
    path = tmp_path / "tokenizer.json"
    path.write_text(smollm2.hf.to_str(), encoding="utf-8")
    first, second = load_tokenizer(str(path)), load_tokenizer(str(path))
    assert first.hf is second.hf and first is not second  # each load keeps its own memo
    assert first.encode("MEDIUM") == smollm2.encode("MEDIUM") != qwen.encode("MEDIUM")
    replacement = tmp_path / "new.json"
    replacement.write_text(qwen.hf.to_str(), encoding="utf-8")
    os.replace(replacement, path)
    third = load_tokenizer(str(path))
    assert third.hf is not first.hf
    assert third.encode("MEDIUM") == qwen.encode("MEDIUM")


def test_unknown_spec_is_one_actionable_line():
    with pytest.raises(TokenizerError, match="unknown tokenizer 'nope'") as info:
        load_tokenizer("nope")
    assert "\n" not in str(info.value)


def test_hub_id_cache_miss_without_download(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(TokenizerError, match=r"not in the local Hugging Face cache.*--allow-download"):
        load_tokenizer("Qwen/Qwen2.5-1.5B-Instruct")


def test_not_a_tokenizer_file(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(TokenizerError, match=r"not a tokenizer\.json"):
        load_tokenizer(str(bad))
