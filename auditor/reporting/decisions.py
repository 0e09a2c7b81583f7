"""`verify` on decision requests: each question's answer and probabilities, the option-order
probe, and where pcdlint's verdict and the server's disagree, as text or as the JSON v1 block."""

from __future__ import annotations

from typing import Any


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _answer_line(answer: Any) -> str:
    if answer.kind == "noul":
        return f"question {answer.name} (noul): p(true) = {_p(answer.noul)} -> {answer.answer}"
    size = len(answer.keys)
    what = f"{size} options" if answer.kind == "choice" else f"{size} levels"
    probs = (
        ""
        if answer.probabilities is None
        else "  p: " + " ".join(f"{k} {_p(p)}" for k, p in zip(answer.keys, answer.probabilities))
    )
    expected = f", expected {answer.score:.3f}" if answer.score is not None else ""
    mass = f"  label mass {_p(answer.label_mass)}" if answer.label_mass is not None else ""
    return f"question {answer.name} ({answer.kind}, {what}): {answer.answer}{expected}{probs}{mass}"


def _probe_lines(probe: Any) -> list[str]:
    size = len(probe.keys)
    wins = ", ".join(
        f"#{i + 1}{' (last)' if i == size - 1 else ''} {n}" for i, n in enumerate(probe.position_wins)
    )
    orders = len(probe.orders)
    return [
        f"  order probe ({orders} orders): answers {' / '.join(str(a) for a in probe.answers)}; "
        f"changed in {probe.flips} of {orders - 1} reordered requests",
        f"  wins by displayed position: {wins}; largest swing {probe.largest_swing:.3f} ({probe.swing_option})",
        f"  {probe.verdict}",
    ]


def format_decision(
    label: str,
    identity: dict,
    decision: Any,
    refused: Any = None,
    static: dict | None = None,
    disagreements: list[dict] | None = None,
) -> str:
    where = identity.get("endpoint") or f"{identity.get('engine')} in process"
    model = identity.get("model")
    requests = f"; {decision.requests} request(s)" if decision is not None else ""
    lines = [f"== {label} ({where}{f', model {model}' if model else ''}{requests})"]
    if refused is not None:
        lines.append(f"refused ({refused.status}): {refused.message}")
    if decision is not None:
        probes = {p.question: p for p in decision.probes}
        for answer in decision.answers:
            lines.append(_answer_line(answer))
            if answer.name in probes:
                lines.extend(_probe_lines(probes[answer.name]))
            for result in getattr(decision, "results", []):
                if result.question == answer.name:
                    lines.append(f"  {result.probe} probe: {result.verdict}")
    if static is not None:
        live = f"refused ({refused.status})" if refused is not None else "answered"
        agree = "agree" if not disagreements else "DISAGREE"
        who = "the server" if identity.get("endpoint") else "the in-process engine"
        lines.append(
            f"static vs live ({static['engine']}): {agree}: pcdlint predicts {static['predicted']}, {who} {live}"
        )
        lines.extend(f"  {item['message']}" for item in disagreements or [])
    return "\n".join(lines) + "\n"


def decision_to_dict(
    path: str,
    pointer: str,
    identity: dict,
    decision: Any,
    refused: Any = None,
    static: dict | None = None,
    disagreements: list[dict] | None = None,
) -> dict:
    """One entry of the JSON report's ``decisions`` list (documented in docs/served.md)."""
    return {
        "path": path,
        "pointer": pointer,
        "backend": identity,
        "requests": decision.requests if decision is not None else 1,
        "refused": None if refused is None else {"status": refused.status, "message": refused.message},
        "flipped": bool(decision is not None and decision.flipped),
        "flagged": bool(decision is not None and decision.flagged),
        "answers": [] if decision is None else [a.to_dict() for a in decision.answers],
        "order_probe": [] if decision is None else [p.to_dict() for p in decision.probes],
        "probes": [] if decision is None else [r.to_dict() for r in getattr(decision, "results", [])],
        "static": static,
        "static_vs_live": list(disagreements or []),
    }
