"""Render an eval report (the JSON dict of ``run_eval``) as text, JSON or HTML.

HTML: one self-contained page (Jinja2 template ``eval.html.j2`` in ``auditor.templates``,
autoescape on, inline CSS, no script, no external assets) with inline SVG reliability diagrams,
accuracy bars with Wilson intervals per method, and the confusion matrices. The view-model
holds only strings and numbers; every SVG coordinate is computed here.
"""

from __future__ import annotations

import json

from auditor.eval.backends import METHOD_LABELS, METHODS
from auditor.shown import shown


def _num(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


# --------------------------------------------------------------------------- text


def render_text(report: dict) -> str:
    backend = report["backend"]
    cache = report["cache"]
    out = [
        f"pcdlint eval: {report['schema']} on {report['data']} ({report['rows']} rows)",
        (
            f"model: {backend.get('model')} ({backend.get('backend')}, {backend.get('device')} {backend.get('dtype')}); "
            f"cache: {cache['hits']} hit(s), {cache['scored']} scored"
        ),
        (
            f"calibration: temperature fit on the rows not held out, ECE ({report['options']['ece_bins']} bins) "
            f"and NLL on the held-out ones (about {report['options']['holdout']:.0%} of rows, chosen by row id, "
            f"seed {report['options']['seed']})"
        ),
        "",
    ]
    perturb = report["options"]["perturb"]
    # a field no row labels has nothing measured: named once, after the table, not a row of dashes
    measured = [field for field in report["fields"] if field["labeled"]]
    unlabeled = [field["name"] for field in report["fields"] if not field["labeled"]]
    width = max([22, *(len(field["name"]) for field in measured)])
    header = (
        f"{'field':<{width}} {'method':<14} {'acc':>5}  {'95% CI':<13} {'F1':>5}  {'ECE':>5} {'ECE(T)':>6} "
        f"{'NLL':>5} {'NLL(T)':>6} {'T':>5}" + "".join(f" {'flips:' + p:>11}" for p in perturb)
    )
    out.append(header)
    out.append("-" * len(header))
    for field in measured:
        for method in METHODS:
            block = field["methods"][method]
            if not block.get("available"):
                continue
            calibration = block["calibration"]
            low, high = block["wilson95"]
            line = (
                f"{field['name']:<{width}} {METHOD_LABELS[method]:<14} {_num(block['accuracy'])}  "
                f"[{low:.3f},{high:.3f}] {_num(block['macro_f1'])}  {_num(calibration['before']['ece'])} "
                f"{_num(calibration['after']['ece']):>6} {_num(calibration['before']['nll'])} "
                f"{_num(calibration['after']['nll']):>6} {calibration['temperature']:>5.2f}"
            )
            for name in perturb:
                flips = field["perturbation"][name]["flips"].get(method)
                flipped = "" if flips is None else f"{flips}/{field['labeled']}"
                line += f" {flipped:>11}"
            out.append(line)
    if unlabeled:
        out.append(f"not measured (no row labels them): {', '.join(unlabeled)}")
    out.append("")
    for field in measured:
        tokenization = field["tokenization"]
        first = field["methods"]["first_token"]
        buckets = field["structure"]["buckets"]
        colliding = "; ".join(
            "{" + ", ".join(shown(field["options"][i], quoted=False) for i in bucket) + "}"
            for bucket in buckets
        )
        out.append(
            f"{field['name']}: {field['labeled']} labeled rows; first-token ceiling {_num(tokenization['first_token_ceiling'])} "
            f"({tokenization['ceiling_rows']} golds can win), first-token accuracy {_num(first['accuracy'])}; "
            f"tokenization-caused errors: {tokenization['gold_unreachable']} gold not its bucket's tie winner, "
            f"{tokenization['first_token_wrong_full_sequence_right']} first-token wrong but full-sequence right"
            + (f"; colliding buckets {colliding}" if buckets else "")
        )
        letter = field["methods"]["letter"]
        if not letter.get("available"):
            out.append(f"  letter slots: {letter['reason']}")
        for method in METHODS:
            note = field["methods"][method].get("calibration", {}).get("note")
            if note:
                out.append(f"  {METHOD_LABELS[method]} calibration: {note}")
    out.extend(f"note: {note}" for note in report["notes"])
    return "\n".join(out) + "\n"


def render_json(report: dict) -> str:
    """The report as indented JSON, its spilled predictions read back (a small report: the CLI
    streams a large one through ``auditor.reporting.json_stream``)."""
    return json.dumps(report, indent=2, ensure_ascii=False, default=_spilled) + "\n"


def _spilled(value: object) -> list:
    from auditor.eval.spill import Spill

    if isinstance(value, Spill):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def render(name: str, report: dict) -> str:
    if name == "text":
        return render_text(report)
    if name == "json":
        return render_json(report)
    if name == "html":
        from auditor.reporting.eval_html import render_html

        return render_html(report)
    raise ValueError(f"unknown eval report format {name!r}")
