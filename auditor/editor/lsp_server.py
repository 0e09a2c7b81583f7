"""`pcdlint server`: the language server (stdio), on pygls and lsprotocol.

It publishes pcdlint's findings for every document `check` reads by name (its dispatch:
auditor.schema.documents.LINTABLE_SUFFIXES) under a workspace root, on open and on change, the
change debounced (`--debounce`, 0.2 s by default) and the last version winning: a lint that
finishes after a newer change is dropped, never published. Lints run one at a time in one worker
thread, so the event loop keeps reading changes; the tokenizers, their encoding memo and the
rule registry stay loaded between edits (a warm edit re-parses and re-crawls the document and
reads its texts' ids from the memo: docs/benchmarks.md). Each lint reads the config nearest to
the document again when it changed (file, size, time or inode), and a watched config change
(workspace/didChangeWatchedFiles, registered where the client can) re-lints every open
document; a config that cannot be read is one diagnostic on the config file.

Diagnostics carry the rule code, the rule page's URL (the one SARIF's helpUri names), the
severity (error → Error, warning → Warning, info → Hint) and the related locations (the other
colliding options). Code actions (the suggestions are made when the client asks for them, not
on every edit): the verified renaming of the field (workspace.verified_fix),
an `x-pcdlint-ignore` for the rule on the field (workspace.suppression_fix), and the rule's
page (the client opens it: window/showDocument). Hover on a flagged range: the finding's data.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from auditor.editor.workspace import (
    DocumentLint,
    Fix,
    SettingsReader,
    TextLines,
    Workspace,
    config_problem,
    finding_summary,
    suppression_fix,
    verified_fix,
)
from auditor.errors import ConfigError, UsageError
from auditor.linter.context import Finding
from auditor.linter.pages import rule_help_uri
from auditor.reporting.escape import terminal
from auditor.schema.documents import Span, resolve_pointer
from auditor.version import __version__

OPEN_RULE_PAGE = "pcdlint.openRulePage"
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Hint,
}
CONFIG_GLOBS = ("**/.pcdlint.toml", "**/pyproject.toml")
DEFAULT_DEBOUNCE = 0.2  # seconds between the last change and the lint


class PcdlintServer(LanguageServer):
    """The server's state: the workspace it lints, the latest lint of each open document, the
    pending (debounced) lint of each, and the config files it reported a problem on."""

    def __init__(self, reader: SettingsReader, debounce: float = DEFAULT_DEBOUNCE) -> None:
        super().__init__("pcdlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.reader = reader
        self.debounce = debounce
        self.linter: Workspace = Workspace([], reader)
        self.latest: dict[str, DocumentLint] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.config_problems: set[str] = set()
        self.lint_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pcdlint-lint")

    # ----------------------------------------------------------------- linting

    def document_path(self, uri: str) -> Path | None:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return Path(path) if path else None

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Lint the document `delay` seconds from now (the debounce), replacing a lint pending."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(
            self.lint_later(uri, self.debounce if delay is None else delay)
        )

    async def lint_later(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        document = self.workspace.text_documents.get(uri)
        path = self.document_path(uri)
        if document is None or path is None or not self.linter.lintable(path):
            return
        version, text = document.version, document.source
        loop = asyncio.get_running_loop()
        try:
            done = await loop.run_in_executor(self.lint_thread, self.linter.lint_text, path, text)
        except ConfigError as error:
            self.report_config(error)
            self.publish(uri, [], version)
            return
        except UsageError as error:  # a configured tokenizer or engine that cannot be used
            self.report_usage(path, error)
            self.publish(uri, [], version)
            return
        except Exception as error:  # a bug: one line in the client's log, the server goes on
            if os.environ.get("PCDLINT_DEBUG"):
                raise
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Error,
                    message=f"pcdlint: internal error linting {path}: {type(error).__name__}: {error}",
                )
            )
            return
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return  # a newer change came meanwhile: its own lint publishes
        self.latest[uri] = done
        self.clear_config_problem(done.settings.config_path)
        self.publish(uri, self.diagnostics(uri, done), version)

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def report_config(self, error: ConfigError) -> None:
        path, line, message = config_problem(error)
        uri = from_fs_path(str(path)) or path.as_uri()
        self.config_problems.add(uri)
        position = types.Position(line=max(0, line - 1), character=0)
        self.publish(
            uri,
            [
                types.Diagnostic(
                    range=types.Range(start=position, end=position),
                    message=terminal(f"pcdlint cannot read this config: {message}", commands=False),
                    severity=types.DiagnosticSeverity.Error,
                    source="pcdlint",
                )
            ],
        )

    def report_usage(self, path: Path, error: UsageError) -> None:
        try:
            config = self.linter.settings_for(path).config_path
        except UsageError:
            config = None
        if config is not None:
            self.report_config(ConfigError(config, str(error)))
        else:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"pcdlint: {error}")
            )

    def clear_config_problem(self, config: Path | None) -> None:
        uri = from_fs_path(str(config)) if config is not None else None
        if uri in self.config_problems:
            self.config_problems.discard(uri)
            self.publish(uri, [])

    def lines(self, done: DocumentLint) -> TextLines:
        return TextLines(done.text, done.yaml, str(self.workspace.position_encoding or "utf-16"))

    def range_of(self, lines: TextLines, span: Any) -> types.Range:
        start = lines.to_client(span.line, span.column)
        end = lines.to_client(span.end_line, span.end_column)
        return types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        )

    def diagnostics(self, uri: str, done: DocumentLint) -> list[types.Diagnostic]:
        lines = self.lines(done)
        out = []
        if done.error is not None:  # the document does not parse: check's exit-2 line, placed
            error = done.error
            line, column = error.line or 1, error.column or 1
            start = lines.to_client(line, column)
            position = types.Position(line=start[0], character=start[1])
            out.append(
                types.Diagnostic(
                    range=types.Range(start=position, end=position),
                    message=terminal(error.message, commands=False),
                    severity=types.DiagnosticSeverity.Error,
                    source="pcdlint",
                )
            )
        for finding in done.findings:
            out.append(self.diagnostic(uri, done, lines, finding))
        return out

    def diagnostic(
        self, uri: str, done: DocumentLint, lines: TextLines, finding: Finding
    ) -> types.Diagnostic:
        where = ", ".join(x for x in (finding.tokenizer, finding.engine) if x)
        related = []
        model = done.model
        for location in finding.related:
            try:
                value: Any = resolve_pointer(model.document.data, location.pointer) if model else None
            except (KeyError, IndexError, TypeError, ValueError):
                value = None
            note = (
                f"{finding.code}: {value!r}"
                if isinstance(value, str)
                else f"{finding.code}: {location.pointer}"
            )
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=uri, range=self.range_of(lines, location.span)),
                    message=terminal(note, commands=False),
                )
            )
        return types.Diagnostic(
            range=self.range_of(lines, finding.span),
            message=terminal(finding.message + (f" [{where}]" if where else ""), commands=False),
            severity=SEVERITY[finding.severity],
            code=finding.code,
            code_description=types.CodeDescription(href=rule_help_uri(finding.code)),
            source="pcdlint",
            related_information=related or None,
            data={"fingerprint": finding.fingerprint, "pointer": finding.site_pointer, "name": finding.name},
        )

    # ----------------------------------------------------------------- code actions, hover

    def finding_of(self, done: DocumentLint, diagnostic: types.Diagnostic) -> Finding | None:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        return next((f for f in done.findings if f.fingerprint == data.get("fingerprint")), None)

    def actions(
        self, uri: str, done: DocumentLint, diagnostics: list[types.Diagnostic]
    ) -> list[types.CodeAction | types.Command]:
        lines = self.lines(done)
        out: list[types.CodeAction | types.Command] = []
        fixed: set[str] = set()
        if any(d.code for d in diagnostics):  # (the suggestions, made once for the request)
            done = self.linter.with_suggestions(done)
        for diagnostic in diagnostics:
            finding = self.finding_of(done, diagnostic)
            if finding is None:
                continue
            if finding.site_pointer not in fixed:
                fixed.add(finding.site_pointer)
                fix = verified_fix(self.linter, done, finding.site_pointer)
                if fix is not None:
                    out.append(self.action(uri, lines, fix, [diagnostic], preferred=True))
            suppression = suppression_fix(self.linter, done, finding)
            if suppression is not None:
                out.append(self.action(uri, lines, suppression, [diagnostic]))
            url = rule_help_uri(finding.code)
            title = f"pcdlint: open the page of {finding.code} {finding.name}"
            # a bare Command (LSP allows one among code actions): a code action holding only a
            # command reads as a Command to clients that tell them apart by the `command` key
            out.append(types.Command(title=title, command=OPEN_RULE_PAGE, arguments=[url]))
        return out

    def action(
        self,
        uri: str,
        lines: TextLines,
        fix: Fix,
        diagnostics: list[types.Diagnostic],
        preferred: bool = False,
    ) -> types.CodeAction:
        edits = [
            types.TextEdit(
                range=self.range_of(lines, Span(*edit.span)),
                new_text=edit.new_text,
            )
            for edit in fix.edits
        ]
        return types.CodeAction(
            title=fix.title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=diagnostics,
            is_preferred=preferred or None,
            edit=types.WorkspaceEdit(changes={uri: edits}),
        )

    def hover(self, done: DocumentLint, position: types.Position) -> types.Hover | None:
        lines = self.lines(done)
        line, column = lines.from_client(position.line, position.character)
        here = (line, column)
        shown = [
            f
            for f in done.findings
            if (f.span.line, f.span.column) <= here <= (f.span.end_line, f.span.end_column)
            or any(
                (s.span.line, s.span.column) <= here <= (s.span.end_line, s.span.end_column)
                for s in (done.site(f.site_pointer),)
                if s is not None
            )
        ]
        if not shown:
            return None
        text = "\n\n---\n\n".join(
            f"{finding_summary(f)}\n\n[{f.code} {f.name}]({rule_help_uri(f.code)})" for f in shown[:5]
        )
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def build_server(reader: SettingsReader, debounce: float = DEFAULT_DEBOUNCE) -> PcdlintServer:
    """The server with its handlers registered."""
    server = PcdlintServer(reader, debounce)

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        roots = [to_fs_path(folder.uri) for folder in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [to_fs_path(params.root_uri)]
        if not roots and params.root_path:
            roots = [params.root_path]
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if isinstance(options.get("debounce"), int | float) and options["debounce"] >= 0:
            server.debounce = float(options["debounce"])
        server.linter = Workspace([Path(r) for r in roots if r] or [Path.cwd()], server.reader)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        watched = server.client_capabilities.workspace
        dynamic = (
            watched
            and watched.did_change_watched_files
            and watched.did_change_watched_files.dynamic_registration
        )
        if not dynamic:
            return  # (each lint still reads a changed config again: settings_for's stamp)
        try:
            await server.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="pcdlint-config",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[types.FileSystemWatcher(glob_pattern=g) for g in CONFIG_GLOBS]
                            ),
                        )
                    ]
                )
            )
        except Exception as error:  # a client that says it can and then cannot: lints still reload
            server.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Warning, message=f"pcdlint: no config watch ({error})"
                )
            )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        server.schedule(params.text_document.uri, delay=0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        server.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        if Path(to_fs_path(params.text_document.uri) or "").name in (".pcdlint.toml", "pyproject.toml"):
            relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = server.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        server.latest.pop(uri, None)
        server.publish(uri, [])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(params: types.DidChangeWatchedFilesParams) -> None:
        relint_all()

    def relint_all() -> None:
        server.linter.forget_settings()
        for uri in list(server.workspace.text_documents):
            server.schedule(uri, delay=0)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction | types.Command] | None:
        uri = params.text_document.uri
        done = server.latest.get(uri)
        document = server.workspace.text_documents.get(uri)
        if done is None or document is None or document.source != done.text:
            return None  # a lint of this version is on its way
        ours = [d for d in params.context.diagnostics if d.source == "pcdlint"]
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(server.lint_thread, server.actions, uri, done, ours)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        done = server.latest.get(params.text_document.uri)
        document = server.workspace.text_documents.get(params.text_document.uri)
        if done is None or document is None or document.source != done.text:
            return None  # (positions of an older version would point elsewhere)
        return server.hover(done, params.position)

    @server.command(OPEN_RULE_PAGE)
    async def open_rule_page(ls: PcdlintServer, url: str) -> None:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=url, external=True))

    return server


def serve(reader: SettingsReader, debounce: float = DEFAULT_DEBOUNCE) -> None:
    """Run the server on stdin/stdout until the client says exit."""
    logging.getLogger("pygls").setLevel(logging.WARNING)
    build_server(reader, debounce).start_io()
