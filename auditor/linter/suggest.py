"""Verified fix suggestions for first-token scoring problems.

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
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from auditor.linter.context import RuleContext
from auditor.linter.registry import codes_where, load_rules, severity_rank
from auditor.pcd.engines import DEFAULT_ENGINE, EngineProfile, get_engine
from auditor.pcd.letters import letter_probe_texts
from auditor.pcd.runcache import RunCache
from auditor.pcd.tokens import SiteTokens
from auditor.schema.model import Site
from auditor.tokenizers import LoadedTokenizer


def fixed_codes() -> frozenset[str]:
    """The rules that attach verified suggestions (`suggests=True`): a suggestion must clear them."""
    return codes_where(lambda r: r.suggests)


WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W_\d]+", re.UNICODE)


def _words(option: str) -> list[str]:
    return WORD.findall(option)


@lru_cache(maxsize=65536)  # the same words come back in every candidate of a field
def _fold(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).casefold().split())


def _candidates(options: list[str], slot_letters: tuple[str, ...]) -> list[tuple[str, str, list[str]]]:
    """(strategy, description, renamed options), most faithful first."""
    out = [("lowercase", "lower-case the options", [o.lower() for o in options])]
    words = [_words(o) for o in options]
    if all(words):
        out.append(
            ("lowercase-words", "lower-case words separated by spaces", [" ".join(w).lower() for w in words])
        )
        lead = 0
        while all(len(w) > lead + 1 for w in words) and len({w[lead].lower() for w in words}) == 1:
            lead += 1
        trail = 0
        while (
            all(len(w) > lead + trail + 1 for w in words) and len({w[-1 - trail].lower() for w in words}) == 1
        ):
            trail += 1
        core = [w[lead : len(w) - trail] for w in words]
        named = [[p for p in c if not p.isdigit()] or c for c in core]  # drop numeric codes
        out.append(
            (
                "distinguishing-part",
                "keep only the part that tells options apart",
                ["_".join(c).lower() for c in core],
            )
        )
        out.append(
            (
                "distinguishing-words",
                "drop shared words and numeric codes",
                ["_".join(n).lower() for n in named],
            )
        )
        out.append(
            (
                "distinguishing-words-spaced",
                "drop shared words and numeric codes; words separated by spaces",
                [" ".join(n).lower() for n in named],
            )
        )
        out.append(
            (
                "first-distinct-word",
                "one word per option, the distinguishing one first",
                [n[0].lower() for n in named],
            )
        )
        out.append(
            (
                "distinct-word-first",
                "move the distinguishing part to the front",
                ["_".join(c + w[:lead] + w[len(w) - trail :]).lower() for c, w in zip(core, words)],
            )
        )
        counts = Counter(_fold(p) for w in words for p in set(w))
        own_first = [sorted(w, key=lambda p: counts[_fold(p)] > 1) for w in words]  # stable
        out.append(
            (
                "own-word-first",
                "put each option's own word first (all words kept)",
                ["_".join(w).lower() for w in own_first],
            )
        )
        out.append(
            (
                "own-word-first-spaced",
                "put each option's own word first, words separated by spaces",
                [" ".join(w).lower() for w in own_first],
            )
        )
    if slot_letters:
        out.append(
            (
                "letter-slots",
                "score single letters and map them back with a legend",
                list(slot_letters[: len(options)]),
            )
        )
    return out


@lru_cache(maxsize=65536)
def _word_set(option: str) -> frozenset[str]:
    return frozenset(_fold(w) for w in _words(option))


def drops_distinguishing_word(
    options: list[str],
    renamed: list[str],
    sets: list[frozenset[str]] | None = None,
    counts: Counter | None = None,
) -> str | None:
    """The first word a renaming drops that tells its option apart from a sibling, or None.

    A word may go only when every sibling has it too (it says nothing), or when it is a
    numeric code (the kept words must then tell the options apart, which is checked apart).
    `VERY_NEGATIVE → very` drops NEGATIVE, which NEUTRAL lacks: refused.
    """
    sets = sets if sets is not None else [_word_set(o) for o in options]
    # how many options have each word: a sibling lacks it exactly when not all of them do
    counts = counts if counts is not None else Counter(w for words in sets for w in words)
    everyone = len(sets)
    for index, (words, new) in enumerate(zip(sets, renamed)):
        for word in sorted(words - _word_set(new)):
            if word.isdigit():
                continue
            if counts[word] < everyone:
                return f"{options[index]} → {new} drops {word!r}"
    return None


def words_kept(options: list[str], renamed: list[str]) -> float:
    """Mean share of each option's words the renaming keeps (ranking: most first)."""
    shares = []
    for option, new in zip(options, renamed):
        words = {w for w in _word_set(option) if not w.isdigit()} or _word_set(option)  # codes aside
        shares.append(len(words & _word_set(new)) / len(words) if words else 1.0)
    return sum(shares) / len(shares) if shares else 0.0


def candidate_site(tokens: SiteTokens, options: list[str]) -> Site:
    """The field with these options in place of its own, made once per tokenization: the
    suggestions' prefetch and the re-lint share it (and what the scoring model keeps on it)."""
    sites = tokens.memo.setdefault("candidate sites", {})
    key = tuple(options)
    site = sites.get(key)
    if site is None:
        site = sites[key] = replace(tokens.site, options=options)
    return site


def _quick_collision(tokens, site, engine) -> bool:
    """engine.quick_collision of a candidate, asked once per tokenization and engine (the
    prefetch asks first; the re-lint reads its answer)."""
    told = tokens.memo.setdefault(("quick collision", engine.name), {})
    key = tuple(site.options)
    if key not in told:
        told[key] = bool(engine.quick_collision(site, tokens.tokenizer, tokens.cache))
    return told[key]


def _site_rules() -> list:
    return [
        rule for rule in load_rules().values() if rule.scope == "site" and rule.applies_to == "option-names"
    ]


def _relint(tokens, options: list[str], engine=None) -> bool:
    """True when the field with these options has no warning or error under the tokenizer
    and the engine profile."""
    site = candidate_site(tokens, options)
    # PCD001 reports every first-token collision (error or warning): told by the first
    # options that collide (most renamings of a big field), here or in the prefetch before
    if engine is not None and engine.first_token and _quick_collision(tokens, site, engine):
        return False
    candidate = SiteTokens(site, tokens.tokenizer, tokens.cache)
    if engine is not None and engine.first_token and engine.field_plan(candidate).has_collision:
        return False
    file: Any = SimpleNamespace(path=site.path, document=None)  # rules read only the path
    for rule in _site_rules():
        # suggestions=False: re-linting a candidate must not look for suggestions of its own;
        # details=False: only its findings' severities are read
        ctx = RuleContext(
            rule,
            dict(rule.options),
            file,
            site,
            tokens.tokenizer,
            rule.severity,
            suggestions=False,
            engine=engine,
            details=False,
            cache=tokens.cache,
        )
        if any(severity_rank(f.severity) >= 1 for f in rule.check(candidate, ctx)):
            return False
    return True


def verified_suggestions(
    tokens: SiteTokens, engine: EngineProfile | None = None, letters: str | None = None
) -> list[dict]:
    """Suggestions for one field under one tokenizer and engine profile (default: gather),
        each re-linted clean before it is kept and ranked by how many of each option's words it
    keeps (letter slots, a legend, last); letter slots come from `letters` or the engine's
        alphabet, so an openjev user is never offered more than 16 letters."""
    engine = engine or get_engine(DEFAULT_ENGINE)
    options = tokens.site.options
    found: list[dict[str, Any]] = []
    for strategy, description, renamed in kept_candidates(tokens, letters or engine.letters):
        is_letters = strategy == "letter-slots"  # meaning kept by the legend, not the words
        if not _relint(tokens, renamed, engine):
            continue
        found.append(
            {
                "strategy": strategy,
                "description": description,
                "options": renamed,
                "mapping": [{"from": o, "to": r} for o, r in zip(options, renamed)],
                "tokenizer": tokens.tokenizer.id,
                "engine": engine.name,
                "verified": True,
                "words_kept": 0.0 if is_letters else round(words_kept(options, renamed), 3),
            }
        )
    found.sort(key=lambda s: -s["words_kept"])  # stable: ties keep the candidates' order
    return found


def field_key(tokens: SiteTokens, engine: EngineProfile | None, letters: str | None) -> tuple | None:
    """What a field's verified suggestions depend on: its name, array depth and options (all
    strings: other fields get none), the tokenizer, the engine profile and the letter alphabet
    (a re-lint reads rules' defaults, not the file's settings); None when not all strings."""
    options = tokens.site.options
    if not all(type(o) is str for o in options):
        return None
    return (
        tokens.tokenizer.id,
        engine.name if engine else None,
        letters,
        tokens.site.name,
        tokens.array_depth,
        tuple(options),
    )


class SharedSuggestions:
    """`verified_suggestions` computed once per distinct field of a run (the same enum under
    the same field name recurs across a corpus's files and `$defs`); each caller gets its own
    copy, so a finding's data never shares lists with another's."""

    def __init__(self) -> None:
        self._found: dict[tuple, list[dict]] = {}

    def __call__(
        self, tokens: SiteTokens, engine: EngineProfile | None = None, letters: str | None = None
    ) -> list[dict]:
        key = field_key(tokens, engine, letters)
        if key is None:
            return verified_suggestions(tokens, engine, letters)
        if key not in self._found:
            self._found[key] = verified_suggestions(tokens, engine, letters)
        return [
            {**s, "options": list(s["options"]), "mapping": [dict(m) for m in s["mapping"]]}
            for s in self._found[key]
        ]


def kept_candidates(tokens: SiteTokens, letters: str) -> list[tuple[str, str, list[str]]]:
    """The candidates worth re-linting, in order: new, distinct, non-empty, still distinct
    after folding, dropping no distinguishing word (letter slots aside). Computed once per
    tokenization and alphabet; the engine's prefetch and the re-lints share them."""
    key = ("candidates", letters)
    if key in tokens.memo:
        return tokens.memo[key]
    options = tokens.site.options
    kept: list[tuple[str, str, list[str]]] = []
    if 2 <= len(options) <= _max_options() and all(isinstance(o, str) for o in options):
        slots = tokens.slots(letters)
        sets = [_word_set(o) for o in options]
        counts = Counter(w for words in sets for w in words)
        seen: set[tuple[str, ...]] = set()
        for strategy, description, renamed in _candidates(options, slots.letters if slots.viable else ()):
            key_ = tuple(renamed)
            if key_ == tuple(options) or key_ in seen or not all(renamed):
                continue
            seen.add(key_)
            if len({_fold(r) for r in renamed}) != len(renamed):
                continue
            if strategy != "letter-slots" and drops_distinguishing_word(options, renamed, sets, counts):
                continue
            kept.append((strategy, description, renamed))
    tokens.memo[key] = kept
    return kept


def _max_options() -> int:
    """Past PCD003's default limit no renaming can be kept: a renaming keeps the field's count
    of options, and each re-lint runs PCD003 with its defaults (an error at that count), so a
    field that large gets no candidates at all (its renamings were all built, tokenized and
    refused before: three quarters of the corpus's options are in such fields)."""
    capped = [r for r in load_rules().values() if r.option_limit]
    return min((int(r.options[r.option_limit]) for r in capped), default=sys.maxsize)


def prefetch_suggestions(
    site_tokens: list[SiteTokens],
    tokenizer: LoadedTokenizer,
    engines: Iterable[EngineProfile],
    groups: tuple[str, ...],
    canonical: bool,
    cache: RunCache | None = None,
    scoped: Callable[[SiteTokens], AbstractContextManager[None]] | None = None,
) -> None:
    """One batch for the texts every suggestion re-lint reads (`groups`: the scoring texts and
    the engines' plans; a re-lint stops at its first warning, so the texts only a clean
    candidate's later rules read are left to the memo on demand), for each field whose finding
    will ask for suggestions: a first-token collision, a multi-token option, or (`canonical`:
    PCD005 runs) a non-canonical option. `cache`: the run's RunCache (the re-lints read the
    candidates' splits from it); `scoped(tokens)`: what the tokenizer is asked for a field's
    candidates meanwhile is that field's file's (the encoding cache: LoadedTokenizer.recording)."""
    cache = cache if cache is not None else RunCache()
    needing = [
        t for t in site_tokens if t.collisions or t.multi_token or (canonical and t.noncanonical_options)
    ]
    names = dict.fromkeys(t.site.name for t in needing)
    tokenizer.prefill([text for name in names for text in letter_probe_texts(name, tokenizer=tokenizer)])
    fields: dict[tuple, tuple] = {}  # one of each distinct field (SharedSuggestions verifies it once)
    for t in needing:
        for e in engines:
            fields.setdefault(field_key(t, e, e.letters) or (id(t), e.name), (t, e))
    # a renaming whose first options already collide is refused before the rest is tokenized
    candidates = []
    for t, e in fields.values():
        with scoped(t) if scoped is not None else nullcontext():
            for _, _, renamed in kept_candidates(t, e.letters):
                candidate = candidate_site(t, renamed)
                if not (e.first_token and _quick_collision(t, candidate, e)):
                    candidates.append(candidate)
    if candidates:
        plan_texts = [text for e in engines for c in candidates for text in e.plan_texts(c, tokenizer, cache)]
        cache.prefetch(candidates, tokenizer, groups, plan_texts)


# --------------------------------------------------------------------------- writing a fixed copy

_PLAIN_YAML = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*( [A-Za-z0-9_]+)*$")


# Characters a YAML 1.1 reader (PyYAML) takes as line breaks even inside a quoted scalar, and
# that JSON allows raw: always written as escapes, valid in JSON and in a YAML double-quoted
# scalar alike, so the written file parses everywhere.
_BREAK_ESCAPES = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
# Where lines end in the spans a document's positions use (auditor.schema): JSON counts `\n`
# only; YAML (ruamel) `\r\n`, `\r` and `\n`, never U+2028 or NEL.
_LINE_ENDS = {False: re.compile("\n"), True: re.compile("\r\n|\r|\n")}


def _scalar(value: str, was: str, yaml_file: bool) -> str:
    """The new option written as the old one was: JSON string, or YAML plain when safe."""
    if yaml_file and not was.startswith(("'", '"')) and _PLAIN_YAML.match(value):
        import yaml

        if yaml.safe_load(value) == value:  # `on`, `no`, `null` … would change type
            return value
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _BREAK_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def option_edits(
    text: str, yaml_file: bool, renamings: list[tuple[list, list[str]]]
) -> list[tuple[tuple[int, int], Any, str]]:
    """The edits that rename options, in order: ((start, end) offsets into `text`, the option's
    Span, the text written over it, as the old option was written). `renamings` holds (option
    spans, new options) per field; a span shared by two sites ($ref) is edited once."""
    starts = [0] + [m.end() for m in _LINE_ENDS[yaml_file].finditer(text)]
    edits: dict[tuple[int, int], tuple[Any, str]] = {}
    for spans, options in renamings:
        for span, value in zip(spans, options):
            begin = starts[span.line - 1] + span.column - 1
            end = starts[span.end_line - 1] + span.end_column - 1
            edits[(begin, end)] = (span, _scalar(value, text[begin:end], yaml_file))
    return [(where, span, value) for where, (span, value) in sorted(edits.items())]


def rewrite(
    text: str,
    yaml_file: bool,
    renamings: list[tuple[list, list[str]]],
    extra: Iterable[tuple[int, int, str]] = (),
) -> str:
    """`text` with each renamed option written over its span, and nothing else changed
    (option_edits applied); `extra`: further edits (begin, end, text) of the same text (a
    decision request's design fixes: auditor.linter.fixes)."""
    edits = {where: value for where, _span, value in option_edits(text, yaml_file, renamings)}
    edits.update(((begin, end), value) for begin, end, value in extra)
    out, cursor = [], 0
    for (begin, end), value in sorted(edits.items()):
        out.append(text[cursor:begin])
        out.append(value)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def fix_entries(run: Any) -> list[dict]:
    """One entry per (file, field, tokenizer) with a warning or error of a rule that suggests
    fixes (`suggests=True`), holding the finding's verified suggestions: what `pcdlint suggest`
    prints, and what the language server and the MCP server offer. An evaluation config's
    label sets are left out (a harness reads its labels as written: no renaming fixes them)."""
    offered = fixed_codes()
    groups: dict[tuple, dict] = {}
    fixed = label_set_pointers(run)
    for finding in run.findings:
        if (
            finding.code not in offered
            or finding.severity == "info"
            or (finding.path, finding.site_pointer) in fixed
        ):
            continue
        key = (finding.path, finding.site_pointer, finding.tokenizer)
        entry = groups.setdefault(
            key,
            {
                "path": finding.path,
                "pointer": finding.site_pointer,
                "field": finding.field,
                "line": finding.line,
                "tokenizer": finding.tokenizer,
                "engine": finding.engine or run.engines[0].name,
                "codes": [],
                "suggestions": finding.data.get("suggestions", []),
            },
        )
        if finding.code not in entry["codes"]:
            entry["codes"].append(finding.code)
    return list(groups.values())


def label_set_pointers(run: Any) -> set[tuple[str, str]]:
    """(path, pointer) of every evaluation-config label set of the run (auditor.schema.evalconfigs)."""
    from auditor.schema.evalconfigs import label_set_scoring

    return {(r.model.path, s.pointer) for r in run.files for s in r.model.sites if label_set_scoring(s)}


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
