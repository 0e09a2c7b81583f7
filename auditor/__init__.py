"""pcdlint: audit enum schemas against LLM tokenizers for parallel constrained decoding."""

__version__ = "0.1.0"
