"""Does a served decision follow the order the options are shown in? One request per display order.

The probe sends the same request with every probed choice question's options in another order:
the original, reversed, rotated by 1, by 2, … (``display_orders``), one request per order, all
probed questions reordered together (and only they asked again). System One answers name option keys, so each order's
answer maps straight back to the request's keys. Per question it reports how many reordered
requests changed the answer, from which displayed position the winner came in each order (the
histogram), the largest swing of one option's probability, and a one-line verdict.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from auditor.decoder.systemone import QuestionAnswer, read_answers
from auditor.probes import PROBES

PROBE_MODES = tuple(PROBES)
DEFAULT_ORDERS = 4
AUTO_MIN_OPTIONS = 3  # "auto" probes choices with at least this many options


def display_orders(n: int, count: int) -> list[list[int]]:
    """Up to ``count`` distinct orders of ``n`` options: original, reversed, rotations, reversed rotations."""
    base = list(range(n))
    candidates = [base, base[::-1]]
    candidates += [base[shift:] + base[:shift] for shift in range(1, n)]
    candidates += [(base[shift:] + base[:shift])[::-1] for shift in range(1, n)]
    orders: list[list[int]] = []
    for order in candidates:
        if order not in orders:
            orders.append(order)
        if len(orders) == count:
            break
    return orders


def probed_questions(body: dict, mode: str) -> list[str]:
    if mode == "off":
        return []
    least = AUTO_MIN_OPTIONS if mode == "auto" else 2
    return [
        qid
        for qid, q in body["questions"].items()
        if q.get("type") == "choice" and isinstance(q.get("criteria"), dict) and len(q["criteria"]) >= least
    ]


def reordered_body(body: dict, orders: dict[str, list[int]]) -> dict:
    """``body`` asking only the named choice questions, each with its criteria in the given order.

    The other questions are left out: a System One question is answered on the state and its own
    options, so asking them again would only repeat their answers.
    """
    questions = {}
    for qid, order in orders.items():
        items = list(body["questions"][qid]["criteria"].items())
        questions[qid] = {**body["questions"][qid], "criteria": dict(items[i] for i in order)}
    return {**body, "questions": questions}


def slot_name(position: int, size: int) -> str:
    if position == size - 1:
        return "last"
    if position == 0:
        return "first"
    return {1: "second", 2: "third"}.get(position, f"#{position + 1}")


@dataclass
class OrderProbe:
    question: str
    keys: list[str]
    orders: list[list[str]]  # the keys as displayed, per order (the first is the original)
    answers: list[str | None]  # the answer per order (a key)
    probabilities: list[list[float] | None]  # per order, aligned with ``keys``
    flips: int = 0
    position_wins: list[int] = field(default_factory=list)  # per displayed position, orders won from it
    largest_swing: float = 0.0
    swing_option: str | None = None
    verdict: str = ""

    def to_dict(self) -> dict:
        return {
            "question": self.question,
            "orders": self.orders,
            "answers": self.answers,
            "probabilities": [None if p is None else dict(zip(self.keys, p)) for p in self.probabilities],
            "flips": self.flips,
            "reordered": len(self.orders) - 1,
            "position_wins": self.position_wins,
            "largest_swing": self.largest_swing,
            "swing_option": self.swing_option,
            "verdict": self.verdict,
        }


def order_verdict(flips: int, reordered: int, wins: list[int], count: int, stable: str) -> str:
    """The verdict line: ``stable`` when nothing flipped, else whether the winner follows one
    displayed position (``wins``: answers won from each position, out of ``count`` orders)."""
    if flips == 0:
        return stable
    top = max(range(len(wins)), key=wins.__getitem__)
    top_wins, slot = wins[top], slot_name(top, len(wins))
    if top_wins == count:
        return (
            f"triage: the answer follows the displayed position (won from the {slot} slot in "
            f"{top_wins} of {count} orders)"
        )
    if top_wins * 2 > count:
        return (
            f"triage: the answer leans on the displayed position (won from the {slot} slot in "
            f"{top_wins} of {count} orders)"
        )
    return (
        f"triage: the answer changes with the order ({flips} of {reordered} reordered "
        "requests) but follows no one position"
    )


def summarize(probe: OrderProbe) -> OrderProbe:
    """Fill flips, the win histogram, the largest swing and the verdict from the per-order answers."""
    size, count = len(probe.keys), len(probe.orders)
    original = probe.answers[0]
    probe.flips = sum(a != original for a in probe.answers[1:])
    wins = [0] * size
    for shown, chosen in zip(probe.orders, probe.answers):
        if chosen in shown:
            wins[shown.index(chosen)] += 1
    probe.position_wins = wins
    known = [p for p in probe.probabilities if p is not None]
    if len(known) > 1:
        swings = [max(p[i] for p in known) - min(p[i] for p in known) for i in range(size)]
        best = max(range(size), key=swings.__getitem__)
        probe.largest_swing, probe.swing_option = swings[best], probe.keys[best]
    probe.verdict = order_verdict(
        probe.flips, count - 1, wins, count, f"stable: {original} in all {count} orders"
    )
    return probe


@dataclass
class ProbedDecision:
    """A request's answers in the original order, and the order probe of its choice questions."""

    answers: list[QuestionAnswer]
    probes: list[OrderProbe]
    requests: int
    results: list = field(default_factory=list)  # the other probes (auditor.decoder.probes.ProbeResult)

    @property
    def flipped(self) -> bool:
        return any(p.flips for p in self.probes)

    @property
    def flagged(self) -> bool:
        """An answer that moved with the order, or another probe's verdict that is a finding."""
        return self.flipped or any(r.flagged for r in self.results)


def probe_request(
    engine: Any, body: dict, *, mode: str = "auto", orders: int = DEFAULT_ORDERS
) -> ProbedDecision:
    """Ask ``engine`` (``decide(body)``) the request, then once more per extra display order."""
    answers = read_answers(body, engine.decide(body))
    qids = probed_questions(body, mode)
    plans = {qid: display_orders(len(body["questions"][qid]["criteria"]), orders) for qid in qids}
    rounds = max((len(p) for p in plans.values()), default=1)
    keys = {a.name: a.keys for a in answers}
    by_name = {a.name: a for a in answers}
    probes = {
        qid: OrderProbe(qid, keys[qid], [keys[qid]], [by_name[qid].answer], [by_name[qid].probabilities])
        for qid in qids
    }
    requests = 1
    for index in range(1, rounds):
        now = {qid: plan[index] for qid, plan in plans.items() if index < len(plan)}
        reordered = reordered_body(body, now)
        got = {a.name: a for a in read_answers(reordered, engine.decide(reordered))}
        requests += 1
        for qid, order in now.items():
            probe = probes[qid]
            probe.orders.append([keys[qid][i] for i in order])
            probe.answers.append(got[qid].answer)
            # the reordered answer lists keys as displayed; realign with the request's order
            probs = got[qid]
            probe.probabilities.append(
                None if probs.probabilities is None else [probs.probability_of(k) or 0.0 for k in keys[qid]]
            )
    return ProbedDecision(answers, [summarize(probes[qid]) for qid in qids], requests)


def position_counts(probes: list[OrderProbe]) -> Counter:
    """How many orders, over all probed questions, were won from the first / last / other slots."""
    tally: Counter = Counter()
    for probe in probes:
        for position, wins in enumerate(probe.position_wins):
            tally[slot_name(position, len(probe.keys))] += wins
    return tally
