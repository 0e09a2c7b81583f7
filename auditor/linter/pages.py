"""Where each rule's documentation page lives: its path inside the site and its address.

One source for SARIF's ``helpUri``, the editor's links, the scope probe's design links and the
MkDocs hook that generates the pages (auditor.reporting.docs_pages), so they cannot drift apart.
"""

from __future__ import annotations

import os

# The documentation site (mkdocs.yml's site_url); a mirror or a private build sets PCDLINT_DOCS_URL.
DOCS_URL = "https://pcdlint.github.io/pcdlint/"
RULES_DIR = "rules"


def rule_page_path(code: str) -> str:
    """The rule's page inside the site (`rules/PCD001.md`, served as `rules/PCD001/`)."""
    return f"{RULES_DIR}/{code}.md"


def rule_help_uri(code: str) -> str:
    """The rule's page on the documentation site (docs/_hooks.py generates one per rule)."""
    base = os.environ.get("PCDLINT_DOCS_URL") or DOCS_URL
    return f"{base.rstrip('/')}/{rule_page_path(code).removesuffix('.md')}/"
