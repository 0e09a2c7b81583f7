"""`pcdlint server` driven by a real LSP client over stdio (pytest-lsp): initialize, open, change
(debounced, the last version wins), diagnostics (code, rule page, severity, related options),
code actions (a verified renaming, a suppression, the rule's page), hover, config reload, a bad
config as one diagnostic on it, close and shutdown. The real Qwen2.5 tokenizer scores it all."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from auditor.linter.pages import rule_help_uri  # noqa: E402

# PCD001: approve_now / approve_later share their first token (tests/test_cli.py's fixture too)
SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"enum": ["approve_now", "approve_later", "reject", "escalate"]},
        "mood": {"enum": ["happy", "sad"]},
    },
}
CLEAN = {"type": "object", "properties": {"mood": {"enum": ["happy", "sad"]}}}
TIMEOUT = 60  # seconds for one publish: a cold tokenizer load included


@pytest.fixture
def project(tmp_path):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "decide.json").write_text(json.dumps(SCHEMA, indent=2) + "\n", encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "auditor", "server", "--debounce", "0.05"]
    )
)
async def client(lsp_client: LanguageClient, project):
    capabilities = client_capabilities("visual-studio-code")
    lsp_client.registrations = []  # what the server asks to watch (VS Code's client watches it)

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=project.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def published(client: LanguageClient, uri: str, send, version: int | None = None):
    """Send (a callable), then the diagnostics next published for `uri` (at `version`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    waiting = client.protocol.wait_for_notification_async(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    send()
    while True:
        params = await asyncio.wait_for(waiting, max(0.1, deadline - loop.time()))
        if params.uri == uri and (version is None or params.version == version):
            return params
        waiting = client.protocol.wait_for_notification_async(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)


def opener(client: LanguageClient, uri: str, text: str, language: str = "json"):
    return lambda: client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )


def changer(client: LanguageClient, uri: str, text: str, version: int):
    return lambda: client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


@pytest.mark.asyncio
async def test_diagnostics_actions_hover_and_edits(client: LanguageClient, project):
    path = project / "schemas" / "decide.json"
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    params = await published(client, uri, opener(client, uri, text))
    [diagnostic] = [d for d in params.diagnostics if d.code == "PCD001"]
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.source == "pcdlint"
    assert diagnostic.code_description.href == rule_help_uri("PCD001")
    assert "approve_now" in diagnostic.message and "[qwen2.5" in diagnostic.message
    line = text.splitlines()[diagnostic.range.start.line]
    assert line[diagnostic.range.start.character :].startswith('"approve_now"'), line
    related = diagnostic.related_information or []
    assert any("approve_later" in r.message for r in related)

    # hover on the flagged option: the finding's data (its buckets)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostic.range.start
        )
    )
    assert hover is not None and "PCD001" in hover.contents.value and "bucket" in hover.contents.value

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    titles = [a.title for a in actions]
    fix = next(a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred)
    assert fix.kind == types.CodeActionKind.QuickFix and "verified" in fix.title
    [page] = [a for a in actions if isinstance(a, types.Command)]
    assert page.command == "pcdlint.openRulePage" and list(page.arguments) == [rule_help_uri("PCD001")]
    suppress = next(a for a in actions if isinstance(a, types.CodeAction) and "x-pcdlint-ignore" in a.title)
    assert len(titles) == 3

    # the renaming applied, as the client would: PCD001 is gone from the field
    fixed = apply_edits(text, fix.edit.changes[uri])
    after = await published(client, uri, changer(client, uri, fixed, 2), version=2)
    assert not [d for d in after.diagnostics if d.code == "PCD001"], after.diagnostics
    # the suppression applied to the original: valid JSON, the finding silenced
    silenced = apply_edits(text, suppress.edit.changes[uri])
    assert json.loads(silenced)["properties"]["decision"]["x-pcdlint-ignore"] == ["PCD001"]
    after = await published(client, uri, changer(client, uri, silenced, 3), version=3)
    assert not [d for d in after.diagnostics if d.code == "PCD001"]


@pytest.mark.asyncio
async def test_the_last_version_wins(client: LanguageClient, project):
    path = project / "schemas" / "decide.json"
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    await published(client, uri, opener(client, uri, text))
    clean = json.dumps(CLEAN, indent=2)

    def burst():
        for version, body in ((2, clean), (3, text), (4, clean), (5, text)):
            changer(client, uri, body, version)()

    params = await published(client, uri, burst)
    assert params.version == 5  # the changes before it were never linted or published
    assert [d.code for d in params.diagnostics if d.code == "PCD001"] == ["PCD001"]


@pytest.mark.asyncio
async def test_config_reload_and_a_bad_config(client: LanguageClient, project):
    path = project / "schemas" / "decide.json"
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    first = await published(client, uri, opener(client, uri, text))
    assert any(d.code == "PCD001" for d in first.diagnostics)
    [watch] = client.registrations
    assert watch.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    assert {w["globPattern"] for w in watch.register_options["watchers"]} == {
        "**/.pcdlint.toml",
        "**/pyproject.toml",
    }
    config = project / ".pcdlint.toml"
    config.write_text('ignore = ["first-token-collision"]\n', encoding="utf-8")

    def watched():
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Created)]
            )
        )

    params = await published(client, uri, watched)
    assert not any(d.code == "PCD001" for d in params.diagnostics)
    config.write_text("ignore = [\n", encoding="utf-8")
    params = await published(client, config.as_uri(), watched)
    [problem] = params.diagnostics
    assert "invalid TOML" in problem.message and problem.severity == types.DiagnosticSeverity.Error
    config.write_text("", encoding="utf-8")
    cleared = await published(client, config.as_uri(), watched)
    assert list(cleared.diagnostics) == []


@pytest.mark.asyncio
async def test_yaml_a_parse_error_and_close(client: LanguageClient, project):
    path = project / "schemas" / "decide.yaml"
    body = "type: object\nproperties:\n  decision:\n    enum: [approve_now, approve_later, reject]\n"
    path.write_text(body, encoding="utf-8")
    uri = path.as_uri()
    params = await published(client, uri, opener(client, uri, body, "yaml"))
    [diagnostic] = [d for d in params.diagnostics if d.code == "PCD001"]
    assert diagnostic.range.start.line == 3
    broken = await published(client, uri, changer(client, uri, "type: [\n", 2), version=2)
    assert broken.diagnostics and broken.diagnostics[0].code is None  # the parse error, placed

    def close():
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    closed = await published(client, uri, close)
    assert list(closed.diagnostics) == []


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """LSP text edits (UTF-16 positions; these texts are ASCII) applied to `text`."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text
