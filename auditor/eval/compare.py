"""`eval --compare`: the same labeled rows through two sides, A and B, paired per row.

The two sides are two decision evals (``auditor.eval.decisions``) over the same rows file: two
endpoints (``--base-url-b``), two models (``--model-b``) or two versions of a request file
(``--request-b``). Per question both sides label, on the rows both answered:

- the accuracy of each side with its Wilson 95 % interval (``metrics.wilson_interval``);
- the difference B − A with a paired bootstrap interval: ``scipy.stats.bootstrap`` over the row
  pairs (``paired=True``, percentile method, ``RESAMPLES`` resamples, the generator
  ``numpy.random.default_rng(seed)``), so a rerun with the same seed gives the same interval;
- McNemar's exact test of equal accuracy: under equality a row that flipped is as likely to
  have flipped either way, so the two-sided p-value is ``scipy.stats.binomtest(k, n, 0.5)``
  with n the rows that flipped and k those that went right → wrong (1.0 when none flipped);
- the rows that flipped, each way, listed; the agreement rate (same answer, right or wrong);
- each side's calibration (ECE and NLL before and after temperature scaling, from its eval).

``--fail-if-worse MARGIN`` makes it a gate: it fails on a question when A's accuracy exceeds
B's by more than MARGIN *and* McNemar's test rejects equality at ``--alpha``; a drop within
the margin, or one the test cannot tell from chance, passes.
"""

from __future__ import annotations

from typing import Any

from auditor.eval import metrics
from auditor.version import __version__

REPORT_KIND = "decision-compare"
RESAMPLES = 10_000
CONFIDENCE = 0.95
METHOD = "served"


def mcnemar_exact(right_to_wrong: int, wrong_to_right: int) -> float:
    """Two-sided exact McNemar p-value (binomial on the discordant pairs, p = 1/2)."""
    from scipy.stats import binomtest

    flipped = right_to_wrong + wrong_to_right
    if flipped == 0:
        return 1.0
    return float(binomtest(right_to_wrong, flipped, 0.5, alternative="two-sided").pvalue)


def paired_bootstrap(a_right: list[bool], b_right: list[bool], seed: int) -> tuple[float, float] | None:
    """The percentile interval of accuracy(B) − accuracy(A) over resampled row pairs; None under 2 rows."""
    if len(a_right) < 2:
        return None
    import numpy as np
    from scipy.stats import bootstrap

    a = np.asarray(a_right, dtype=float)
    b = np.asarray(b_right, dtype=float)
    if (b - a).min() == (b - a).max():  # every pair the same: no spread to resample
        difference = float(b.mean() - a.mean())
        return difference, difference

    def statistic(x: Any, y: Any, axis: int = -1) -> Any:
        return np.mean(y, axis=axis) - np.mean(x, axis=axis)

    result = bootstrap(
        (a, b),
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=RESAMPLES,
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _calibration(question: dict | None) -> dict | None:
    if question is None:
        return None
    block = question["methods"][METHOD]
    calibration = block["calibration"]
    return {
        "ece": calibration["before"]["ece"],
        "ece_scaled": calibration["after"]["ece"],
        "nll": calibration["before"]["nll"],
        "nll_scaled": calibration["after"]["nll"],
        "temperature": calibration["temperature"],
    }


def _side(report: dict, label: str) -> dict:
    return {
        "label": label,
        "request": report["request"],
        "backend": report["backend"],
        "rows": report["rows"],
        "failed": len(report["failed"]),
    }


def compare_question(
    name: str, rows_a: list[dict], rows_b: list[dict], seed: int, margin: float | None, alpha: float
) -> dict:
    """The paired statistics of one question over the predictions of both sides (row order)."""
    pairs = []
    agree = answered = 0
    for row_a, row_b in zip(rows_a, rows_b, strict=True):
        got_a = (row_a.get("answers") or {}).get(name)
        got_b = (row_b.get("answers") or {}).get(name)
        if got_a is None or got_b is None:
            continue
        answered += 1
        agree += got_a == got_b
        gold = (row_a.get("labels") or {}).get(name)
        if gold is not None:
            pairs.append((row_a["id"], gold, got_a, got_b))
    a_right = [a == gold for _id, gold, a, _b in pairs]
    b_right = [b == gold for _id, gold, _a, b in pairs]
    n = len(pairs)
    correct_a, correct_b = sum(a_right), sum(b_right)
    acc_a = correct_a / n if n else None
    acc_b = correct_b / n if n else None
    flips = {
        "right_to_wrong": [
            {"id": i, "label": gold, "a": a, "b": b} for i, gold, a, b in pairs if a == gold and b != gold
        ],
        "wrong_to_right": [
            {"id": i, "label": gold, "a": a, "b": b} for i, gold, a, b in pairs if a != gold and b == gold
        ],
    }
    worse, better = len(flips["right_to_wrong"]), len(flips["wrong_to_right"])
    p_value = mcnemar_exact(worse, better)
    difference = None if n == 0 else correct_b / n - correct_a / n
    interval = paired_bootstrap(a_right, b_right, seed)
    gate = None
    if margin is not None and difference is not None:
        fails = -difference > margin and p_value < alpha
        gate = {"margin": margin, "alpha": alpha, "failed": fails}
    return {
        "name": name,
        "paired": n,
        "answered_by_both": answered,
        "a": {
            "correct": correct_a,
            "accuracy": acc_a,
            "wilson95": list(metrics.wilson_interval(correct_a, n)) if n else None,
        },
        "b": {
            "correct": correct_b,
            "accuracy": acc_b,
            "wilson95": list(metrics.wilson_interval(correct_b, n)) if n else None,
        },
        "difference": difference,
        "bootstrap95": None if interval is None else list(interval),
        "mcnemar": {"right_to_wrong": worse, "wrong_to_right": better, "p_value": p_value},
        "flips": flips,
        "agreement": agree / answered if answered else None,
        "gate": gate,
    }


def compare_reports(
    report_a: dict,
    report_b: dict,
    *,
    seed: int,
    margin: float | None = None,
    alpha: float = 0.05,
    labels: tuple[str, str] = ("A", "B"),
) -> dict:
    """The JSON report (version 1, kind "decision-compare") of two decision evals on the same rows."""
    ids_a = [row["id"] for row in report_a["predictions"]]
    ids_b = [row["id"] for row in report_b["predictions"]]
    if ids_a != ids_b:
        raise ValueError("the two sides were not run on the same rows")
    questions_b = {q["name"]: q for q in report_b["questions"]}
    compared, skipped = [], []
    for question in report_a["questions"]:
        other = questions_b.get(question["name"])
        if other is None or sorted(other["options"]) != sorted(question["options"]):
            skipped.append(question["name"])
            continue
        block = compare_question(
            question["name"], report_a["predictions"], report_b["predictions"], seed, margin, alpha
        )
        block["kind"] = question["kind"]
        block["a"]["calibration"] = _calibration(question)
        block["b"]["calibration"] = _calibration(other)
        compared.append(block)
    skipped += [name for name in questions_b if name not in {q["name"] for q in report_a["questions"]}]
    failing = [q["name"] for q in compared if q["gate"] and q["gate"]["failed"]]
    return {
        "version": 1,
        "kind": REPORT_KIND,
        "tool": {"name": "pcdlint", "version": __version__},
        "data": report_a["data"],
        "rows": report_a["rows"],
        "a": _side(report_a, labels[0]),
        "b": _side(report_b, labels[1]),
        "options": {
            "seed": seed,
            "resamples": RESAMPLES,
            "confidence": CONFIDENCE,
            "bootstrap": "percentile, paired rows (scipy.stats.bootstrap)",
            "test": "McNemar exact (scipy.stats.binomtest, two-sided)",
        },
        "questions": compared,
        "not_compared": skipped,
        "gate": None
        if margin is None
        else {"margin": margin, "alpha": alpha, "failed": bool(failing), "questions": failing},
        "sides": {"a": report_a, "b": report_b},
    }


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _interval(pair: list[float] | None, signed: bool = False) -> str:
    if pair is None:
        return "-"
    sign = "+" if signed else ""
    return f"[{pair[0]:{sign}.3f},{pair[1]:{sign}.3f}]"


def render_compare_text(report: dict, flips_shown: int = 10) -> str:
    """The busy author's view: the gate, then per question A vs B, then the flipped rows."""
    a, b = report["a"], report["b"]

    def where(side: dict) -> str:
        backend = side["backend"]
        model = f", model {backend['model']}" if backend.get("model") else ""
        return f"{side['request']} on {backend.get('endpoint') or backend.get('engine')}{model}"

    out = [
        f"pcdlint eval --compare: {report['data']} ({report['rows']} rows)",
        f"A: {where(a)}" + (f"; {a['failed']} row(s) failed" if a["failed"] else ""),
        f"B: {where(b)}" + (f"; {b['failed']} row(s) failed" if b["failed"] else ""),
    ]
    gate = report["gate"]
    if gate is not None:
        verdict = (
            f"FAIL: B is worse than A by more than {gate['margin']:g} on {', '.join(gate['questions'])} "
            f"(McNemar p < {gate['alpha']:g})"
            if gate["failed"]
            else f"pass: B is not worse than A by more than {gate['margin']:g} at alpha {gate['alpha']:g}"
        )
        out.append(f"gate: {verdict}")
    out.append("")
    header = (
        f"{'question':<22} {'n':>4} {'acc A':>6} {'95% CI':<13} {'acc B':>6} {'95% CI':<13} "
        f"{'B-A':>6} {'bootstrap 95%':<15} {'p':>7} {'agree':>6} {'ECE A':>6} {'ECE B':>6}"
    )
    out += [header, "-" * len(header)]
    for q in report["questions"]:
        cal_a, cal_b = q["a"]["calibration"] or {}, q["b"]["calibration"] or {}
        diff = "-" if q["difference"] is None else f"{q['difference']:+.3f}"
        out.append(
            f"{q['name']:<22} {q['paired']:>4} {_num(q['a']['accuracy']):>6} {_interval(q['a']['wilson95']):<13} "
            f"{_num(q['b']['accuracy']):>6} {_interval(q['b']['wilson95']):<13} {diff:>6} "
            f"{_interval(q['bootstrap95'], signed=True):<15} {q['mcnemar']['p_value']:>7.4f} "
            f"{_num(q['agreement']):>6} {_num(cal_a.get('ece')):>6} {_num(cal_b.get('ece')):>6}"
        )
    for q in report["questions"]:
        for way, title in (("right_to_wrong", "right -> wrong"), ("wrong_to_right", "wrong -> right")):
            rows = q["flips"][way]
            if not rows:
                continue
            shown = ", ".join(f"{r['id']} ({r['a']} -> {r['b']})" for r in rows[:flips_shown])
            more = f", … {len(rows) - flips_shown} more (JSON lists all)" if len(rows) > flips_shown else ""
            out.append(f"{q['name']}: {len(rows)} row(s) {title}: {shown}{more}")
    if report["not_compared"]:
        out.append(
            "not compared (the sides differ in this question or its options): "
            + ", ".join(report["not_compared"])
        )
    return "\n".join(out) + "\n"
