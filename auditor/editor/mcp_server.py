"""`pcdlint mcp`: an MCP server (stdio, the official `mcp` SDK) for coding agents.

Tools:
- `lint`: a path (a file or folder under a root) or inline text (a schema or a decision request,
  named by `filename` for its kind and for config matching; never read) → the JSON v1 report,
  the document `pcdlint check -f json` writes for the same input;
- `explain`: a rule's documentation;
- `suggest`: each flagged field's verified renaming as text edits (1-based lines, code-point
  columns, end exclusive), checked by linting the edited text again.

The configuration is the one `check` reads, nearest to the path (or to `filename` under the
first root). No tool writes a file, reaches the network (tokenizers load cache-only), imports
the workspace's code, or reads outside the roots the server was started with.
"""

import json
import logging
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from auditor.editor.workspace import SettingsReader, Workspace, under, verified_fix
from auditor.errors import UsageError
from auditor.linter.engine import LintRun
from auditor.linter.selection import find_rule
from auditor.linter.suggest import fix_entries
from auditor.paths import resolve_path
from auditor.reporting import render
from auditor.schema.documents import read_source
from auditor.version import __version__

INSTRUCTIONS = (
    "pcdlint lints enum schemas and LLM decision requests against the tokenizers and engines that "
    "score them. Call `lint` on a file, folder or inline request before shipping it, `explain` on a "
    "rule code for why a finding matters, `suggest` for verified renamings as text edits."
)


def _names(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def one_input(path: str, text: str) -> None:
    """`lint` and `suggest` take a path or a text. (Both are plain `str` arguments, "" when not
    given: the SDK parses a JSON string given for an argument of any other type into a dict.)"""
    if bool(path) == bool(text):
        raise ToolError("give exactly one of `path` or `text`")


def build_server(reader: SettingsReader, roots: list[Path]) -> MCPServer:
    """The server with its three tools."""
    workspace = Workspace(roots, reader)
    server: MCPServer = MCPServer(
        name="pcdlint", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def named_path(path: str) -> Path:
        try:
            given = resolve_path(path, "path")
        except UsageError as error:
            raise ToolError(str(error)) from None
        target = given if given.is_absolute() else workspace.roots[0] / given
        if under(target, workspace.roots) is None:
            raise ToolError(f"{path}: outside the roots this server may read")
        if not target.exists():
            raise ToolError(f"{path}: no such file or folder")
        return target.resolve()

    def text_path(filename: str, text: str) -> tuple[Path, str]:
        """Where inline text stands (for its kind and the config): `filename` under the first
        root, or request.json / request.yaml by its first character."""
        name = filename or ("request.json" if text.lstrip()[:1] in ("{", "[") else "request.yaml")
        target = workspace.roots[0] / name
        if under(target.parent, workspace.roots) is None:
            raise ToolError(f"filename {name}: outside the roots")
        return target, name

    def report(run: LintRun) -> dict[str, Any]:
        return json.loads(render("json", run))

    def guarded(call: Any) -> Any:
        try:
            return call()
        except UsageError as error:
            raise ToolError(str(error)) from None

    @server.tool(
        description="Lint a schema or decision request: `path` (a file or folder under the roots) or "
        "`text` (inline JSON/YAML; `filename` names its kind and config match, and is not read). "
        "`engine`/`tokenizer` replace the configured ones. Returns the JSON v1 report of "
        "`pcdlint check -f json`: findings with code, severity, line, message and data."
    )
    def lint(
        path: str = "",
        text: str = "",
        filename: str = "",
        engine: str | list[str] | None = None,
        tokenizer: str | list[str] | None = None,
    ) -> dict[str, Any]:
        one_input(path, text)
        engines, tokenizers = _names(engine), _names(tokenizer)
        if path:
            target = named_path(path)
            return report(guarded(lambda: workspace.lint_path(target, engines, tokenizers)))
        where, display = text_path(filename, text)
        done = guarded(
            lambda: workspace.lint_text(where, text, None, engines, tokenizers, display, suggestions=True)
        )
        return report(done.run)

    @server.tool(
        description="A rule's documentation, by its code or name (the `code` and `name` of a finding)."
    )
    def explain(rule: str) -> dict[str, Any]:
        found = find_rule(rule)
        if found is None:
            raise ToolError(f"unknown rule {rule!r} (a finding's `code` or `name`)")
        return {"code": found.code, "name": found.name, "severity": found.severity, "doc": found.doc_markdown}

    @server.tool(
        description="Verified renamings for the flagged fields of one file (`path`) or inline `text`, "
        "as text edits (1-based line/column, end exclusive, columns in code points) to apply to "
        "that text; each was checked by linting the edited text again. Nothing is written."
    )
    def suggest(
        path: str = "",
        text: str = "",
        filename: str = "",
        engine: str | list[str] | None = None,
        tokenizer: str | list[str] | None = None,
    ) -> dict[str, Any]:
        one_input(path, text)
        if path:
            target = named_path(path)
            if not target.is_file():
                raise ToolError(f"{path}: suggest takes one file")
            settings = guarded(lambda: workspace.settings_for(target))
            try:
                raw = read_source(target, path, settings.max_bytes).decode("utf-8-sig")
            except (UsageError, UnicodeDecodeError) as error:
                raise ToolError(f"{path}: {error}") from None
            where, display, body = target, path, raw
        else:
            where, display = text_path(filename, text)
            body = text
        done = guarded(
            lambda: workspace.lint_text(
                where, body, None, _names(engine), _names(tokenizer), display, suggestions=True
            )
        )
        if done.error is not None:
            raise ToolError(str(done.error))
        fields = []
        for pointer in dict.fromkeys(e["pointer"] for e in fix_entries(done.run)):
            entries = [e for e in fix_entries(done.run) if e["pointer"] == pointer]
            fix = guarded(lambda pointer=pointer: verified_fix(workspace, done, pointer))
            fields.append(
                {
                    "path": display,
                    "pointer": pointer,
                    "field": entries[0]["field"],
                    "codes": sorted({c for e in entries for c in e["codes"]}),
                    "tokenizers": [e["tokenizer"] for e in entries],
                    "fix": None
                    if fix is None
                    else {
                        "title": fix.title,
                        "strategy": fix.suggestion["strategy"] if fix.suggestion else None,
                        "mapping": fix.suggestion["mapping"] if fix.suggestion else [],
                        "edits": [edit.to_dict() for edit in fix.edits],
                    },
                }
            )
        return {"fields": fields}

    return server


def serve(reader: SettingsReader, roots: list[Path]) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    logging.getLogger("mcp").setLevel(logging.WARNING)
    build_server(reader, roots).run("stdio")
