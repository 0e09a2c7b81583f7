"""Resolve, convert and cache tokenizers (built-in names, files, GGUF, SentencePiece, Tekken, hub ids)."""

from auditor.cachedir import cache_dir
from auditor.tokenizers.loader import DEFAULT_TOKENIZER, LoadedTokenizer, load_tokenizer, load_tokenizers

__all__ = ["DEFAULT_TOKENIZER", "LoadedTokenizer", "cache_dir", "load_tokenizer", "load_tokenizers"]
