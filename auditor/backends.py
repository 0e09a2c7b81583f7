"""The backend table: every place a model runs for `verify`, `check --verify` and `eval`, by name.

One row per backend: its one name, the older spellings still accepted (aliases), what it is in a
few words, and the commands that take it. The CLI's `--backend` choices and help lists are made
from these rows (auditor.cli.choices); the decoder's `open_backend` opens them. Pure data: no
imports, so the CLI reads it at start-up without loading the decoder.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendRow:
    name: str
    summary: str  # what it is, for the help lists
    commands: tuple[str, ...]  # the commands whose --backend takes it
    aliases: tuple[str, ...] = ()  # other spellings accepted for it (never shown in a list)
    # the decision engines (engine-table rows) whose answers it computes for `verify --engine`
    decision_engines: tuple[str, ...] = ()


BACKENDS: dict[str, BackendRow] = {
    row.name: row
    for row in (
        BackendRow(
            "in-process",
            "the model runs in this process (torch)",
            ("verify", "check", "eval"),
            aliases=("local",),
            decision_engines=("llm2jev",),
        ),
        BackendRow(
            "openai",
            "scored through an OpenAI-compatible /v1/completions server (vLLM, SGLang, llama-cpp-python)",
            ("verify", "check", "eval"),
        ),
        BackendRow(
            "systemone",
            "decision requests POSTed to a System One server",
            ("verify", "eval"),
        ),
    )
}
DEFAULT_BACKEND = "in-process"
# every accepted spelling → the backend's one name
BACKEND_ALIASES: dict[str, str] = {alias: row.name for row in BACKENDS.values() for alias in row.aliases}


def backend_names(command: str) -> list[str]:
    """The backends `command`'s --backend takes, in table order."""
    return [row.name for row in BACKENDS.values() if command in row.commands]


def canonical_backend(name: str) -> str:
    """A backend's one name for any spelling the table accepts (unknown names unchanged)."""
    key = name.strip().lower()
    return BACKEND_ALIASES.get(key, key)
