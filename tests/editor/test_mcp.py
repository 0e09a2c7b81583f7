"""`pcdlint mcp` driven by the MCP SDK's own client over stdio: `lint` of an inline decision request
gives the findings `check -f json` gives for the same text; `lint` of a path, `explain`, `suggest`
(verified edits that clear the finding when applied); paths outside the roots are refused."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from support import run_cli

# a System One decision request: two labels equal after case folding (a warning under the System
# One specification, an error under sglang-decisions, which refuses it)
REQUEST = {
    "model": "jev-latest",
    "state": {"ticket": "My card was charged twice for the same order."},
    "questions": {
        "team": {
            "type": "choice",
            "instructions": "Which team should handle this ticket?",
            "criteria": {
                "billing": "Payment issues",
                "Billing": "Invoices",
                "shipping": "Parcels",
                "returns": "Refunds",
                "other": "Anything else",  # (a way out: PCD201 stays quiet)
            },
        },
        "urgent": {"type": "noul", "instructions": "The customer needs an answer today."},
    },
}
SCHEMA = {"type": "object", "properties": {"decision": {"enum": ["approve_now", "approve_later", "reject"]}}}
COMPARED = (
    "code",
    "name",
    "severity",
    "pointer",
    "site",
    "field",
    "line",
    "column",
    "tokenizer",
    "engine",
    "message",
    "data",
)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "decide.json").write_text(json.dumps(SCHEMA, indent=2) + "\n", encoding="utf-8")
    return tmp_path


def _params(project, *roots) -> StdioServerParameters:
    import os

    args = ["-m", "auditor", "mcp", *(a for r in roots for a in ("--root", str(r)))]
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(project), env=dict(os.environ))


async def _call(client: Client, tool: str, arguments: dict) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _findings(report: dict) -> list[dict]:
    return [{key: f[key] for key in COMPARED} for f in report["findings"]]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_inline_request_matches_check_json(project, anyio_backend):
    text = json.dumps(REQUEST, indent=2) + "\n"
    (project / "request.json").write_text(text, encoding="utf-8")
    expected = json.loads(run_cli("check", "-f", "json", "request.json", cwd=project).stdout)
    served = json.loads(
        run_cli("check", "-f", "json", "--engine", "sglang-decisions", "request.json", cwd=project).stdout
    )
    assert [f["severity"] for f in expected["findings"]] == ["warning"]
    assert [f["severity"] for f in served["findings"]] == ["error"]
    (project / "request.json").unlink()  # the tool must not read it: the text is inline
    async with Client(_params(project)) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {"lint", "explain", "suggest"}
        report = await _call(client, "lint", {"text": text, "filename": "request.json"})
        engine = await _call(
            client, "lint", {"text": text, "filename": "request.json", "engine": "sglang-decisions"}
        )
    assert _findings(report) == _findings(expected)
    assert _findings(engine) == _findings(served)
    assert report["version"] == expected["version"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_path_explain_suggest_and_roots(project, tmp_path_factory, anyio_backend):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    async with Client(_params(project, project)) as client:
        report = await _call(client, "lint", {"path": "decide.json"})
        assert [f["code"] for f in report["findings"] if f["severity"] == "error"] == ["PCD001"]
        engines = await _call(client, "lint", {"path": "decide.json", "engine": "full-sequence"})
        assert {f["engine"] for f in engines["findings"] if f["engine"]} <= {"full-sequence"}

        doc = await _call(client, "explain", {"rule": "first-token-collision"})
        assert doc["code"] == "PCD001" and "## What it does" in doc["doc"]

        suggested = await _call(client, "suggest", {"path": "decide.json"})
        [field] = suggested["fields"]
        assert field["pointer"] == "/properties/decision" and field["fix"] is not None
        text = (project / "decide.json").read_text(encoding="utf-8")
        fixed = _apply(text, field["fix"]["edits"])
        after = await _call(client, "lint", {"text": fixed, "filename": "decide.json"})
        assert not [f for f in after["findings"] if f["code"] == "PCD001"]
        assert (project / "decide.json").read_text(encoding="utf-8") == text  # nothing written

        for arguments in (
            {"path": str(outside / "secret.json")},
            {"path": "../" + outside.name + "/secret.json"},
        ):
            refused = await client.call_tool("lint", arguments)
            assert refused.is_error and "outside the roots" in refused.content[0].text
        unknown = await client.call_tool("explain", {"rule": "no-such-rule"})
        assert unknown.is_error


def _apply(text: str, edits: list[dict]) -> str:
    """Edits in pcdlint's positions (1-based lines, code-point columns, end exclusive)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for edit in sorted(edits, key=lambda e: (e["line"], e["column"]), reverse=True):
        begin = starts[edit["line"] - 1] + edit["column"] - 1
        end = starts[edit["end_line"] - 1] + edit["end_column"] - 1
        text = text[:begin] + edit["new_text"] + text[end:]
    return text
