"""Baselines for adopting pcdlint in a big repository: record today's findings, report only new ones.

A baseline file is JSON: `{"version": 1, "findings": [{fingerprint, code, name, path, pointer,
tokenizer, message}, ...]}`. Findings match by `Finding.fingerprint` (rule, file as given on the
command line, site pointer, tokenizer), so edits that move lines keep matching; the other
fields are for the reviewer. A fingerprint recorded n times hides at most n findings.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from auditor.errors import InputFileError, UsageError
from auditor.linter.engine import LintRun
from auditor.paths import resolve_path, shorten
from auditor.schema.documents import read_source

BASELINE_VERSION = 1


@dataclass
class BaselineResult:
    hidden: int = 0  # current findings that were in the baseline
    stale: list[dict] = field(default_factory=list)  # entries for linted files that no longer occur


def baseline_text(run: LintRun) -> tuple[str, int]:
    """The baseline document recording this run's findings, and how many it holds."""
    entries = [
        {
            "fingerprint": f.fingerprint,
            "code": f.code,
            "name": f.name,
            "path": f.path,
            "pointer": f.site_pointer or f.pointer,
            "tokenizer": f.tokenizer,
            "message": f.message,
        }
        for f in run.findings
    ]
    text = json.dumps({"version": BASELINE_VERSION, "findings": entries}, indent=2, ensure_ascii=False) + "\n"
    return text, len(entries)


def load_baseline(source: str) -> list[dict]:
    """The entries of a baseline file, read like any input (a regular file within the input
    size limit: /dev/zero or a FIFO is refused, never read forever)."""
    path = resolve_path(source, "--baseline")
    if not path.exists():
        raise UsageError(f"--baseline {shorten(source)}: no such file")
    try:
        data = json.loads(read_source(path, f"--baseline {shorten(source)}").decode("utf-8"))
    except InputFileError as exc:
        raise UsageError(f"{exc.path}: {exc.message.removesuffix('; skipped')}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"--baseline {shorten(source)}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--baseline {shorten(source)}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, nesting past the stack
        raise UsageError(
            f"--baseline {shorten(source)}: not a pcdlint baseline ({shorten(str(exc), 80)})"
        ) from None
    entries = data.get("findings") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("version") != BASELINE_VERSION
        or not isinstance(entries, list)
        or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries)
    ):
        raise UsageError(
            f"--baseline {source}: not a pcdlint baseline (version {BASELINE_VERSION}, "
            "written by --write-baseline)"
        )
    return entries


def apply_baseline(run: LintRun, entries: list[dict]) -> BaselineResult:
    """Drop findings recorded in the baseline from `run`; count entries that no longer occur."""
    remaining = Counter(e["fingerprint"] for e in entries)
    result = BaselineResult()
    for file_result in run.files:
        kept = []
        for finding in file_result.findings:
            if remaining[finding.fingerprint] > 0:
                remaining[finding.fingerprint] -= 1
                result.hidden += 1
            else:
                kept.append(finding)
        file_result.findings = kept
    # Only files linted in this run can tell that an entry is gone (pre-commit passes a subset).
    linted = {r.model.path for r in run.files}
    for entry in entries:
        if entry.get("path") in linted and remaining[entry["fingerprint"]] > 0:
            remaining[entry["fingerprint"]] -= 1
            result.stale.append(entry)
    return result
