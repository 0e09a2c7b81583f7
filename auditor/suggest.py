"""Verified fix suggestions for first-token scoring problems, and `pcdlint suggest`.

A suggestion renames a field's options (or maps them to letter slots A, B, …). It is shown
only when the renamed field, re-linted with the same tokenizer and every site rule, has no
finding of severity warning or error. Input files are never modified.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import replace
from types import SimpleNamespace

import click

FIXED_CODES = ("PCD001", "PCD002", "PCD005")
WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W_\d]+", re.UNICODE)


def _words(option: str) -> list[str]:
    return WORD.findall(option)


def _fold(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


def _candidates(options: list[str], slot_letters: tuple[str, ...]) -> list[tuple[str, str, list[str]]]:
    """(strategy, description, renamed options), most faithful first."""
    out = [("lowercase", "lower-case the options", [o.lower() for o in options])]
    words = [_words(o) for o in options]
    if all(words):
        out.append(("lowercase-words", "lower-case words separated by spaces",
                    [" ".join(w).lower() for w in words]))
        lead = 0
        while all(len(w) > lead + 1 for w in words) and len({w[lead].lower() for w in words}) == 1:
            lead += 1
        trail = 0
        while (all(len(w) > lead + trail + 1 for w in words)
               and len({w[-1 - trail].lower() for w in words}) == 1):
            trail += 1
        core = [w[lead:len(w) - trail] for w in words]
        named = [[p for p in c if not p.isdigit()] or c for c in core]  # drop numeric codes
        out.append(("distinguishing-part", "keep only the part that tells options apart",
                    ["_".join(c).lower() for c in core]))
        out.append(("distinguishing-words", "drop shared words and numeric codes",
                    ["_".join(n).lower() for n in named]))
        out.append(("distinguishing-words-spaced", "drop shared words and numeric codes; "
                    "words separated by spaces", [" ".join(n).lower() for n in named]))
        out.append(("first-distinct-word", "one word per option, the distinguishing one first",
                    [n[0].lower() for n in named]))
        out.append(("distinct-word-first", "move the distinguishing part to the front",
                    ["_".join(c + w[:lead] + w[len(w) - trail:]).lower() for c, w in zip(core, words)]))
        counts = Counter(_fold(p) for w in words for p in set(w))
        own_first = [sorted(w, key=lambda p: counts[_fold(p)] > 1) for w in words]  # stable
        out.append(("own-word-first", "put each option's own word first (all words kept)",
                    ["_".join(w).lower() for w in own_first]))
        out.append(("own-word-first-spaced", "put each option's own word first, words separated "
                    "by spaces", [" ".join(w).lower() for w in own_first]))
    if slot_letters:
        out.append(("letter-slots", "score single letters and map them back with a legend",
                    list(slot_letters[:len(options)])))
    return out


def _word_set(option: str) -> set[str]:
    return {_fold(w) for w in _words(option)}


def drops_distinguishing_word(options: list[str], renamed: list[str]) -> str | None:
    """The first word a renaming drops that tells its option apart from a sibling, or None.

    A word may go only when every sibling has it too (it says nothing), or when it is a
    numeric code (the kept words must then tell the options apart, which is checked apart).
    `VERY_NEGATIVE → very` drops NEGATIVE, which NEUTRAL lacks: refused.
    """
    sets = [_word_set(o) for o in options]
    for index, (words, new) in enumerate(zip(sets, renamed)):
        for word in sorted(words - _word_set(new)):
            if word.isdigit():
                continue
            if any(word not in other for j, other in enumerate(sets) if j != index):
                return f"{options[index]} → {new} drops {word!r}"
    return None


def words_kept(options: list[str], renamed: list[str]) -> float:
    """Mean share of each option's words the renaming keeps (ranking: most first)."""
    shares = []
    for option, new in zip(options, renamed):
        words = {w for w in _word_set(option) if not w.isdigit()} or _word_set(option)  # codes aside
        shares.append(len(words & _word_set(new)) / len(words) if words else 1.0)
    return sum(shares) / len(shares) if shares else 0.0


def _relint(tokens, options: list[str]) -> bool:
    """True when the field with these options has no warning or error under the tokenizer."""
    from auditor.engine import RuleContext
    from auditor.registry import load_rules, severity_rank
    from auditor.scoring import SiteTokens

    site = replace(tokens.site, options=options)
    candidate = SiteTokens(site, tokens.tokenizer)
    file = SimpleNamespace(path=site.path, document=None)
    for rule in load_rules().values():
        if rule.scope != "site":
            continue
        # suggestions=False: re-linting a candidate must not look for suggestions of its own
        ctx = RuleContext(rule, dict(rule.options), file, site, tokens.tokenizer, rule.severity,
                          suggestions=False)
        if any(severity_rank(f.severity) >= 1 for f in rule.check(candidate, ctx)):
            return False
    return True


def verified_suggestions(tokens) -> list[dict]:
    """Suggestions for one field under one tokenizer, each re-linted clean before it is kept,
    ranked by how many of each option's words they keep (letter slots, a legend, last)."""
    options = tokens.site.options
    if len(options) < 2 or not all(isinstance(o, str) for o in options):
        return []
    slots = tokens.slot_table
    found, seen = [], set()
    for strategy, description, renamed in _candidates(options, slots.letters if slots.viable else ()):
        key = tuple(renamed)
        if key == tuple(options) or key in seen or not all(renamed):
            continue
        seen.add(key)
        letters = strategy == "letter-slots"  # meaning kept by the legend, not the words
        if len({_fold(r) for r in renamed}) != len(renamed):
            continue
        if not letters and drops_distinguishing_word(options, renamed):
            continue
        if not _relint(tokens, renamed):
            continue
        found.append({
            "strategy": strategy,
            "description": description,
            "options": renamed,
            "mapping": [{"from": o, "to": r} for o, r in zip(options, renamed)],
            "tokenizer": tokens.tokenizer.id,
            "verified": True,
            "words_kept": 0.0 if letters else round(words_kept(options, renamed), 3),
        })
    found.sort(key=lambda s: -s["words_kept"])  # stable: ties keep the candidates' order
    return found


# --------------------------------------------------------------------------- writing a fixed copy

_PLAIN_YAML = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*( [A-Za-z0-9_]+)*$")


def _scalar(value: str, was: str, yaml_file: bool) -> str:
    """The new option written as the old one was: JSON string, or YAML plain when safe."""
    if yaml_file and not was.startswith(("'", '"')) and _PLAIN_YAML.match(value):
        import yaml

        if yaml.safe_load(value) == value:  # `on`, `no`, `null` … would change type
            return value
    return json.dumps(value, ensure_ascii=False)


def rewrite(text: str, yaml_file: bool, renamings: list[tuple[list, list[str]]]) -> str:
    """`text` with each renamed option written over its span; `renamings` holds
    (option spans, new options) per field. A span shared by two sites ($ref) is written once."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits: dict[tuple[int, int], str] = {}
    for spans, options in renamings:
        for span, value in zip(spans, options):
            begin = starts[span.line - 1] + span.column - 1
            end = starts[span.end_line - 1] + span.end_column - 1
            edits[(begin, end)] = _scalar(value, text[begin:end], yaml_file)
    out, cursor = [], 0
    for (begin, end), value in sorted(edits.items()):
        out.append(text[cursor:begin])
        out.append(value)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def choose(entries: list[dict]) -> dict[str, dict]:
    """Per field pointer: the best-ranked suggestion verified under every tokenizer of it."""
    by_field: dict[str, list[dict]] = {}
    for entry in entries:
        by_field.setdefault(entry["pointer"], []).append(entry)
    chosen = {}
    for pointer, group in by_field.items():
        common = None
        for entry in group:
            keys = [tuple(s["options"]) for s in entry["suggestions"]]
            common = keys if common is None else [k for k in common if k in keys]
        if common:
            chosen[pointer] = next(s for s in group[0]["suggestions"] if tuple(s["options"]) == common[0])
    return chosen


def write_fixed(run, entries: list[dict], target: str, in_place: bool) -> tuple[str, str | None, int]:
    """Write the fixed copy (and, for letter slots, the legend beside it); returns
    (fixed path, legend path or None, fields renamed)."""
    from pathlib import Path

    from auditor.errors import UsageError
    from auditor.outputs import write_report

    [result] = run.files
    model = result.model
    chosen = choose(entries)
    sites = {site.pointer: site for site in model.sites}
    yaml_file = Path(model.path).suffix.lower() in (".yaml", ".yml")
    renamings = [(sites[p].option_spans, s["options"]) for p, s in chosen.items() if p in sites]
    text = rewrite(model.document.text, yaml_file, renamings)
    inputs = [] if in_place else [model.path]
    write_report(text, target, "--write", inputs)
    legend = {p: {"field": sites[p].field, "slots": {m["to"]: m["from"] for m in s["mapping"]}}
              for p, s in chosen.items() if s["strategy"] == "letter-slots" and p in sites}
    legend_path = None
    if legend:
        legend_path = str(Path(target).with_suffix(".slots.json"))
        if Path(legend_path).resolve() == Path(model.path).resolve():
            raise UsageError(f"--write {target}: the slot legend would overwrite the input")
        write_report(json.dumps(legend, indent=2, ensure_ascii=False) + "\n", legend_path,
                     "--write", [model.path])
    return target, legend_path, len(renamings)


# --------------------------------------------------------------------------- CLI


def collect(run) -> list[dict]:
    """One entry per (file, field, tokenizer) with a PCD001/PCD002/PCD005 warning or error."""
    groups: dict[tuple, dict] = {}
    for finding in run.findings:
        if finding.code not in FIXED_CODES or finding.severity == "info":
            continue
        key = (finding.path, finding.site_pointer, finding.tokenizer)
        entry = groups.setdefault(key, {
            "path": finding.path, "pointer": finding.site_pointer, "field": finding.field,
            "line": finding.line, "tokenizer": finding.tokenizer, "codes": [],
            "suggestions": finding.data.get("suggestions", []),
        })
        if finding.code not in entry["codes"]:
            entry["codes"].append(finding.code)
    return list(groups.values())


def format_text(entries: list[dict]) -> str:
    lines = []
    for e in entries:
        lines.append(f"{e['path']}:{e['line']}: {e['field']} [{e['tokenizer']}] {', '.join(e['codes'])}")
        if not e["suggestions"]:
            lines.append("  no renaming tried re-lints clean and keeps every distinguishing word; "
                         "see `pcdlint explain` for other fixes")
        for rank, s in enumerate(e["suggestions"], 1):
            pairs = ", ".join(f"{m['from']} -> {m['to']}" for m in s["mapping"][:8])
            more = f", … ({len(s['mapping'])} options)" if len(s["mapping"]) > 8 else ""
            kept = ("legend maps letters back" if s["strategy"] == "letter-slots"
                    else f"keeps {round(100 * s.get('words_kept', 1))} % of the words")
            lines.append(f"  {rank}. {s['strategy']} (re-lints clean; {kept}): {pairs}{more}")
    fixed = sum(1 for e in entries if e["suggestions"])
    if entries:
        one = len(entries) == 1
        lines.append(f"{len(entries)} field{'' if one else 's'} need{'s' if one else ''} a fix; "
                     f"{fixed} {'has' if fixed == 1 else 'have'} a verified suggestion"
                     + ("" if fixed == len(entries) else f"; {len(entries) - fixed} have none"))
    else:
        lines.append("No field needs a fix.")
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-t", "--tokenizer", "tokenizers", multiple=True, metavar="SPEC",
              help="Tokenizer to verify with (repeatable). Default: qwen2.5.")
@click.option("-f", "--format", "output_format", type=click.Choice(["text", "json"]),
              default="text", show_default=True)
@click.option("--write", "write_to", metavar="FILE",
              help="Write a copy of the (single) input with the first suggestion of every field "
                   "applied, and FILE's .slots.json legend when letter slots are used. Never "
                   "the input itself.")
@click.option("--in-place", is_flag=True, help="Apply the fixes to the input file itself.")
def suggest(paths, tokenizers, output_format, write_to, in_place):
    """Propose renamings for fields with PCD001/PCD002/PCD005 warnings or errors, verified by
    re-linting.

    Only suggestions whose renamed field re-lints without warnings or errors under the same
    tokenizer, and that keep every word telling an option apart from its siblings, are printed,
    those keeping the most words first. Input files are modified only with --in-place.

    Exit status: 0 every flagged field has a verified fix, 1 some has none, 2 bad input.
    """
    from pathlib import Path

    from auditor.engine import LintOptions, lint
    from auditor.errors import UsageError
    from auditor.tokenizer import DEFAULT_TOKENIZER, load_tokenizer

    try:
        if write_to and in_place:
            raise UsageError("--write and --in-place exclude each other")
        if (write_to or in_place) and (len(paths) != 1 or not Path(paths[0]).is_file()):
            raise UsageError(f"{'--write' if write_to else '--in-place'} needs exactly one input file")
        loaded = [load_tokenizer(s) for s in (list(dict.fromkeys(tokenizers)) or [DEFAULT_TOKENIZER])]
        run = lint(list(paths), loaded, LintOptions(select=list(FIXED_CODES)))
        entries = collect(run)
        written = None
        if (write_to or in_place) and run.files:
            written = write_fixed(run, entries, write_to or paths[0], in_place)
    except UsageError as error:
        click.echo(f"pcdlint: error: {error}", err=True)
        sys.exit(2)
    if run.errors and not run.files:
        pass  # nothing was read: only the error lines below
    elif output_format == "json":
        click.echo(json.dumps(entries, indent=2, ensure_ascii=False))
    else:
        click.echo(format_text(entries), nl=False)
    if written is not None:
        target, legend, count = written
        click.echo(f"pcdlint: wrote {target} with {count} field{'s' if count != 1 else ''} renamed"
                   + (f" and the letter-slot legend {legend}" if legend else "")
                   + "; update the code that reads these values", err=True)
    for error in run.errors:
        click.echo(f"{error}", err=True)
    if run.errors:
        sys.exit(2)
    sys.exit(1 if any(not e["suggestions"] for e in entries) else 0)
