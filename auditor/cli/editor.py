"""`pcdlint server` (the language server) and `pcdlint mcp` (the MCP server for coding agents).

Both are handed the CLI's own configuration reader (auditor/cli/config.py, through
`ConfigReader`), so they read the same files, keys and defaults as `check`; the servers live in
auditor/editor/, which never imports the CLI. Their libraries are extras, imported only here,
when the command runs: a missing one is one line naming the extra (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.cli.common import fail
from auditor.distribution import install_hint
from auditor.errors import UsageError

if TYPE_CHECKING:
    from auditor.editor.workspace import ProjectSettings

EXTRA_MODULES = {"editor": ("pygls", "lsprotocol"), "mcp": ("mcp", "mcp_types", "pydantic", "anyio")}


class ConfigReader:
    """The configuration `check` reads, for a document: the nearest `.pcdlint.toml` or
    `pyproject.toml` with `[tool.pcdlint]`, walking up from the document's folder but not above
    its workspace root."""

    def locate(self, directory: Path, root: Path) -> Path | None:
        from auditor.cli.config import find_config

        found = find_config(directory, within=root)
        return found[0] if found else None

    def load(self, directory: Path, root: Path) -> ProjectSettings:
        from auditor.cli.config import load_config
        from auditor.editor.workspace import ProjectSettings

        config = load_config(cwd=directory, within=root)
        return ProjectSettings(
            config_path=config.path,
            lint_options=config.lint_options(),
            tokenizers=tuple(config.value("tokenizers")),
            max_bytes=config.value("max-file-bytes"),
            max_depth=config.value("max-depth"),
        )


def _missing_extra(error: ImportError, extra: str, command: str) -> None:
    """A missing library of `extra` is one line naming the extra; any other import error is a bug."""
    name = (error.name or "").split(".")[0]
    if name not in EXTRA_MODULES[extra]:
        raise error
    fail(f"`pcdlint {command}` needs the {extra} extra ({name} is not installed): {install_hint(extra)}")


@click.command("server")
@click.option(
    "--debounce",
    type=click.FloatRange(0, 10),
    default=0.2,
    show_default=True,
    metavar="SECONDS",
    help="Wait this long after the last change before linting (the client's "
    'initializationOptions {"debounce": SECONDS} wins).',
)
def server_command(debounce: float) -> None:
    """Run the language server on stdin/stdout: findings as you type, fixes as code actions.

    Editors start it (docs: Editors and agents); it reads the configuration `check` reads,
    nearest to each document, never runs `verify`, never reaches the network and never reads
    outside the workspace roots. Needs the editor extra.
    """
    try:
        from auditor.editor.lsp_server import serve
    except ImportError as error:
        _missing_extra(error, "editor", "server")
    serve(ConfigReader(), debounce)


@click.command("mcp")
@click.option(
    "--root",
    "roots",
    multiple=True,
    metavar="DIR",
    help="A folder the tools may read (repeatable; default: the working directory). "
    "Paths outside every root are refused.",
)
def mcp_command(roots: tuple[str, ...]) -> None:
    """Run the MCP server on stdin/stdout for coding agents: tools lint, explain, suggest.

    No tool writes a file, reaches the network or reads outside the roots. Needs the mcp extra.
    """
    from auditor.paths import resolve_path

    folders = []
    for root in roots or (".",):
        try:
            path = resolve_path(root, "--root")
        except UsageError as error:
            fail(str(error))
        if not path.is_dir():
            fail(f"--root {root}: not a directory")
        folders.append(path.resolve())
    try:
        from auditor.editor.mcp_server import serve
    except ImportError as error:
        _missing_extra(error, "mcp", "mcp")
    serve(ConfigReader(), folders)
