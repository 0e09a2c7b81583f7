"""Latency and memory of a warm `pcdlint server` (issue 46): the time from an edit of a 2,000-line
schema to the diagnostics published for it, and the server's RSS over 1,000 edits.

A real LSP client (pytest-lsp's, over stdio) starts `python -m auditor server --debounce 0`: the
debounce (0.2 s by default) is a wait the server chooses, so it is set to 0 and not counted;
what is timed is the server's work plus the round trip (the change sent → publishDiagnostics for
that version received). The document is the shared corpus's SchemaStore github-workflow.json
(2,193 lines, 20 findings under qwen2.5), opened once and linted warm 5 times first. Each edit
sends the whole text (full sync) with one description changed, and every tenth an enum option
too (new texts for the tokenizer). Reported: median and max over 100 edits, the server's RSS
after 100 and after 1,000 edits, and the load average before and after (the machine is shared).

Usage: python benchmarks/lsp_latency.py [SCHEMA] [--edits N]   (N: the memory run, default 1000)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("PCDLINT_CORPUS") or REPO.parent / "shared" / "corpus")
DEFAULT = CORPUS / "json-schema" / "SchemaStore__schemastore__src__schemas__json__github-workflow.json"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def variant(text: str, n: int) -> str:
    """The schema with its first description edited (and, every tenth edit, an enum option)."""
    text = text.replace('"description": "', f'"description": "edit {n} ', 1)
    if n % 10 == 0:
        text = text.replace('"ARM32"', f'"ARM32_{n}"', 1)
    return text


async def run(schema: Path, edits: int) -> dict:
    client = LanguageClient(converter_factory=default_converter)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        pass

    await client.start_io(sys.executable, "-m", "auditor", "server", "--debounce", "0")
    server_pid = client._server.pid
    root = schema.parent
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="corpus")],
        )
    )
    uri, text = schema.as_uri(), schema.read_text(encoding="utf-8")
    published: dict[int, float] = {}
    waiters: dict[int, asyncio.Future] = {}
    loop = asyncio.get_running_loop()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        if params.uri == uri and params.version is not None:
            published[params.version] = time.perf_counter()
            future = waiters.pop(params.version, None)
            if future is not None and not future.done():
                future.set_result(len(params.diagnostics))

    async def send(version: int, body: str) -> tuple[float, int]:
        waiters[version] = loop.create_future()
        start = time.perf_counter()
        if version == 1:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=body)
                )
            )
        else:
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=body)],
                )
            )
        count = await asyncio.wait_for(waiters[version], 120)
        return published[version] - start, count

    load_before = os.getloadavg()
    first, findings = await send(1, text)
    for n in range(2, 7):  # warm
        await send(n, variant(text, n))
    times, rss = [], {}
    version = 7
    for n in range(edits):
        took, _ = await send(version, variant(text, version))
        version += 1
        if n < 100:
            times.append(took)
        if n + 1 in (100, edits // 2, edits):
            rss[n + 1] = round(rss_mib(server_pid), 1)
    load_after = os.getloadavg()
    await client.shutdown_session()
    return {
        "schema": schema.name,
        "lines": len(text.splitlines()),
        "findings": findings,
        "first_publish_ms": round(first * 1000, 1),
        "median_ms": round(statistics.median(times) * 1000, 1),
        "max_ms": round(max(times) * 1000, 1),
        "rss_mib_after_edits": rss,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "debounce": "0 (not counted)",
    }


def main() -> None:
    args = sys.argv[1:]
    edits = 1000
    if "--edits" in args:
        at = args.index("--edits")
        edits = int(args[at + 1])
        del args[at : at + 2]
    schema = Path(args[0]) if args else DEFAULT
    print(json.dumps(asyncio.run(run(schema.resolve(), edits)), indent=2))


if __name__ == "__main__":
    main()
