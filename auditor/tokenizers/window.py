"""The context window of the model a tokenizer was loaded from, where `-t` named the model itself:
a model directory's config.json (`max_position_embeddings`, or its `text_config`'s) or a GGUF's
`<architecture>.context_length`. A built-in, a bare tokenizer.json or a hub id names no model,
so no window: nothing beside what was named is read."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from auditor.tokenizers.loader import LoadedTokenizer

CONFIG_BYTES = 4_000_000  # a config.json larger than this is no model config


@dataclass(frozen=True)
class ModelWindow:
    tokens: int
    origin: str  # where it was read: "config.json max_position_embeddings", "GGUF llama.context_length"


def _positive(value: object) -> int | None:
    return value if type(value) is int and value > 0 else None


def _from_config(directory: Path) -> ModelWindow | None:
    path = directory / "config.json"
    try:
        if not path.is_file() or path.stat().st_size > CONFIG_BYTES:
            return None
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    for holder, where in ((config, ""), (config.get("text_config"), "text_config.")):
        found = _positive(holder.get("max_position_embeddings")) if isinstance(holder, dict) else None
        if found:
            return ModelWindow(found, f"{path.name} {where}max_position_embeddings")
    return None


def _from_gguf(path: Path) -> ModelWindow | None:
    from auditor.tokenizers.gguf_header import GGUFHeaderError, read_gguf_header

    try:
        metadata = read_gguf_header(path).metadata
    except GGUFHeaderError:
        return None
    arch = metadata.get("general.architecture")
    key = f"{arch}.context_length"
    found = _positive(metadata.get(key)) if isinstance(arch, str) else None
    return ModelWindow(found, f"GGUF {key}") if found else None


def model_window(tokenizer: LoadedTokenizer) -> ModelWindow | None:
    """The window of the model `-t` named (a directory or a .gguf), read once per tokenizer."""
    key = "model-window"
    if key not in tokenizer.derived:
        source = Path(tokenizer.source)
        found = None
        try:
            if source.is_dir():
                found = _from_config(source)
            elif source.suffix.lower() == ".gguf" and source.is_file():
                found = _from_gguf(source)
        except OSError:
            found = None
        tokenizer.derived[key] = found
    return tokenizer.derived[key]
