"""The documentation site's generated pages: one per rule, one per engine, and their indexes.

Read by the MkDocs hook (docs/_hooks.py) at build time. Each page is derived from the rule's
module docstring and `@rule` metadata or from the engine's profile, never written by hand, so
the site, `pcdlint explain`, SARIF's rule metadata and the HTML help cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator

from auditor.linter.pages import RULES_DIR, rule_page_path
from auditor.linter.registry import Rule, load_rules
from auditor.pcd.engines import DEFAULT_ENGINE, ENGINES, HARNESS_ENGINES
from auditor.pcd.engines.table import ENGINE_ROWS, EngineRow, Limit

ENGINES_DIR = "engines"


def _options_table(rule: Rule) -> str:
    if not rule.options:
        return "This rule takes no options."
    rows = ["| option | default |", "| --- | --- |"]
    rows += [f"| `{name}` | `{value!r}` |" for name, value in rule.options.items()]
    config = f"[tool.pcdlint.rules.{rule.code}]"
    return "\n".join(rows) + f"\n\nSet them in `pyproject.toml` under `{config}`."


def rule_page(rule: Rule) -> str:
    in_default = "on in the default rule set" if rule.default else f"opt-in: {rule.opt_in_reason}"
    facts = [
        f"- **Code** `{rule.code}`, **name** `{rule.name}` (either selects it)",
        f"- **Default severity** {rule.severity}; {in_default}",
        f"- **Runs** once per {'engine named with `--engine`' if rule.per_engine else rule.scope}",
    ]
    if rule.internal:  # the engine's own finding: no check runs it
        facts[1:] = [
            f"- **Severity** {rule.severity}; reported by the engine itself, at the field or file "
            "where a rule's check raised"
        ]
    sections = rule.sections
    body = [f"# {rule.code} {rule.name}", "", rule.summary, "", *facts, ""]
    for title in ("What it does", "Why is this bad?", "Example", "Use instead"):
        if title in sections:
            body += [f"## {title}", "", sections[title], ""]
    # the docstring's further sections (how to fix it, how to silence it, its source, its
    # measured precision), in its own order; its Options prose goes above the options table
    for title, text in sections.items():
        if title not in ("What it does", "Why is this bad?", "Example", "Use instead", "Options"):
            body += [f"## {title}", "", text, ""]
    prose = [sections["Options"], ""] if sections.get("Options") and rule.options else []
    body += ["## Options", "", *prose, _options_table(rule), ""]
    body += ["Explain it in a terminal: `pcdlint explain " + rule.code + "`.", ""]
    return "\n".join(body)


def _rules_index(rules: dict[str, Rule]) -> str:
    rows = [
        "# Rules",
        "",
        "| code | name | severity | default | summary |",
        "| --- | --- | --- | --- | --- |",
    ]
    for code, rule in rules.items():
        default = "internal" if rule.internal else "yes" if rule.default else "opt-in"
        link = f"[{code}]({code}.md)"
        rows.append(f"| {link} | `{rule.name}` | {rule.severity} | {default} | {rule.summary} |")
    return "\n".join(rows) + "\n"


def rule_pages() -> Iterator[tuple[str, str]]:
    rules = load_rules()  # the engine's own codes (PCD999) too: SARIF's helpUri names their pages
    yield f"{RULES_DIR}/index.md", _rules_index(rules)
    for code, rule in rules.items():
        yield rule_page_path(code), rule_page(rule)


def _engine_page(row: EngineRow) -> str:
    facts = [
        f"- **Kind**: {row.kind} (scores {row.scores})",
        f"- **Source read**: {row.source}",
        f"- **Read from**: {row.version}, on {row.read_on}",
        "- **Live test**: "
        + (
            f"`{row.live_test}` checks it against a running server"
            if row.live_test
            else "none (read from the source only)"
        ),
    ]
    skip = {"name", "kind", "scores", "summary", "source", "version", "read_on", "live_test"}
    for column in dataclasses.fields(row):
        key, value = column.name, getattr(row, column.name)
        if key in skip or key == "default" or value in ("", (), None, False, {}):
            continue
        if row.kind != "decision" and key not in ("scorer",):  # the decision columns' defaults
            continue
        if isinstance(value, Limit):
            value = value.phrase()
        elif isinstance(value, tuple):
            value = ", ".join(f"`{v}`" for v in value)
        facts.append(f"- **{key.replace('_', ' ')}**: {value}")
    if row.kind == "harness":  # its parameters (engine-table columns only its scorer reads)
        facts += [f"- **{key.replace('_', ' ')}**: {value}" for key, value in row.extra.items()]
    body = [f"# {row.name}", "", row.summary, "", *facts, ""]
    profile = ENGINES.get(row.name) or HARNESS_ENGINES.get(row.name)
    module = sys.modules.get(type(profile).__module__) if profile is not None else None
    if module is not None and module.__doc__:
        body += ["## How pcdlint models it", "", module.__doc__.strip(), ""]
    return "\n".join(body)


def engine_pages() -> Iterator[tuple[str, str]]:
    """One page per row of the engine table (auditor/pcd/engines/engines.toml), and an index."""
    rows = [
        "# Engines",
        "",
        "Name one with `--engine NAME` (repeatable; config `engine`). Each is",
        "a row of `auditor/pcd/engines/engines.toml`, read from the upstream source it cites.",
        "Rows of kind `harness` are evaluation harnesses' scorers: each applies to the label sets",
        "of its own configs without being named.",
        "",
        "`pcdlint engines` lists the same rows in a terminal.",
        "",
        "| engine | kind | read from | live test | summary |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, row in ENGINE_ROWS.items():
        default = " (default for schemas)" if name == DEFAULT_ENGINE else ""
        default = " (default for decision requests)" if row.default and row.is_decision else default
        live = "yes" if row.live_test else "no"
        rows.append(
            f"| [{name}]({name}.md){default} | {row.kind} | {row.version}, {row.read_on} | {live} | {row.summary} |"
        )
        yield f"{ENGINES_DIR}/{name}.md", _engine_page(row)
    yield f"{ENGINES_DIR}/index.md", "\n".join(rows) + "\n"
