"""The name pcdlint is installed under, and the install hints built from it, in one place.

The command is `pcdlint`; the distribution on PyPI is `pcdlint-audit`, because the name
`pcdlint` belongs to an unrelated project there (a hint naming it would install that tool).
"""

from __future__ import annotations

DISTRIBUTION = "pcdlint-audit"


def install_hint(extra: str) -> str:
    """The pip command that brings an optional extra: `pip install 'pcdlint-audit[tokenizers]'`."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"
