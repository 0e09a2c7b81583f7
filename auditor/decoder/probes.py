"""Probes of a served decision beyond option order: does the answer rest on what it should?

Each probe asks the request again with one thing changed that a sound answer should (or should
not) follow, and maps every answer back to the request's own keys:

- ``scope``: the request with an empty state and with a fixed off-topic state
  (``OFF_TOPIC_STATE``), 2 requests. Per choice question: the probability the model still puts
  on its top option. A question the design rule PCD201 (no-way-out) flags, answered with more
  than ``FORCED`` on one option for a state that fits none, is *forced*; a question with a way
  out (an ``other`` / ``none`` option) that does not take it there *misses its way out*.
- ``criteria``: 1 request. A noul's ``true`` / ``false`` descriptions swapped: p(true) should
  move towards 1 − p (the share of that move is reported; under ``FOLLOWED`` the answer
  *ignores its descriptions*). A choice's descriptions removed: how far the answer moves
  (total-variation distance, and whether it changed).
- ``names``: 1 request. A choice's option names replaced by neutral ids (``opt1``, ``opt2``, …)
  with the descriptions kept: how far the answer moves.
- ``order``: ``auditor.decoder.orderprobe`` (one request per extra display order).

Every probe says how many extra requests it sends before sending them (``planned_requests``).
All probed questions of a probe are changed together in its requests: a System One question is
answered on the state and its own options, so the others are left out of the request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from auditor.decoder.orderprobe import DEFAULT_ORDERS, display_orders, probed_questions
from auditor.decoder.systemone import QuestionAnswer, read_answers
from auditor.errors import UsageError
from auditor.probes import PERTURBATIONS as PROBES  # every probe, in the order they run
from auditor.probes import PROBES as PROBE_TABLE

PROBE_CHOICES = tuple(PROBE_TABLE)  # what --probe takes: the probes, auto and off
# a state that fits no decision a request could ask about: weather, not a ticket, a claim or a review
OFF_TOPIC_STATE = (
    "The forecast for tomorrow: light rain in the morning, clearing by noon, with a high of "
    "fourteen degrees and a gentle breeze from the west."
)
FORCED = 0.5  # more than every other option together, on a state that fits none
FOLLOWED = 0.5  # share of the way to 1 − p that a noul with swapped descriptions must move
UNDECIDED = 0.1  # |2p − 1| below this: p(true) too close to 0.5 to tell a move
RESTS = 0.2  # total-variation distance from which an answer "rests on" what was changed


def resolve_probes(values: tuple[str, ...] | list[str]) -> tuple[list[str], str]:
    """``--probe`` values → (the probes to run, the order probe's mode: auto / order / off)."""
    chosen = list(dict.fromkeys(values)) or ["auto"]
    if "off" in chosen and len(chosen) > 1:
        raise UsageError("--probe off runs no probe: it cannot be combined with other probes")
    if chosen == ["off"]:
        return [], "off"
    order_mode = "order" if "order" in chosen else "auto" if "auto" in chosen else "off"
    names = [p for p in PROBES if p in chosen or (p == "order" and order_mode == "auto")]
    return names, order_mode


def _described(question: dict) -> bool:
    criteria = question.get("criteria")
    return isinstance(criteria, dict) and any(isinstance(v, str) and v.strip() for v in criteria.values())


def _choices(body: dict) -> list[str]:
    return [
        qid
        for qid, q in body["questions"].items()
        if q.get("type") == "choice" and isinstance(q.get("criteria"), dict) and len(q["criteria"]) >= 2
    ]


def neutral_ids(keys: list[str]) -> list[str]:
    """Neutral option ids for ``keys`` (``opt1``, ``opt2``, …), none equal to an original key."""
    taken = set(keys)
    prefix = "opt"
    while any(f"{prefix}{i + 1}" in taken for i in range(len(keys))):
        prefix += "x"
    return [f"{prefix}{i + 1}" for i in range(len(keys))]


def scope_questions(body: dict) -> list[str]:
    return _choices(body)


def criteria_questions(body: dict) -> list[str]:
    out = []
    for qid, q in body["questions"].items():
        criteria = q.get("criteria")
        if (
            q.get("type") == "noul"
            and isinstance(criteria, dict)
            and ("true" in criteria or "false" in criteria)
        ) or (qid in _choices(body) and _described(q)):
            out.append(qid)
    return out


def names_questions(body: dict) -> list[str]:
    return [qid for qid in _choices(body) if _described(body["questions"][qid])]


def scope_bodies(body: dict) -> dict[str, dict]:
    """The scope probe's requests: "empty state" and "off-topic state", its questions only."""
    questions = {qid: body["questions"][qid] for qid in scope_questions(body)}
    if not questions:
        return {}
    return {
        "empty state": {**body, "state": "", "questions": questions},
        "off-topic state": {**body, "state": OFF_TOPIC_STATE, "questions": questions},
    }


def criteria_body(body: dict) -> dict | None:
    """The criteria probe's request: nouls' descriptions swapped, choices' descriptions removed."""
    questions = {}
    for qid in criteria_questions(body):
        question = body["questions"][qid]
        criteria = question["criteria"]
        if question["type"] == "noul":
            swapped = {}
            if "false" in criteria:
                swapped["true"] = criteria["false"]
            if "true" in criteria:
                swapped["false"] = criteria["true"]
            questions[qid] = {**question, "criteria": swapped}
        else:
            questions[qid] = {**question, "criteria": dict.fromkeys(criteria)}
    return {**body, "questions": questions} if questions else None


def names_body(body: dict) -> dict | None:
    """The names probe's request: each described choice's keys replaced by neutral ids."""
    questions = {}
    for qid in names_questions(body):
        question = body["questions"][qid]
        keys = list(question["criteria"])
        ids = neutral_ids(keys)
        questions[qid] = {**question, "criteria": dict(zip(ids, question["criteria"].values()))}
    return {**body, "questions": questions} if questions else None


def probe_bodies(body: dict, probes: list[str] | tuple[str, ...]) -> dict[str, dict]:
    """The per-row variants of ``eval --perturb``: "criteria" and "names" (scope is per request)."""
    out = {}
    if "criteria" in probes and (found := criteria_body(body)) is not None:
        out["criteria"] = found
    if "names" in probes and (found := names_body(body)) is not None:
        out["names"] = found
    return out


def realign(answer: QuestionAnswer, keys: list[str]) -> list[float]:
    """An answer's probabilities in the order of the request's ``keys``: by key, or by position
    when the answer is to the names probe's neutral ids."""
    if answer.probabilities is None:
        return [0.0] * len(keys)
    if answer.keys == keys:  # the request's own order (a read answer's keys are the request's)
        return [p or 0.0 for p in answer.probabilities]
    if answer.keys == neutral_ids(keys) and answer.keys != keys:
        return list(answer.probabilities)
    return [answer.probability_of(key) or 0.0 for key in keys]


def planned_requests(
    body: dict, probes: list[str], order_mode: str, orders: int = DEFAULT_ORDERS
) -> dict[str, int]:
    """How many extra requests each probe sends for this request (what it states before sending)."""
    counts = {}
    for probe in probes:
        if probe == "order":
            plans = [
                display_orders(len(body["questions"][q]["criteria"]), orders)
                for q in probed_questions(body, order_mode)
            ]
            counts[probe] = max((len(p) for p in plans), default=1) - 1
        elif probe == "scope":
            counts[probe] = len(scope_bodies(body))
        elif probe == "criteria":
            counts[probe] = int(criteria_body(body) is not None)
        elif probe == "names":
            counts[probe] = int(names_body(body) is not None)
    return counts


def announce(counts: dict[str, int], per: str = "") -> str:
    """The one line a run prints before its probes send anything."""
    what = {
        "order": "reordered options",
        "scope": "empty and off-topic state",
        "criteria": "descriptions swapped or removed",
        "names": "option names replaced by neutral ids",
    }
    parts = [f"{name} {n} ({what[name]})" for name, n in counts.items()]
    return f"probes: {', '.join(parts)} extra request(s){per}" if parts else "probes: none apply"


def total_variation(p: list[float] | None, q: list[float] | None) -> float | None:
    if p is None or q is None:
        return None
    return 0.5 * sum(abs(a - b) for a, b in zip(p, q))


def _top(probs: list[float], keys: list[str]) -> tuple[str, float]:
    best = max(range(len(keys)), key=probs.__getitem__)
    return keys[best], probs[best]


@dataclass
class ProbeResult:
    """One probe of one question: what each changed request answered, the measure, the verdict."""

    probe: str
    question: str
    kind: str
    keys: list[str]
    variants: list[dict] = field(default_factory=list)  # {"variant", "answer", "probabilities"}
    measures: dict = field(default_factory=dict)
    verdict: str = ""
    flagged: bool = False  # a verdict that should change the request or the model

    def to_dict(self) -> dict:
        return {
            "probe": self.probe,
            "question": self.question,
            "kind": self.kind,
            "variants": self.variants,
            "measures": self.measures,
            "verdict": self.verdict,
            "flagged": self.flagged,
        }


def _variant(name: str, answer: QuestionAnswer, keys: list[str]) -> dict:
    probs = realign(answer, keys)
    return {
        "variant": name,
        "answer": keys[max(range(len(keys)), key=probs.__getitem__)]
        if answer.probabilities is not None
        else None,
        "probabilities": None if answer.probabilities is None else dict(zip(keys, probs)),
    }


def scope_verdict(
    question: dict, keys: list[str], tops: list[tuple[str, str, float]], design: str | None
) -> tuple[str, bool]:
    """``tops``: (variant, top option, its probability) per changed state; ``design``: the
    design finding's reference when PCD201 flags the question (None: it does not)."""
    from auditor.pcd import FALLBACK_OPTIONS, fallback_index

    variant, option, p = max(tops, key=lambda t: t[2])
    details = [v if isinstance(v, str) else "" for v in question["criteria"].values()]
    way_out = fallback_index(keys, details, FALLBACK_OPTIONS)
    where = f"for an {variant}" if variant.startswith(("empty", "off")) else f"for {variant}"
    if way_out is not None:
        out_key = keys[way_out]
        missed = [t for t in tops if t[1] != out_key]
        if not missed:
            shown = ", ".join(f"{t[2]:.2f} for an {t[0]}" for t in tops)
            return f"takes its way out: {out_key!r} {shown}", False
        m_variant, m_option, m_p = max(missed, key=lambda t: t[2])
        return (
            f"misses its way out: {m_p:.2f} on {m_option!r} for an {m_variant}, not on {out_key!r}",
            True,
        )
    if design is not None:
        if p > FORCED:
            return (
                f"forced: {p:.2f} on {option!r} {where}; the question offers no way out ({design})",
                True,
            )
        return (
            f"spread: at most {p:.2f} on one option for a state that fits none, but the question offers "
            f"no way out ({design})",
            False,
        )
    return f"no way out needed by the design rules; {p:.2f} on {option!r} {where}", False


def _criteria_result(
    question: dict, qid: str, keys: list[str], original: QuestionAnswer, changed: QuestionAnswer
) -> ProbeResult:
    result = ProbeResult("criteria", qid, question["type"], keys)
    result.variants = [
        _variant("original", original, keys),
        _variant("descriptions " + ("swapped" if question["type"] == "noul" else "removed"), changed, keys),
    ]
    if question["type"] == "noul":
        p, q = original.noul, changed.noul
        result.measures = {"p_true": p, "p_true_swapped": q, "ideal": None if p is None else 1 - p}
        if p is None or q is None:
            result.verdict = "no p(true) in the answer"
            return result
        if abs(2 * p - 1) < UNDECIDED:
            result.measures["followed"] = None
            result.verdict = f"undecided: p(true) {p:.2f} → {q:.2f} with true/false descriptions swapped; too close to 0.5 to tell"
            return result
        followed = (p - q) / (2 * p - 1)
        result.measures["followed"] = followed
        if followed >= FOLLOWED:
            result.verdict = (
                f"follows its descriptions: p(true) {p:.2f} → {q:.2f} with true/false descriptions "
                f"swapped ({followed:.0%} of the way to {1 - p:.2f})"
            )
        else:
            result.flagged = True
            result.verdict = (
                f"ignores its descriptions: p(true) {p:.2f} → {q:.2f} with true/false descriptions "
                f"swapped, {followed:.0%} of the way to {1 - p:.2f}; the answer rests on the "
                "instructions, not the criteria"
            )
        return result
    return _moved(result, original, changed, keys, "without its descriptions", "the descriptions")


def _moved(
    result: ProbeResult,
    original: QuestionAnswer,
    changed: QuestionAnswer,
    keys: list[str],
    how: str,
    what: str,
) -> ProbeResult:
    before, after = realign(original, keys), realign(changed, keys)
    distance = total_variation(before, after) or 0.0
    a, b = result.variants[0]["answer"], result.variants[1]["answer"]
    result.measures = {"total_variation": distance, "answer_changed": a != b}
    if a != b:
        result.verdict = f"rests on {what}: {a} → {b} {how} (total variation {distance:.2f})"
    elif distance >= RESTS:
        result.verdict = f"leans on {what}: {a} either way, but {distance:.2f} of the probability moved {how}"
    else:
        result.verdict = f"little rests on {what}: {a} either way (total variation {distance:.2f} {how})"
    return result


def _names_result(
    question: dict, qid: str, keys: list[str], original: QuestionAnswer, changed: QuestionAnswer
) -> ProbeResult:
    result = ProbeResult("names", qid, question["type"], keys)
    result.variants = [_variant("original", original, keys), _variant("neutral ids", changed, keys)]
    moved = _moved(result, original, changed, keys, "with neutral ids", "the names")
    moved.measures["ids"] = dict(zip(keys, neutral_ids(keys)))
    return moved


def run_probes(
    engine: Any,
    body: dict,
    answers: list[QuestionAnswer],
    probes: list[str],
    design: dict[str, str] | None = None,
) -> tuple[list[ProbeResult], int]:
    """Run the scope, criteria and names probes on a request already answered (``answers``);
    the results in request order, and the requests sent."""
    design = design or {}
    by_name = {a.name: a for a in answers}
    results: list[ProbeResult] = []
    sent = 0
    if "scope" in probes:
        bodies = scope_bodies(body)
        scoped: dict[str, dict[str, QuestionAnswer]] = {}
        for variant, asked in bodies.items():
            scoped[variant] = {a.name: a for a in read_answers(asked, engine.decide(asked))}
            sent += 1
        for qid in scope_questions(body):
            question = body["questions"][qid]
            keys = list(question["criteria"])
            result = ProbeResult("scope", qid, "choice", keys)
            if qid in by_name:  # (an eval probes the request without a row's state)
                result.variants = [_variant("original", by_name[qid], keys)]
            tops = []
            for variant in bodies:
                result.variants.append(_variant(variant, scoped[variant][qid], keys))
                probs = realign(scoped[variant][qid], keys)
                option, p = _top(probs, keys)
                tops.append((variant, option, p))
                result.measures[variant] = {"top": option, "p": p}
            result.measures["no_way_out"] = design.get(qid)
            result.verdict, result.flagged = scope_verdict(question, keys, tops, design.get(qid))
            results.append(result)
    for name, build, make in (
        ("criteria", criteria_body, _criteria_result),
        ("names", names_body, _names_result),
    ):
        changed = build(body) if name in probes else None
        if changed is None:
            continue
        got = {a.name: a for a in read_answers(changed, engine.decide(changed))}
        sent += 1
        for qid in changed["questions"]:
            if qid in by_name:
                results.append(make(body["questions"][qid], qid, by_name[qid].keys, by_name[qid], got[qid]))
    return results, sent


def probe_decision(
    engine: Any,
    body: dict,
    probes: list[str],
    order_mode: str,
    *,
    orders: int = DEFAULT_ORDERS,
    design: dict[str, str] | None = None,
) -> Any:
    """Ask the request, run the order probe (``orderprobe.probe_request``) and then the others;
    a ``ProbedDecision`` whose ``results`` hold the scope, criteria and names probes."""
    from auditor.decoder.orderprobe import probe_request

    decision = probe_request(engine, body, mode=order_mode if "order" in probes else "off", orders=orders)
    decision.results, sent = run_probes(engine, body, decision.answers, probes, design)
    decision.requests += sent
    return decision
