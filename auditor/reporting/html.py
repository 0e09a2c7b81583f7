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

from auditor import __version__
from auditor.lint.engine import Finding, LintRun
from auditor.lint.registry import load_rules
from auditor.pcd.scoring import SiteTokens
from auditor.reporting import formatter
from auditor.reporting.matrix import CLEAN, matrix_dict

BIG_FIELD = 40  # options; above this a card's groups start collapsed
EXAMPLES = 8  # options per group drawn with token pieces in a big field; the rest as plain text
MAX_DATA_CHARS = 1_500  # a finding's data shown in full up to this; the JSON format has it all
BUCKET_COLOURS = 12
DRAWN_GROUPS = 8  # in a big field, later collision buckets are listed as plain text only


def _jsonish(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _data_text(data: dict) -> str:
    shown = dict(data)
    if not shown:
        return ""
    text = json.dumps(shown, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_DATA_CHARS:
        text = (text[:MAX_DATA_CHARS] + f"\n… {len(text) - MAX_DATA_CHARS} more characters "
                "(see `pcdlint check --format json`)")
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


def _cost(run: LintRun):
    return _key_values(run.cost) if run.cost else []


def _rule_help(code: str) -> dict:
    rule = load_rules().get(code)
    if rule is None:
        return {"summary": "", "what": "", "why": ""}
    sections = rule.sections
    return {"summary": rule.summary, "what": sections.get("What it does", ""),
            "why": sections.get("Why is this bad?", "")}


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


def _group(tokens: SiteTokens, indexes: list[int], colour: int | None, big: bool,
           draw: bool = True) -> dict:
    drawn = (indexes[:EXAMPLES] if big else indexes) if draw else []
    return {
        "colour": colour,
        "size": len(indexes),
        "options": [_option_view(tokens, i, colour) for i in drawn],
        "rest": ", ".join(tokens.options[i].text for i in indexes[len(drawn):]),
        "rest_count": len(indexes) - len(drawn),
    }


def card_view(tokens: SiteTokens, findings: list[Finding]) -> dict:
    site = tokens.site
    big = len(site.options) > BIG_FIELD
    piece = tokens.tokenizer.piece
    collisions = [(tid, idx) for tid, idx in tokens.buckets.items() if len(idx) > 1]
    groups = []
    drawn_collisions = collisions if not big else collisions[:DRAWN_GROUPS]
    for number, (token_id, indexes) in enumerate(drawn_collisions):
        colour = number % BUCKET_COLOURS
        groups.append({
            "title": f"scored token {piece(token_id)!r} (id {token_id})",
            "colliding": True,
            "winner": tokens.options[indexes[0]].text,
            **_group(tokens, indexes, colour, big),
        })
    undrawn = collisions[len(drawn_collisions):]
    if undrawn:  # a big field's remaining buckets: one collapsed plain-text list
        groups.append({
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
        })
    distinct = [idx[0] for idx in tokens.buckets.values() if len(idx) == 1]
    if distinct:
        groups.append({
            "title": "options with a scored token of their own",
            "colliding": False,
            "winner": "",
            **_group(tokens, distinct, None, big),
        })
    slots = tokens.slot_table
    options = site.options
    remap = {
        "viable": slots.viable,
        "rows": [{"letter": letter, "option": _jsonish(option)}
                 for letter, option in zip(slots.letters, options)] if slots.viable else [],
        "failures": [{"letter": letter, "why": why} for letter, why in
                     list(slots.failures.items())[:8]] if not slots.viable else [],
        "reason": (f"{len(options)} options but only 26 letters A–Z" if len(options) > 26 else ""),
    }
    multi = tokens.multi_token
    return {
        "field": site.field,
        "pointer": site.pointer,
        "line": site.span.line,
        "kind": site.kind,
        "tokenizer": tokens.tokenizer.id,
        "options": len(options),
        "distinct": len(tokens.buckets),
        "multi_token": len(multi),
        "prefix": tokens.prefix,
        "suffix": tokens.suffix if tokens.has_strings else tokens.literal_suffix,
        "big": big,
        "groups": groups,
        "remap": remap,
        "severity": max((f.severity for f in findings), key=("info", "warning", "error").index),
        "codes": sorted({f.code for f in findings}),
        "findings": [finding_view(f) for f in findings],
    }


def file_view(result, tokenizers: dict) -> dict:
    sites = {site.pointer: site for site in result.model.sites}
    by_card: dict[tuple[str, str], list[Finding]] = {}
    loose: list[Finding] = []
    for finding in result.findings:
        if finding.site_pointer in sites and finding.tokenizer in tokenizers:
            by_card.setdefault((finding.site_pointer, finding.tokenizer), []).append(finding)
        else:
            loose.append(finding)
    cards = [card_view(result.site_tokens(sites[pointer], tokenizers[tok]), found)
             for (pointer, tok), found in by_card.items()]
    return {
        "path": result.model.path,
        "format": result.model.format,
        "sites": len(result.model.sites),
        "findings": len(result.findings),
        "cards": cards,
        "file_findings": [finding_view(f) for f in loose],
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
        "rows": [{"label": row["field"] if single_file else f"{row['path']} {row['field']}",
                  "differs": row["differs"],
                  "cells": [", ".join(row["codes"][i]) or CLEAN for i in matrix["tokenizers"]]}
                 for row in matrix["fields"]],
    }


def report_view(run: LintRun) -> dict:
    findings = run.findings
    tokenizers = {t.id: t for t in run.tokenizers}
    rules = load_rules()
    by_code = Counter(f.code for f in findings)
    by_severity = Counter(f.severity for f in findings)
    by_tokenizer = Counter(f.tokenizer or "(none)" for f in findings)
    return {
        "title": "pcdlint report",
        "version": __version__,
        "tokenizers": [t.describe() for t in run.tokenizers],
        "summary": {
            "files": len(run.files),
            "sites": sum(len(r.model.sites) for r in run.files),
            "findings": len(findings),
            "suppressed": len(run.suppressed),
            "by_rule": [{"code": code, "name": rules[code].name if code in rules else "",
                         "count": n} for code, n in sorted(by_code.items())],
            "by_severity": [{"severity": s, "count": by_severity[s]}
                            for s in ("error", "warning", "info") if by_severity[s]],
            "by_tokenizer": [{"tokenizer": t, "count": n} for t, n in sorted(by_tokenizer.items())],
            "cost": _cost(run),
        },
        "errors": [str(e) for e in run.errors],
        "matrix": _matrix_view(run),
        "files": [file_view(r, tokenizers) for r in run.files if r.findings],
        "clean_files": [r.model.path for r in run.files if not r.findings],
        "bucket_colours": list(range(BUCKET_COLOURS)),
        "rules": [{"code": code, "name": rules[code].name, **_rule_help(code)}
                  for code in sorted(by_code) if code in rules],
    }


def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("auditor.templates", "."), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_report(view: dict) -> str:
    return environment().get_template("page.html.j2").render(report=view)


@formatter("html", "a self-contained HTML report for reviewers")
def render(run: LintRun, **_options) -> str:
    return render_report(report_view(run))
