"""The documentation site's generated pages: one per rule, one per engine, and their indexes.

Read by the MkDocs hook (docs/_hooks.py) at build time. Each page is derived from the rule's
module docstring and `@rule` metadata or from the engine's profile, never written by hand, so
the site, `pcdlint explain`, SARIF's rule metadata and the HTML help cannot drift apart.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from auditor.lint.registry import Rule, load_rules
from auditor.pcd.engines import DEFAULT_ENGINE, ENGINES

RULES_DIR = "rules"
ENGINES_DIR = "engines"


def rule_page_path(code: str) -> str:
    """The rule's page inside the site (`rules/PCD001.md`, served as `rules/PCD001/`)."""
    return f"{RULES_DIR}/{code}.md"


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
    sections = rule.sections
    body = [f"# {rule.code} {rule.name}", "", rule.summary, "", *facts, ""]
    for title in ("What it does", "Why is this bad?", "Example", "Use instead"):
        if title in sections:
            body += [f"## {title}", "", sections[title], ""]
    body += ["## Options", "", _options_table(rule), ""]
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
        default = "yes" if rule.default else "opt-in"
        link = f"[{code}]({code}.md)"
        rows.append(f"| {link} | `{rule.name}` | {rule.severity} | {default} | {rule.summary} |")
    return "\n".join(rows) + "\n"


def rule_pages() -> Iterator[tuple[str, str]]:
    rules = {code: r for code, r in load_rules().items() if not r.internal}
    yield f"{RULES_DIR}/index.md", _rules_index(rules)
    for code, rule in rules.items():
        yield rule_page_path(code), rule_page(rule)


def engine_pages() -> Iterator[tuple[str, str]]:
    rows = [
        "# Engines",
        "",
        "Name one with `--engine NAME` (repeatable).",
        "",
        "| engine | summary |",
        "| --- | --- |",
    ]
    for name, profile in ENGINES.items():
        default = " (default)" if name == DEFAULT_ENGINE else ""
        rows.append(f"| [{name}]({name}.md){default} | {profile.summary} |")
        facts = "\n".join(f"- **{key}**: {value}" for key, value in profile.describe().items())
        module = sys.modules.get(type(profile).__module__)
        doc = ((module.__doc__ if module else "") or "").strip()
        yield f"{ENGINES_DIR}/{name}.md", f"# {name}\n\n{profile.summary}\n\n{facts}\n\n{doc}\n"
    yield f"{ENGINES_DIR}/index.md", "\n".join(rows) + "\n"
