"""Helpers for rules that do not depend on the tokenizer.

Such rules run once per file (scope="file") instead of once per (site, tokenizer), so they do
not repeat a finding for every tokenizer; `at_site` lets them still point at a site's options.
"""

from __future__ import annotations

from auditor.linter.context import RuleContext
from auditor.schema.sites import Site


def at_site(ctx: RuleContext, site: Site) -> RuleContext:
    """A copy of a file-scope context whose findings point at `site` (and its options)."""
    local = object.__new__(type(ctx))  # (copy.copy's reduce protocol costs more than the rule)
    local.__dict__.update(ctx.__dict__)
    local.site = site
    return local
