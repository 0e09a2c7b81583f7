"""The eval report as one self-contained HTML page: a view-model of numbers and strings here,
drawn by ``reports/templates/eval.html.j2`` (autoescape on) as inline SVG and tables.
"""

from __future__ import annotations

from auditor.eval.backends import METHOD_LABELS, METHODS
from auditor.reporting.jinja import environment
from auditor.shown import shown
from auditor.version import __version__

BAR_WIDTH = 360  # px of the accuracy axis (0..1)
BAR_ROW = 26
BAR_LEFT = 110
DIAGRAM = 180  # px side of a reliability diagram's plot area
DIAGRAM_MARGIN = 28
SHADES = 6


def _fmt(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def accuracy_bars(field: dict) -> dict:
    rows = []
    methods = [m for m in METHODS if field["methods"][m].get("available")]
    for number, method in enumerate(methods):
        block = field["methods"][method]
        low, high = block["wilson95"]
        y = number * BAR_ROW + 6
        rows.append(
            {
                "label": METHOD_LABELS[method],
                "y": y,
                "text_y": y + 14,
                "height": BAR_ROW - 10,
                "width": round((block["accuracy"] or 0) * BAR_WIDTH, 1),
                "low_x": round(BAR_LEFT + low * BAR_WIDTH, 1),
                "high_x": round(BAR_LEFT + high * BAR_WIDTH, 1),
                "mid_y": y + (BAR_ROW - 10) / 2,
                "value": f"{_fmt(block['accuracy'])} [{low:.3f}, {high:.3f}]",
                "value_x": round(BAR_LEFT + BAR_WIDTH + 8, 1),
            }
        )
    height = len(methods) * BAR_ROW + 24
    ceiling = field["tokenization"]["first_token_ceiling"]
    return {
        "rows": rows,
        "left": BAR_LEFT,
        "axis_width": BAR_WIDTH,
        "height": height,
        "width": BAR_LEFT + BAR_WIDTH + 160,
        "axis_y": height - 18,
        "ticks": [{"x": round(BAR_LEFT + t / 4 * BAR_WIDTH, 1), "label": f"{t / 4:.2f}"} for t in range(5)],
        "ceiling_x": None if ceiling is None else round(BAR_LEFT + ceiling * BAR_WIDTH, 1),
        "ceiling": _fmt(ceiling),
    }


def reliability_diagram(method: str, calibration: dict) -> dict:
    side, margin = DIAGRAM, DIAGRAM_MARGIN
    bars, dots = [], []
    for b in calibration["before"]["reliability"]:
        if b["count"]:
            height = b["accuracy"] * side
            bars.append(
                {
                    "x": round(margin + b["lower"] * side + 1, 1),
                    "y": round(margin + side - height, 1),
                    "width": round(side / len(calibration["before"]["reliability"]) - 2, 1),
                    "height": round(height, 1),
                    "title": f"T=1, confidence {b['lower']:.1f}–{b['upper']:.1f}: {b['count']} rows, "
                    f"accuracy {b['accuracy']:.3f}, mean confidence {b['confidence']:.3f}",
                }
            )
    for b in calibration["after"]["reliability"]:
        if b["count"]:
            dots.append(
                {
                    "cx": round(margin + b["confidence"] * side, 1),
                    "cy": round(margin + side - b["accuracy"] * side, 1),
                    "title": f"T={calibration['temperature']:.2f}: {b['count']} rows, accuracy {b['accuracy']:.3f}, "
                    f"mean confidence {b['confidence']:.3f}",
                }
            )
    return {
        "method": METHOD_LABELS[method],
        "side": side,
        "margin": margin,
        "size": side + 2 * margin,
        "bars": bars,
        "dots": dots,
        "bottom": margin + side,
        "right": margin + side,
        "ece_before": _fmt(calibration["before"]["ece"]),
        "ece_after": _fmt(calibration["after"]["ece"]),
        "nll_before": _fmt(calibration["before"]["nll"]),
        "nll_after": _fmt(calibration["after"]["nll"]),
        "temperature": f"{calibration['temperature']:.2f}",
        "heldout": calibration["heldout_rows"],
        "note": calibration["note"] or "",
    }


def confusion_view(field: dict, method: str) -> dict:
    matrix = field["methods"][method]["confusion"]
    peak = max((max(row) for row in matrix), default=0) or 1
    return {
        "method": METHOD_LABELS[method],
        "labels": [shown(o, quoted=False) for o in field["options"]],
        "rows": [
            {
                "label": shown(field["options"][g], quoted=False),
                "cells": [
                    {
                        "count": count,
                        "shade": 0 if not count else 1 + round((SHADES - 2) * count / peak),
                        "diagonal": g == p,
                    }
                    for p, count in enumerate(row)
                ],
            }
            for g, row in enumerate(matrix)
        ],
    }


def field_view(field: dict, perturb: list[str]) -> dict:
    methods = [m for m in METHODS if field["methods"][m].get("available")]
    tokenization = field["tokenization"]
    structure = field["structure"]
    return {
        "name": field["name"],
        "kind": field["kind"],
        "labeled": field["labeled"],
        "options": [
            {"text": shown(o, quoted=False), "count": c, "scored": structure["scored_tokens"][i]}
            for i, (o, c) in enumerate(zip(field["options"], field["label_counts"]))
        ],
        "buckets": [
            {
                "options": [shown(field["options"][i], quoted=False) for i in bucket],
                "winner": shown(field["options"][bucket[0]], quoted=False),
            }
            for bucket in structure["buckets"]
        ],
        "prefix": structure["prefix"],
        "ceiling": _fmt(tokenization["first_token_ceiling"]),
        "unreachable": tokenization["gold_unreachable"],
        "first_wrong_full_right": tokenization["first_token_wrong_full_sequence_right"],
        "either": tokenization["either"],
        "letter_reason": ""
        if field["methods"]["letter"].get("available")
        else field["methods"]["letter"]["reason"],
        "table": [
            {
                "method": METHOD_LABELS[m],
                "accuracy": _fmt(field["methods"][m]["accuracy"]),
                "interval": "[{:.3f}, {:.3f}]".format(*field["methods"][m]["wilson95"]),
                "f1": _fmt(field["methods"][m]["macro_f1"]),
                "ece": _fmt(field["methods"][m]["calibration"]["before"]["ece"]),
                "ece_t": _fmt(field["methods"][m]["calibration"]["after"]["ece"]),
                "t": f"{field['methods'][m]['calibration']['temperature']:.2f}",
                "flips": [str(field["perturbation"][p]["flips"].get(m, "")) for p in perturb],
            }
            for m in methods
        ],
        "bars": accuracy_bars(field),
        "diagrams": [reliability_diagram(m, field["methods"][m]["calibration"]) for m in methods],
        "confusions": [confusion_view(field, m) for m in methods],
    }


def report_view(report: dict) -> dict:
    backend = report["backend"]
    perturb = report["options"]["perturb"]
    return {
        "title": "pcdlint eval report",
        "version": __version__,
        "schema": report["schema"],
        "data": report["data"],
        "rows": report["rows"],
        "model": str(backend.get("model")),
        "backend": str(backend.get("backend")),
        "device": f"{backend.get('device')} {backend.get('dtype')}",
        "holdout": f"{report['options']['holdout']:.0%}",
        "seed": report["options"]["seed"],
        "cache": report["cache"],
        "perturb": perturb,
        "shades": list(range(SHADES)),
        "fields": [field_view(f, perturb) for f in report["fields"]],
        "notes": report["notes"],
    }


def render_html(report: dict) -> str:
    return environment().get_template("eval.html.j2").render(report=report_view(report))
