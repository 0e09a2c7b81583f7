"""A self-contained HTML report for reviewers: a plain view-model built here, rendered by Jinja2.

Templates live in `reports/templates/` (installed as `auditor.templates`): page, file, finding.
Autoescape is on for everything; the view-model holds only strings, numbers, lists and dicts,
so the templates need nothing beyond loops and conditions. Each flagged field gets one card per
tokenizer: its options split into token pieces (the scored piece highlighted), collision
buckets as coloured groups with their tie winner, the single-letter remap table (or why it is
not viable), every finding with its rule's explanation, and a reserved place for verification
results (`finding.verification`, filled by `pcdlint check --verify`). Big enums are
summarised by bucket with the full lists collapsed, so a report of thousands of options stays
small. Findings are rendered generically (message + data), so new rules need no template change.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from auditor.linter.engine import FileResult, Finding, LintRun
from auditor.linter.registry import SEVERITIES, load_rules
from auditor.pcd.scoring import SLOT_LETTERS, SiteTokens
from auditor.reporting import formatter
from auditor.reporting.fields import verdict
from auditor.reporting.jinja import environment
from auditor.reporting.matrix import CLEAN, matrix_dict
from auditor.schema.sites import Site
from auditor.version import __version__

BIG_FIELD = 40  # options; above this a card's groups start collapsed
EXAMPLES = 8  # options per group drawn with token pieces in a big field; the rest as plain text
MAX_DATA_CHARS = 1_500  # a finding's data shown in full up to this; the JSON format has it all
BUCKET_COLOURS = 12
DRAWN_GROUPS = 8  # in a big field, later collision buckets are listed as plain text only


def _jsonish(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _data_text(data: dict) -> str:
    # suggestions are drawn as before → after tables; the JSON format has them in full
    shown = {k: v for k, v in data.items() if k != "suggestions"}
    if not shown:
        return ""
    text = json.dumps(shown, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_DATA_CHARS:
        text = (
            text[:MAX_DATA_CHARS] + f"\n… {len(text) - MAX_DATA_CHARS} more characters "
            "(see `pcdlint check --format json`)"
        )
    return text


def _key_values(value) -> list[dict]:
    """A generic dict (cost model, verification) → rows of label and text."""
    if isinstance(value, dict):
        return [{"label": str(k), "text": _jsonish(v)} for k, v in value.items()]
    if hasattr(value, "to_dict"):
        return _key_values(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return _key_values(asdict(value))
    return [{"label": "", "text": _jsonish(value)}]


CHART_WIDTH = 360  # px of the longest bar in the cost chart
BUCKET_BAR = 240  # px of a bucket holding every option of its field
FIX_ROWS = 12  # before → after rows drawn per fix; the JSON snippet has every option
MAX_FIXES = 3  # verified fixes shown per card (the JSON format has them all)


def _cost(run: LintRun) -> dict | None:
    """The cost model as tables and chart bars; unknown shapes as label/text rows."""
    cost = getattr(run, "cost", None)
    if not cost:
        return None
    known = all(isinstance(v, dict) and isinstance(v.get("files"), dict) for v in cost.values())
    if not known:
        return {"tokenizers": [], "rows": _key_values(cost)}
    tokenizers = []
    for tokenizer_id, model in cost.items():
        files = []
        for path, c in model["files"].items():
            files.append(
                {
                    "path": path,
                    "name": path.replace("\\", "/").rsplit("/", 1)[-1],
                    "fields": c["fields"],
                    "pcd": c["pcd"]["passes"],
                    "fallback": c["pcd"]["fallback_steps"],
                    "worst_field": c["pcd"].get("worst_field") or "",
                    "naive": c["naive"]["passes_longest"],
                    "naive_mean": c["naive"]["passes_mean"],
                    "speedup": c.get("speedup_longest"),
                }
            )
        top = max([f["naive"] for f in files] + [f["pcd"] for f in files] + [1])
        for number, f in enumerate(files):
            f["y"] = number * 34
            f["naive_w"] = max(2, round(CHART_WIDTH * f["naive"] / top))
            f["pcd_w"] = max(2, round(CHART_WIDTH * f["pcd"] / top))
        tokenizers.append(
            {"id": tokenizer_id, "files": files, "run": model.get("run", {}), "height": 34 * len(files) + 4}
        )
    return {"tokenizers": tokenizers, "rows": []}


def _rule_help(code: str) -> dict:
    rule = load_rules().get(code)
    if rule is None:
        return {"summary": "", "what": "", "why": ""}
    sections = rule.sections
    return {
        "summary": rule.summary,
        "what": sections.get("What it does", ""),
        "why": sections.get("Why is this bad?", ""),
    }


def finding_view(finding: Finding) -> dict:
    verification = finding.verification
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity,
        "message": finding.message,
        "line": finding.line,
        "column": finding.column,
        "pointer": finding.pointer,
        "tokenizer": finding.tokenizer or "",
        "engine": finding.engine or "",
        "data": _data_text(finding.data),
        "summary": _rule_help(finding.code)["summary"],
        "verification": _key_values(verification) if verification else [],
    }


def _option_view(tokens: SiteTokens, index: int, colour: int | None) -> dict:
    option = tokens.options[index]
    pieces = tokens.pieces(option)
    prefix = tokens.prefix if option.is_string else ""
    return {
        "index": index,
        "prefix": prefix,
        "pieces": [{"text": p, "scored": i == 0} for i, p in enumerate(pieces)],
        "text": option.text,
        "multi": len(option.ids) > 1,
        "colour": colour,
    }


def _group(tokens: SiteTokens, indexes: list[int], colour: int | None, big: bool, draw: bool = True) -> dict:
    drawn = (indexes[:EXAMPLES] if big else indexes) if draw else []
    return {
        "colour": colour,
        "size": len(indexes),
        "options": [_option_view(tokens, i, colour) for i in drawn],
        "rest": ", ".join(tokens.options[i].text for i in indexes[len(drawn) :]),
        "rest_count": len(indexes) - len(drawn),
    }


def _suggestions(findings: list[Finding]) -> list[dict]:
    """Verified renamings (from the findings' data) as before → after rows and a JSON snippet."""
    seen, out = set(), []
    for finding in findings:
        for suggestion in finding.data.get("suggestions") or []:
            key = tuple(map(str, suggestion.get("options", [])))
            if key in seen:
                continue
            seen.add(key)
            mapping = suggestion.get("mapping", [])
            letters = suggestion.get("strategy") == "letter-slots"
            out.append(
                {
                    "strategy": suggestion.get("strategy", ""),
                    "description": suggestion.get("description", ""),
                    "rows": [
                        {"before": _jsonish(m["from"]), "after": _jsonish(m["to"])}
                        for m in mapping[:FIX_ROWS]
                    ],
                    "more_rows": max(0, len(mapping) - FIX_ROWS),
                    "kept": (
                        "(the legend maps each letter back)"
                        if letters
                        else f"(keeps {round(100 * suggestion.get('words_kept', 1))} % of the words, "
                        "every word that tells the options apart)"
                    ),
                    "json": json.dumps({"enum": suggestion.get("options", [])}, ensure_ascii=False),
                    # letter slots: the decoder maps each answer back with this legend
                    "slots_json": json.dumps({m["to"]: m["from"] for m in mapping}, ensure_ascii=False)
                    if letters
                    else "",
                    "tokenizer": suggestion.get("tokenizer", ""),
                }
            )
    return out[:MAX_FIXES]


def _bucket_bar(size: int, total: int) -> int:
    return max(4, round(BUCKET_BAR * size / max(total, 1)))


def card_view(
    tokens: SiteTokens | None, findings: list[Finding], site: Site | None = None, letters: str = SLOT_LETTERS
) -> dict:
    """One card per field (and tokenizer): its findings, buckets, slot table and fixes."""
    severity = max((f.severity for f in findings), key=SEVERITIES.index)
    base = {
        "severity": severity,
        "codes": sorted({f.code for f in findings}),
        "code_severities": ", ".join(f"{c} {s}" for c, s in _code_severities(findings)),
        "findings": [
            finding_view(f)
            for f in sorted(findings, key=lambda f: (-SEVERITIES.index(f.severity), f.line, f.code))
        ],
        # info-only fields need no fix: their cards stay light
        "suggestions": _suggestions(findings) if severity != "info" else [],
        "open": severity == "error",
    }
    if tokens is None:
        return {
            **base,
            "field": findings[0].field,
            "pointer": findings[0].site_pointer,
            "line": site.span.line if site else findings[0].line,
            "kind": site.kind if site else "",
            "tokenizer": "",
            "options": len(site.options) if site else 0,
            "distinct": 0,
            "multi_token": 0,
            "prefix": "",
            "suffix": "",
            "big": False,
            "groups": [],
            "bars": [],
            "remap": None,
            "tokens": False,
        }
    site = tokens.site
    big = len(site.options) > BIG_FIELD
    piece = tokens.tokenizer.piece
    collisions = [(tid, idx) for tid, idx in tokens.buckets.items() if len(idx) > 1]
    groups, bars = [], []
    drawn_collisions = collisions if not big else collisions[:DRAWN_GROUPS]
    for number, (token_id, indexes) in enumerate(drawn_collisions):
        colour = number % BUCKET_COLOURS
        groups.append(
            {
                "title": f"scored token {piece(token_id)!r} (id {token_id})",
                "colliding": True,
                "winner": tokens.options[indexes[0]].text,
                **_group(tokens, indexes, colour, big),
            }
        )
        bars.append(
            {
                "token": piece(token_id),
                "size": len(indexes),
                "colour": colour,
                "width": _bucket_bar(len(indexes), len(site.options)),
                "winner": tokens.options[indexes[0]].text,
                "losers": len(indexes) - 1,
            }
        )
    undrawn = collisions[len(drawn_collisions) :]
    if undrawn:  # a big field's remaining buckets: one collapsed plain-text list
        groups.append(
            {
                "title": f"{len(undrawn)} more collision buckets",
                "colliding": False,
                "winner": "",
                "colour": None,
                "size": sum(len(idx) for _, idx in undrawn),
                "options": [],
                "rest": "; ".join(
                    f"{piece(tid)!r} → " + ", ".join(tokens.options[i].text for i in idx)
                    for tid, idx in undrawn
                ),
                "rest_count": sum(len(idx) for _, idx in undrawn),
            }
        )
    distinct = [idx[0] for idx in tokens.buckets.values() if len(idx) == 1]
    if distinct:
        groups.append(
            {
                "title": "options with a scored token of their own",
                "colliding": False,
                "winner": "",
                **_group(tokens, distinct, None, big),
            }
        )
    slots = tokens.slots(letters)  # the primary engine's letter alphabet
    options = site.options
    remap = {
        "viable": slots.viable,
        "rows": [
            {"letter": letter, "option": _jsonish(option)} for letter, option in zip(slots.letters, options)
        ]
        if slots.viable
        else [],
        "failures": [{"letter": letter, "why": why} for letter, why in list(slots.failures.items())[:8]]
        if not slots.viable
        else [],
        "reason": (
            f"{len(options)} options but only {len(letters)} letters {letters[0]}–{letters[-1]}"
            if len(options) > len(letters)
            else ""
        ),
    }
    return {
        **base,
        "field": site.field,
        "pointer": site.pointer,
        "line": site.span.line,
        "kind": site.kind,
        "tokenizer": tokens.tokenizer.id,
        "options": len(options),
        "distinct": len(tokens.buckets),
        "multi_token": len(tokens.multi_token),
        "prefix": tokens.prefix,
        "suffix": tokens.suffix if tokens.has_strings else tokens.literal_suffix,
        "big": big,
        "groups": groups,
        "bars": bars,
        "remap": remap,
        "tokens": True,
    }


def _code_severities(findings: list[Finding]) -> list[tuple[str, str]]:
    worst: dict[str, str] = {}
    for f in findings:
        if f.code not in worst or SEVERITIES.index(f.severity) > SEVERITIES.index(worst[f.code]):
            worst[f.code] = f.severity
    return sorted(worst.items(), key=lambda item: (-SEVERITIES.index(item[1]), item[0]))


def file_view(result: FileResult, tokenizers: dict, number: int = 0, letters: str = SLOT_LETTERS) -> dict:
    sites = {site.pointer: site for site in result.model.sites}
    by_card: dict[tuple[str, str | None], list[Finding]] = {}
    loose: list[Finding] = []
    for finding in result.findings:
        if finding.site_pointer in sites and (finding.tokenizer in tokenizers or finding.tokenizer is None):
            by_card.setdefault((finding.site_pointer, finding.tokenizer), []).append(finding)
        else:
            loose.append(finding)
    cards = []
    for (pointer, tok), found in by_card.items():
        site = sites[pointer]
        tokens = result.site_tokens(site, tokenizers[tok]) if tok is not None else None
        cards.append(card_view(tokens, found, site, letters))
    cards.sort(key=lambda c: (-SEVERITIES.index(c["severity"]), c["line"], c["tokenizer"]))
    worst_by_field: dict[str, int] = {}  # a field broken under two tokenizers counts once
    for c in cards:
        worst_by_field[c["pointer"]] = max(
            worst_by_field.get(c["pointer"], 0), SEVERITIES.index(c["severity"])
        )
    counts = Counter(SEVERITIES[rank] for rank in worst_by_field.values())
    loose_views = [finding_view(f) for f in sorted(loose, key=lambda f: -SEVERITIES.index(f.severity))]
    worst = max(
        [SEVERITIES.index(c["severity"]) for c in cards] + [SEVERITIES.index(f.severity) for f in loose] + [0]
    )
    return {
        "anchor": f"file-{number}",
        "path": result.model.path,
        "format": result.model.format,
        "sites": len(result.model.sites),
        "findings": len(result.findings),
        "severity": SEVERITIES[worst],
        "error_fields": counts["error"],
        "warning_fields": counts["warning"],
        "info_fields": counts["info"],
        "errors": sum(1 for f in result.findings if f.severity == "error"),
        "cards": [c for c in cards if c["severity"] != "info"],
        "info_cards": [c for c in cards if c["severity"] == "info"],
        "file_findings": [v for v in loose_views if v["severity"] != "info"],
        "file_info": [v for v in loose_views if v["severity"] == "info"],
        "remote_refs": list(result.model.remote_refs),
    }


def _matrix_view(run: LintRun) -> dict | None:
    """Field × tokenizer table for runs with several tokenizers (None otherwise)."""
    if len(run.tokenizers) < 2:
        return None
    matrix = matrix_dict(run)
    single_file = len({row["path"] for row in matrix["fields"]}) <= 1
    return {
        "tokenizers": matrix["tokenizers"],
        "collisions": [matrix["colliding_fields"][i] for i in matrix["tokenizers"]],
        "rows": [
            {
                "label": row["field"] if single_file else f"{row['path']} {row['field']}",
                "differs": row["differs"],
                "cells": [", ".join(row["codes"][i]) or CLEAN for i in matrix["tokenizers"]],
            }
            for row in matrix["fields"]
        ],
    }


def report_view(run: LintRun) -> dict:
    findings = run.findings
    tokenizers = {t.id: t for t in run.tokenizers}
    rules = load_rules()
    by_code = Counter(f.code for f in findings)
    by_severity = Counter(f.severity for f in findings)
    by_tokenizer = Counter(f.tokenizer or "(none)" for f in findings)
    letters = run.engines[0].letters if run.engines else SLOT_LETTERS
    files = [file_view(r, tokenizers, n, letters) for n, r in enumerate(run.files) if r.findings]
    # worst first: files with errors by how many fields they get wrong, then the rest
    files.sort(
        key=lambda f: (
            -SEVERITIES.index(f["severity"]),
            -f["error_fields"],
            -f["errors"],
            -f["warning_fields"],
            f["path"],
        )
    )
    judged = verdict(run)
    verified = any(f.verification for f in findings)
    return {
        "title": "pcdlint report",
        "version": __version__,
        "verdict": judged.sentence([t.id for t in run.tokenizers]),
        "severity": SEVERITIES[max([SEVERITIES.index(f.severity) for f in findings] + [0])]
        if findings
        else "clean",
        "verification": (
            "verified on a real model: see each card"
            if verified
            else "verification not run (pcdlint check --verify runs the flagged fields through a real model)"
        ),
        "tokenizers": [t.describe() for t in run.tokenizers],
        "engines": [e.describe() for e in run.engines],
        "summary": {
            "files": len(run.files),
            "sites": sum(len(r.model.sites) for r in run.files),
            "findings": len(findings),
            "suppressed": len(run.suppressed),
            "wrong_fields": judged.wrong_fields,
            "warning_fields": judged.warning_fields,
            "by_rule": [
                {"code": code, "name": rules[code].name if code in rules else "", "count": n}
                for code, n in sorted(by_code.items())
            ],
            "by_severity": [
                {"severity": s, "count": by_severity[s]}
                for s in ("error", "warning", "info")
                if by_severity[s]
            ],
            "by_tokenizer": [{"tokenizer": t, "count": n} for t, n in sorted(by_tokenizer.items())],
            "cost": _cost(run),
        },
        "errors": [str(e) for e in run.errors],
        "files": files,
        "problem_files": [f for f in files if f["severity"] != "info"],
        "matrix": _matrix_view(run),
        "clean_files": [r.model.path for r in run.files if not r.findings],
        "bucket_colours": list(range(BUCKET_COLOURS)),
        "rules": [
            {"code": code, "name": rules[code].name, **_rule_help(code)}
            for code in sorted(by_code)
            if code in rules
        ],
    }


def render_report(view: dict) -> str:
    return environment().get_template("page.html.j2").render(report=view)


@formatter("html", "a self-contained HTML report for reviewers", suggestions=True, details=True)
def render(run: LintRun, **_options: Any) -> str:
    return render_report(report_view(run))
