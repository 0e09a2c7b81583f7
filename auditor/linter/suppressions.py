"""In-file suppressions (`x-pcdlint-ignore`): which findings they silence and which are unused.

`x-pcdlint-ignore` (a code, a rule name, or a list of them) on a node silences those rules for
the node and its subtree. The crawler records each holder node in `FileModel.suppressions` and,
for each site, the holders above it (`Site.suppression_pointers`, which follow `$ref`s). This
module matches findings against them, remembers which entries were used, and hands the rules of
scope "suppressions" (PCD900) a `SuppressionUsage` to judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.linter import selection
from auditor.linter.context import Finding
from auditor.linter.registry import Rule
from auditor.schema.documents import resolve_pointer
from auditor.schema.sites import SUPPRESS_KEY, FileModel


@dataclass(frozen=True)
class SuppressionEntry:
    """One entry of one `x-pcdlint-ignore` value."""

    holder: str  # pointer of the node that carries x-pcdlint-ignore
    pointer: str  # pointer of the entry itself
    entry: str  # as written
    rule: Rule | None  # None: names no known rule
    used: bool  # silenced at least one finding in this run


@dataclass
class SuppressionUsage:
    """The subject of a "suppressions"-scope rule: every entry in one file, with its usage."""

    model: FileModel
    entries: list[SuppressionEntry] = field(default_factory=list)


def entry_names(entry: str, rule: Rule) -> bool:
    return selection.names(entry, rule)


def _under(pointer: str, holder: str) -> bool:
    return pointer == holder or pointer.startswith(holder + "/")


def holders_for(model: FileModel, finding: Finding) -> tuple[str, ...]:
    """Holder pointers whose suppressions cover this finding: the site's (through $refs), or by
    pointer prefix for findings outside any site (file-scope rules)."""
    site = next((s for s in model.sites if s.pointer == finding.site_pointer), None)
    if site is not None:
        return site.suppression_pointers
    return tuple(h for h in model.suppressions if _under(finding.pointer, h))


def suppressing_entries(model: FileModel, finding: Finding, rule: Rule) -> list[tuple[str, str]]:
    """(holder, entry) pairs that silence `finding`; empty when nothing does."""
    if not model.suppressions:  # (most files: no entry anywhere, no site to look up)
        return []
    return [
        (holder, entry)
        for holder in holders_for(model, finding)
        for entry in model.suppressions.get(holder, ())
        if entry_names(entry, rule)
    ]


def _raw_entries(model: FileModel, holder: str) -> list[tuple[str, object]]:
    """(pointer, value) of each entry as written at `holder`, in document order."""
    node = resolve_pointer(model.document.data, holder)
    value = node.get(SUPPRESS_KEY) if isinstance(node, dict) else None
    base = f"{holder}/{SUPPRESS_KEY}"
    if isinstance(value, list):
        return [(f"{base}/{i}", v) for i, v in enumerate(value)]
    return [(base, value)]


def usage(model: FileModel, used: set[tuple[str, str]]) -> SuppressionUsage:
    result = SuppressionUsage(model)
    for holder, entries in model.suppressions.items():
        try:
            raw = _raw_entries(model, holder)
        except (KeyError, IndexError, ValueError, TypeError):
            raw = [(f"{holder}/{SUPPRESS_KEY}", e) for e in sorted(entries)]
        for pointer, value in raw:
            entry = str(value)
            result.entries.append(
                SuppressionEntry(holder, pointer, entry, selection.find_rule(entry), (holder, entry) in used)
            )
    return result
