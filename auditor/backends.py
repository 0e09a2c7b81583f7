"""The backend table: every place a model runs for `verify`, `check --verify` and `eval`, by name.

One row per backend: its one name, the older spellings still accepted (aliases), what it is in a
few words, and the commands that take it. The CLI's `--backend` choices and help lists are made
from these rows (auditor.cli.choices); the decoder's `open_backend` opens them, from a
`BackendOptions` (below: the name and what that backend needs), which the CLI parses its flags
into. Pure data: the CLI reads it at start-up without loading the decoder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
            "decision requests POSTed to a System One server (`pcdlint verify`; `pcdlint eval` "
            "takes it too; not `check --verify`)",
            ("verify", "eval"),
        ),
    )
}
DEFAULT_BACKEND = "in-process"
DEFAULT_ROUTE = "/v1/systemone"  # systemone: the System One route after the server's URL
# every accepted spelling → the backend's one name
BACKEND_ALIASES: dict[str, str] = {alias: row.name for row in BACKENDS.values() for alias in row.aliases}


def backend_names(command: str) -> list[str]:
    """The backends `command`'s --backend takes, in table order."""
    return [row.name for row in BACKENDS.values() if command in row.commands]


def canonical_backend(name: str) -> str:
    """A backend's one name for any spelling the table accepts (unknown names unchanged)."""
    key = name.strip().lower()
    return BACKEND_ALIASES.get(key, key)


@dataclass(frozen=True)
class BackendOptions:
    """What `open_backend` needs: the backend's name and its settings."""

    backend: str = DEFAULT_BACKEND  # a name of the backend table (an alias is accepted)
    model: Any = None  # a spec (HF directory, hub id, .gguf), or a decoder LoadedModel
    tokenizer: str | None = None  # a server's tokenizer (default: `model` as a cached hub id)
    base_url: str | None = None  # a server backend's URL
    route: str = DEFAULT_ROUTE  # systemone: the path after base_url
    engine: str | None = None  # in-process decisions: the decision engine computed here
    device: str = "auto"
    dtype: str = "auto"
    allow_download: bool = False
    api_key_env: str | None = "OPENAI_API_KEY"  # the variable holding the server's key
    concurrency: int = 4
    timeout_s: float = 120.0
    retries: int = 3
    retry_after_cap: float = 60.0
    batch_size: int = 16  # openai: prompts per request where the server takes a list
    run_timeout_s: float | None = None  # openai, systemone: all requests of the run together
    max_response_bytes: int | None = None
    cache_budget_bytes: int | None = None  # in-process: the shared cache's budget
    full_sequence_mode: str = "tree"  # in-process: how full sequences are scored

    @property
    def name(self) -> str:
        """The backend's one name (the table's), for any spelling it accepts."""
        return canonical_backend(self.backend)
