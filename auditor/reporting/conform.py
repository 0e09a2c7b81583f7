"""`pcdlint conform`'s report: per request, what each server did, where the servers differ, and
where pcdlint's static verdict for each server's engine disagrees with what the server did; as
text (disagreements first) or as the JSON v1 ``conform`` block (documented in docs/served.md)."""

from __future__ import annotations

from typing import Any

from auditor.decoder.conform import ConformRequest, Outcome, ServerSpec, body_for, question_differences
from auditor.eval.decision_verify import compare_static_live, static_verdict

SHAPE_NAMES = {
    "systemone": "System One",
    "openai-decisions": "OpenAI Decisions",
    "sglang-decisions": "SGLang",
}


class _Refusal:
    """What ``compare_static_live`` reads of a refusal."""

    def __init__(self, outcome: Outcome) -> None:
        self.status = outcome.http_status
        self.message = outcome.message


def _server_entry(server: ServerSpec, outcome: Outcome, findings: list, pointer: str) -> dict:
    static = static_verdict(findings, server.engine.name, pointer)
    disagreements = (
        []
        if outcome.status == "failed"
        else compare_static_live(static, _Refusal(outcome) if outcome.status == "refused" else None)
    )
    return {
        "server": server.name,
        "engine": server.engine.name,
        "status": outcome.status,
        "http_status": outcome.http_status,
        "message": outcome.message or None,
        "static": static,
        "static_vs_live": disagreements,
    }


def conform_report(
    servers: list[ServerSpec],
    requests: list[ConformRequest],
    outcomes: list[list[Outcome]],
    findings: dict[str, list],
) -> dict:
    """The run as data. ``outcomes[request][server]`` (``auditor.decoder.conform.ask``);
    ``findings[path]``: pcdlint's findings for each file, each naming its engine."""
    from pathlib import Path

    entries = []
    totals = {"requests": len(requests), "disagreements": 0, "servers_differ": 0, "failed": 0}
    for request, row in zip(requests, outcomes):
        _body, sent = body_for(request)
        key = str(Path(request.path))
        servers_out = [
            _server_entry(s, o, findings.get(key, []), request.pointer) for s, o in zip(servers, row)
        ]
        answered = [o.server for o in row if o.status == "answered"]
        refused = [o.server for o in row if o.status == "refused"]
        failed = [o.server for o in row if o.status == "failed"]
        differ = bool(answered) and bool(refused)
        totals["disagreements"] += sum(1 for e in servers_out if e["static_vs_live"])
        totals["servers_differ"] += differ
        totals["failed"] += len(failed)
        entries.append(
            {
                "path": request.path,
                "pointer": request.pointer,
                "shape": request.shape,
                "sent": sent,
                "answered_by": answered,
                "refused_by": refused,
                "failed": failed,
                "servers_differ": differ,
                "servers": servers_out,
                "questions": [d.to_dict() for d in question_differences(row)],
                "answers": {o.server: [a.to_dict() for a in o.answers] for o in row if o.answers},
            }
        )
    return {
        "version": 1,
        "conform": {"servers": [s.describe() for s in servers], "requests": entries, "summary": totals},
    }


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _mass(value: float | None) -> str:
    if value is None:
        return ""
    return f", label mass {value:.3g}" if value < 0.001 else f", label mass {value:.3f}"


def _question_lines(question: dict) -> list[str]:
    keys = question["keys"]
    size = f"{len(keys)} options" if question["kind"] == "choice" else f"{len(keys)} levels"
    head = f"  question {question['question']} ({question['kind']}" + (
        f", {size})" if question["kind"] in ("choice", "score") else ")"
    )
    parts = []
    for server, answer in question["answers"].items():
        probs = question["probabilities"].get(server) or {}
        chosen = probs.get(answer) if isinstance(answer, str) else None
        parts.append(f"{server} {answer} (p {_p(chosen)}{_mass(question['label_mass'].get(server))})")
    line = f"{head}: " + "; ".join(parts)
    if question["largest_difference"] is not None:
        line += f"; largest difference {question['largest_difference']:.3f} at {question['at_key']}"
    if not question["answers_agree"]:
        line += "; the answers differ"
    return [line]


def _request_text(entry: dict) -> str:
    where = entry["path"] + (f"#{entry['pointer']}" if entry["pointer"] else "")
    lines = [f"== {where} ({SHAPE_NAMES.get(entry['shape'], entry['shape'])}, sent {entry['sent']})"]
    disagreeing = [s for s in entry["servers"] if s["static_vs_live"]]
    for server in disagreeing:  # what changes a decision first
        lines += [
            f"  DISAGREE {server['server']} ({server['engine']}): {d['message']}"
            for d in server["static_vs_live"]
        ]
    if entry["servers_differ"]:
        lines.append(
            f"  servers differ: answered by {', '.join(entry['answered_by'])}; "
            f"refused by {', '.join(entry['refused_by'])}"
        )
    for server in entry["servers"]:
        status = server["status"]
        what = (
            "answered"
            if status == "answered"
            else f"refused ({server['http_status']}): {server['message']}"
            if status == "refused"
            else f"failed: {server['message']}"
        )
        static = server["static"]
        verdict = static["predicted"]
        codes = sorted({f["code"] for f in static["findings"]})
        agree = (
            ""
            if status == "failed"
            else ("; pcdlint disagrees" if server["static_vs_live"] else "; pcdlint agrees")
        )
        lines.append(
            f"  {server['server']} ({server['engine']}): {what} "
            f"[pcdlint predicts {verdict}{': ' + ', '.join(codes) if codes else ''}{agree}]"
        )
    for question in entry["questions"]:
        lines += _question_lines(question)
    return "\n".join(lines) + "\n"


def conform_text(report: dict) -> str:
    """The report as text: one block per request, then one summary line."""
    block = report["conform"]
    text = "".join(_request_text(entry) for entry in block["requests"])
    totals = block["summary"]
    servers = len(block["servers"])
    text += (
        f"conform: {totals['requests']} request(s) to {servers} server(s): "
        f"{totals['disagreements']} where pcdlint's verdict disagrees with a server, "
        f"{totals['servers_differ']} where the servers differ, {totals['failed']} failed\n"
    )
    return text


def conform_findings(report: dict) -> bool:
    """Whether the run found something: pcdlint disagreeing with a server, or servers that
    differ on whether a request is answered."""
    totals: dict[str, Any] = report["conform"]["summary"]
    return bool(totals["disagreements"] or totals["servers_differ"])
