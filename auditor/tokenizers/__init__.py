"""Resolve, convert and cache tokenizers (built-in names, files, GGUF, SentencePiece, Tekken)."""
