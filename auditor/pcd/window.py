"""How much of a decision request's state an engine can read: the state as the engine renders
it, counted with the tokenizer, against the engine's window (the engine table's
`context_tokens` where a source documents one, else the served model's own, read from the
model directory or GGUF named with `-t`). Pure but for reading that model's config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.pcd.engines.table import EngineRow
from auditor.pcd.readouts import readout
from auditor.pcd.readouts.base import text_of
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.window import model_window

GENERIC = "the engine refuses the prompt or cuts it"


@dataclass(frozen=True)
class Window:
    tokens: int
    origin: str  # where it was read: the engine table, config.json, a GGUF's header, the option


def engine_window(
    row: EngineRow, tokenizer: LoadedTokenizer | None, configured: int | None = None
) -> Window | None:
    """The window a request's prompt must fit under this engine, or None where none is known:
    the one configured (the served context length), a documented window of the engine's own,
    else (for an engine that serves the team's model: a local one, or no engine named) the
    window of the model `-t` named."""
    if configured:
        return Window(configured, "the configured context-tokens")
    if row.context_tokens:
        return Window(row.context_tokens, f"the engine table ({row.context_source})")
    if tokenizer is None or (getattr(readout(row), "HOSTED", False) and not row.default):
        return None
    found = model_window(tokenizer)
    return Window(found.tokens, found.origin) if found else None


def rendered_state(row: EngineRow, state: Any) -> str:
    """The state as the engine writes it into the prompt: its family's `state_text` where it has
    one (llm2jev flattens objects into `key: value` lines), else a string as it is and an object
    as compact JSON (SGLang, llama.cpp, the hosted engines)."""
    return getattr(readout(row), "state_text", text_of)(state)


def over_window(row: EngineRow) -> str:
    """What the engine does with a prompt past its window (its family's `OVER_WINDOW`)."""
    return str(getattr(readout(row), "OVER_WINDOW", GENERIC)).format(engine=row.name)
