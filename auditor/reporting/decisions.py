"""`verify` on decision requests: each question's answer and probabilities, the option-order
probe, and where pcdlint's verdict and the server's disagree, as text or as the JSON v1 block."""

from __future__ import annotations


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _answer_line(answer) -> str:
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


def _probe_lines(probe) -> list[str]:
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


def format_decision(path: str, identity: dict, decision, disagreements: list[dict] | None = None) -> str:
    where = identity.get("endpoint") or f"{identity.get('engine')} in process"
    model = identity.get("model")
    lines = [f"== {path} ({where}{f', model {model}' if model else ''}; {decision.requests} request(s))"]
    probes = {p.question: p for p in decision.probes}
    for answer in decision.answers:
        lines.append(_answer_line(answer))
        if answer.name in probes:
            lines.extend(_probe_lines(probes[answer.name]))
    for item in disagreements or []:
        lines.append(f"static vs live: {item['message']}")
    return "\n".join(lines) + "\n"


def decision_to_dict(path: str, identity: dict, decision, disagreements: list[dict] | None = None) -> dict:
    """One entry of the JSON report's ``decisions`` list (documented in the README)."""
    return {
        "path": path,
        "backend": identity,
        "requests": decision.requests,
        "flipped": decision.flipped,
        "answers": [a.to_dict() for a in decision.answers],
        "order_probe": [p.to_dict() for p in decision.probes],
        "static_vs_live": list(disagreements or []),
    }


def format_refusal(path: str, identity: dict, refused) -> str:
    where = identity.get("endpoint") or f"{identity.get('engine')} in process"
    return f"== {path} ({where})\nrefused ({refused.status}): {refused.message}\n"
