"""`eval --perturb criteria|names|scope` on a decision request: the probes of
``auditor.decoder.probes`` over every labeled row.

``criteria`` and ``names`` are per-row variants of the request (``probe_bodies``), answered and
cached like the option-order variants; each row's answer is mapped back to the request's keys
(``probes.realign``) and kept as one small entry as the rows stream (``row_probe_entry``). Per question the report gives the rows whose answer changed, the mean
total-variation distance, the accuracy with the change against the original's, a verdict, and
each row's numbers. For a noul with its descriptions swapped a change is what a sound answer
does: the verdict counts the rows where p(true) moved at least half the way to 1 − p.
``scope`` does not depend on a row (an empty and an off-topic state): it is asked once, 2
requests, and reported per choice question as ``verify --probe scope`` reports it.
"""

from __future__ import annotations

from typing import Any

from auditor.decoder.probes import FOLLOWED, RESTS, UNDECIDED, total_variation
from auditor.eval import metrics

METHOD = "served"
ROW_PROBES = ("criteria", "names")
WHAT = {"criteria": "the descriptions", "names": "the names"}
HOW = {"criteria": "without its descriptions", "names": "with neutral ids"}


def row_probe_entry(kind: str, keys: list[str], row: Any, p: list[float], q: list[float], gold: int) -> dict:
    """One labeled row answered both ways (``p`` the original's probabilities, ``q`` the
    probe's, both in the request's key order; ``gold`` the label's index)."""
    a, b = metrics.argmax_first(p), metrics.argmax_first(q)
    entry = {
        "id": row.id,
        "label": keys[gold],
        "answer": keys[a],
        "changed_answer": keys[b],
        "total_variation": total_variation(p, q),
    }
    if kind == "noul":
        entry["p_true"], entry["p_true_changed"] = p[0], q[0]
        entry["followed"] = None if abs(2 * p[0] - 1) < UNDECIDED else (p[0] - q[0]) / (2 * p[0] - 1)
    return entry


def row_probe_summary(probe: str, question: dict, by_row: list[dict]) -> dict | None:
    """The probe's block of a question's report, from its rows' entries (``row_probe_entry``)."""
    if not by_row:
        return None
    n = len(by_row)
    changed_rows = sum(e["answer"] != e["changed_answer"] for e in by_row)
    mean_tv = sum(e["total_variation"] or 0.0 for e in by_row) / n
    accuracy = sum(e["answer"] == e["label"] for e in by_row) / n
    accuracy_changed = sum(e["changed_answer"] == e["label"] for e in by_row) / n
    report = {
        "rows": n,
        "requests": n,
        "flips": {METHOD: changed_rows},
        "mean_total_variation": mean_tv,
        "accuracy": accuracy,
        "accuracy_changed": accuracy_changed,
        "flagged": False,
    }
    if question["type"] == "noul":
        told = [e["followed"] for e in by_row if e["followed"] is not None]
        followed = sum(f >= FOLLOWED for f in told)
        report["followed"] = followed
        report["told"] = len(told)
        if not told:
            report["verdict"] = f"undecided: p(true) within {UNDECIDED / 2:.2f} of 0.5 on every row"
        elif followed * 2 > len(told):
            report["verdict"] = (
                f"follows its descriptions: p(true) moved at least half the way to 1 − p with true/false "
                f"descriptions swapped in {followed} of {len(told)} rows"
            )
        else:
            report["flagged"] = True
            report["verdict"] = (
                f"ignores its descriptions: p(true) moved half the way to 1 − p with true/false "
                f"descriptions swapped in only {followed} of {len(told)} rows"
            )
    else:
        what, how = WHAT[probe], HOW[probe]
        shift = f"accuracy {accuracy:.3f} → {accuracy_changed:.3f} {how}"
        if changed_rows * 10 >= n or mean_tv >= RESTS:
            report["verdict"] = (
                f"rests on {what}: the answer changed in {changed_rows} of {n} rows {how} "
                f"(mean total variation {mean_tv:.2f}); {shift}"
            )
        else:
            report["verdict"] = (
                f"little rests on {what}: the answer changed in {changed_rows} of {n} rows {how} "
                f"(mean total variation {mean_tv:.2f}); {shift}"
            )
    report["by_row"] = by_row
    return report


def probe_lines(report: dict) -> list[str]:
    """The text report's lines for the scope, criteria and names probes, per question."""
    out: list[str] = []
    for question in report["questions"]:
        for name in ("scope", *ROW_PROBES):
            probe = question["perturbation"].get(name)
            if probe is None:
                continue
            if name == "scope":
                out.append(
                    f"scope probe {question['name']} ({probe['requests']} requests): {probe['verdict']}"
                )
            else:
                out.append(
                    f"{name} probe {question['name']} ({probe['rows']} rows, {probe['requests']} requests): "
                    f"{probe['verdict']}"
                )
    return ["", *out] if out else []
