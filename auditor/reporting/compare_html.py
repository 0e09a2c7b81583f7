"""`eval --compare` as one self-contained HTML page: the gate, one chart of per-question accuracy
A vs B (bars with Wilson 95 % whiskers, inline SVG), the paired statistics and the flipped rows.
The view-model holds only strings and numbers; ``reports/templates/compare.html.j2`` draws it
(autoescape on, no script, no external assets).
"""

from __future__ import annotations

from auditor.reporting.jinja import environment
from auditor.version import __version__

BAR_WIDTH = 360  # px of the accuracy axis (0..1)
BAR = 14  # px height of one side's bar
GROUP = 2 * BAR + 14  # px per question: A, B and a gap
LEFT = 150  # px for the question names


def _fmt(value: float | None, digits: int = 3, sign: str = "") -> str:
    return "–" if value is None else f"{value:{sign}.{digits}f}"


def accuracy_chart(report: dict) -> dict:
    """Per question, a bar for A and one for B with their Wilson whiskers."""
    bars = []
    for number, question in enumerate(report["questions"]):
        top = number * GROUP + 6
        for offset, side in enumerate(("a", "b")):
            block = question[side]
            y = top + offset * BAR
            low, high = block["wilson95"] or (0.0, 0.0)
            bars.append(
                {
                    "side": side,
                    "label": question["name"] if offset == 0 else "",
                    "y": y,
                    "text_y": y + BAR - 3,
                    "width": round((block["accuracy"] or 0.0) * BAR_WIDTH, 1),
                    "low_x": round(LEFT + low * BAR_WIDTH, 1),
                    "high_x": round(LEFT + high * BAR_WIDTH, 1),
                    "mid_y": y + BAR / 2,
                    "value": f"{side.upper()} {_fmt(block['accuracy'])}",
                    "value_x": LEFT + BAR_WIDTH + 8,
                }
            )
    return {
        "bars": bars,
        "left": LEFT,
        "width": LEFT + BAR_WIDTH + 80,
        "height": len(report["questions"]) * GROUP + 24,
        "axis_y": len(report["questions"]) * GROUP + 6,
        "axis_end": LEFT + BAR_WIDTH,
        "ticks": [{"x": LEFT + t * BAR_WIDTH / 4, "label": f"{t / 4:.2f}"} for t in range(5)],
    }


def report_view(report: dict) -> dict:
    def side(block: dict) -> dict:
        backend = block["backend"]
        return {
            "request": block["request"],
            "endpoint": backend.get("endpoint") or backend.get("engine") or "",
            "model": backend.get("model") or "",
            "failed": block["failed"],
        }

    gate = report["gate"]
    questions = []
    for q in report["questions"]:
        cal_a, cal_b = q["a"]["calibration"] or {}, q["b"]["calibration"] or {}
        questions.append(
            {
                "name": q["name"],
                "paired": q["paired"],
                "acc_a": _fmt(q["a"]["accuracy"]),
                "acc_b": _fmt(q["b"]["accuracy"]),
                "ci_a": "–" if q["a"]["wilson95"] is None else "[{:.3f}, {:.3f}]".format(*q["a"]["wilson95"]),
                "ci_b": "–" if q["b"]["wilson95"] is None else "[{:.3f}, {:.3f}]".format(*q["b"]["wilson95"]),
                "difference": _fmt(q["difference"], sign="+"),
                "bootstrap": "–"
                if q["bootstrap95"] is None
                else "[{:+.3f}, {:+.3f}]".format(*q["bootstrap95"]),
                "p_value": f"{q['mcnemar']['p_value']:.4g}",
                "right_to_wrong": q["flips"]["right_to_wrong"],
                "wrong_to_right": q["flips"]["wrong_to_right"],
                "agreement": _fmt(q["agreement"]),
                "ece_a": _fmt(cal_a.get("ece")),
                "ece_b": _fmt(cal_b.get("ece")),
                "nll_a": _fmt(cal_a.get("nll")),
                "nll_b": _fmt(cal_b.get("nll")),
                "failed": bool(q["gate"] and q["gate"]["failed"]),
            }
        )
    return {
        "title": f"pcdlint eval --compare: {report['data']}",
        "version": __version__,
        "data": report["data"],
        "rows": report["rows"],
        "a": side(report["a"]),
        "b": side(report["b"]),
        "gate": gate,
        "seed": report["options"]["seed"],
        "resamples": report["options"]["resamples"],
        "chart": accuracy_chart(report),
        "questions": questions,
        "not_compared": report["not_compared"],
    }


def render_compare_html(report: dict) -> str:
    return environment().get_template("compare.html.j2").render(report=report_view(report))
