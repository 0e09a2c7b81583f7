"""What a decision question asks, read from its words: the pure functions the design rules
(PCD2xx) share. No tokenizer and no engine: a way out among the options, a declaration that
every input fits, levels that say nothing but a degree, a description that repeats its option's
name, and the wordings decision models are known to answer badly (counting, arithmetic, dates,
double negation, two judgements in one yes/no question).

Word lists cover English and the languages the collected real requests are written in
(tests/data/decision-requests/: Japanese, Chinese, Polish) plus the common European ones; a
team adds its own through the rules' options.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

# A way out: an option an input that fits none of the others can take. Matched against an
# option's name (the whole name, or its first or last word) and, as a phrase, its description.
FALLBACK_OPTIONS: tuple[str, ...] = (
    # English
    "other",
    "others",
    "none",
    "none of the above",
    "neither",
    "unknown",
    "unclear",
    "uncertain",
    "unsure",
    "undetermined",
    "unspecified",
    "not specified",
    "not applicable",
    "n/a",
    "na",
    "no match",
    "no answer",
    "misc",
    "miscellaneous",
    "something else",
    "anything else",
    "cannot tell",
    "can't tell",
    "cannot determine",
    "can't determine",
    "not enough",
    "insufficient",
    "fits none",
    "needs review",
    "abstain",
    # Spanish, Portuguese, Italian, French, German, Dutch, Polish, Russian
    "otro",
    "otra",
    "otros",
    "ninguno",
    "ninguna",
    "desconocido",
    "outro",
    "nenhum",
    "desconhecido",
    "altro",
    "nessuno",
    "sconosciuto",
    "autre",
    "aucun",
    "aucune",
    "inconnu",
    "andere",
    "sonstige",
    "sonstiges",
    "unbekannt",
    "overig",
    "onbekend",
    "inne",
    "inny",
    "żaden",
    "nieznane",
    "другое",
    "неизвестно",
    # Chinese, Japanese, Korean (matched inside text: no spaces between words)
    "其他",
    "其它",
    "以上都不",
    "均不适合",
    "信息不足",
    "无法判断",
    "不确定",
    "その他",
    "該当なし",
    "不明",
    "特定できない",
    "判断できない",
    "기타",
    "해당 없음",
    "알 수 없",
)

# A declaration, in a question's own words, that every input fits one option.
EXHAUSTIVE = re.compile(
    r"\b(?:always|necessarily)\s+(?:exactly\s+)?one\s+of\b"
    r"|\bexactly\s+one\s+of\s+(?:these|the|them)\b"
    r"|\b(?:every|each|any)\s+(?:input|message|ticket|item|case|text|request|record|email|note)s?"
    r"\s+(?:is|fits|belongs|falls)\b"
    r"|\b(?:exhaustive|covers?\s+every\s+case|cover\s+all\s+cases)\b"
    r"|\bno\s+other\s+(?:option|outcome|possibility|case|answer)s?\s+(?:is|are)\s+possible\b",
    re.IGNORECASE,
)

# Words that only say how much (levels made of them give the model nothing to match the state
# against beyond a degree), with the stop words a level may add.
DEGREE_WORDS = frozenset(
    [
        "none",
        "no",
        "low",
        "lowest",
        "lower",
        "medium",
        "mid",
        "middle",
        "moderate",
        "moderately",
        "average",
        "high",
        "highest",
        "higher",
        "very",
        "extremely",
        "extreme",
        "slightly",
        "slight",
        "somewhat",
        "fairly",
        "quite",
        "rather",
        "a",
        "little",
        "lot",
        "bit",
        "much",
        "more",
        "most",
        "less",
        "least",
        "mild",
        "mildly",
        "severe",
        "severely",
        "minor",
        "major",
        "minimal",
        "maximal",
        "maximum",
        "minimum",
        "critical",
        "small",
        "large",
        "big",
        "tiny",
        "huge",
        "weak",
        "strong",
        "poor",
        "fair",
        "good",
        "great",
        "excellent",
        "bad",
        "worse",
        "worst",
        "better",
        "best",
        "not",
        "at",
        "all",
        "never",
        "rarely",
        "sometimes",
        "often",
        "always",
        "usually",
        "level",
        "degree",
        "score",
        "rating",
        "grade",
        "tier",
        "priority",
        "normal",
        "standard",
        "niedrig",
        "mittel",
        "hoch",
        "bajo",
        "medio",
        "alto",
        "baja",
        "alta",
        "faible",
        "moyen",
        "élevé",
        "basso",
        "alto",
        "niski",
        "średni",
        "wysoki",
        "niska",
        "średnia",
        "wysoka",
        "brak",
        "低",
        "中",
        "高",
        "低い",
        "高い",
        "中程度",
        "无",
        "弱",
        "强",
        "較低",
        "较低",
        "较高",
        "很高",
        "非常",
    ]
)
STOP_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "level",
    ]
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER = re.compile(r"^\s*[-+]?\d+(?:[.,]\d+)?\s*%?\s*$")
_ANSWER_KEY = re.compile(r"^(?:[A-Z]|[a-z]|\d)$")


def fold(text: Any) -> str:
    """Text as the matchers compare it: NFKC, case-folded, `_-./` as spaces, spaces collapsed."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[_\-./]+", " ", text).split())


def _is_cjk(term: str) -> bool:
    return any(ord(c) > 0x2E80 for c in term)


def _contains(text: str, term: str) -> bool:
    if _is_cjk(term):
        return term in text
    return re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", text) is not None


def fallback_index(options: Sequence[Any], details: Sequence[Any], terms: Iterable[str]) -> int | None:
    """The first option that offers a way out (its name, its first or last word, or a phrase of
    its description is one of `terms`), or None."""
    folded = [fold(t) for t in terms if isinstance(t, str) and t.strip()]
    for index, option in enumerate(options):
        name = fold(option)
        words = name.split()
        ends = {name, *(words[:1]), *(words[-1:])}
        detail = fold(details[index]) if index < len(details) else ""
        for term in folded:
            if term in ends or (_is_cjk(term) and term in name) or (detail and _contains(detail, term)):
                return index
    return None


def declares_exhaustive(texts: Iterable[Any]) -> bool:
    """Whether one of these texts (a question's instructions, its options' descriptions) says
    that every input fits one option."""
    return any(EXHAUSTIVE.search(t if isinstance(t, str) else fold(t)) for t in texts if t is not None)


# A question that asks for the best of the options offered (the next action, the most likely
# cause): every input has a best one, so it needs no way out.
RELATIVE = re.compile(
    r"\b(?:best|most\s+(?:likely|appropriate|suitable|relevant|probable|plausible)|closest|prefer(?:red)?"
    r"|next\s+(?:action|step|move)|do\s+next|should\s+(?:we|i|you|they|it|the\s+\w+)\s+do|rank)\b"
    r"|\b(?:najlepsz\w*|następn\w*|mejor|meilleur\w*|beste\w*|migliore)\b|最好|最佳|最適|次に",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(.*?)(\d+)(\D*)$")


# A question about a message's tone, sentiment or mood: every message has one, so the options
# span a scale (negative … positive) rather than a list of kinds an input may fall outside.
AFFECT = re.compile(
    r"\b(?:tone|sentiment|mood|emotion|emotional|feeling|attitude)s?\b|口調|語調|感情|语气|情绪|情感|어조|감정",
    re.IGNORECASE,
)


def asks_for_affect(*texts: Any) -> bool:
    """Whether a question (its text or its name) asks for a tone, a sentiment or a mood."""
    return any(isinstance(t, str) and AFFECT.search(t.replace("_", " ")) for t in texts)


def asks_for_best(text: Any) -> bool:
    """Whether a question asks for the best of its options (a next action, a most likely cause)."""
    return isinstance(text, str) and RELATIVE.search(text) is not None


def numbered(options: Sequence[Any]) -> bool:
    """Options that differ only by a number (`face_1` … `face_6`, `P1` … `P3`): a scale or a
    complete enumeration, which every input fits by construction."""
    if len(options) < 3 or not all(isinstance(o, str) for o in options):
        return False
    parts = [_NUMBERED.match(fold(o).split(":")[0].strip()) for o in options]
    if not all(parts):
        return False
    return len({(m.group(1), m.group(3)) for m in parts if m}) == 1


def answer_keys(options: Sequence[Any]) -> bool:
    """Options that are answer keys (A–D, 1–4) of a multiple-choice item whose answers are
    written in the question: an evaluation item, which has no way out by design."""
    return bool(options) and all(isinstance(o, str) and _ANSWER_KEY.match(o.strip()) for o in options)


def _same_stem(a: str, b: str) -> bool:
    """Two words of one stem (`urgency`/`urgent`, `pilność`/`pilny`): a common prefix of four
    letters or more, covering most of the shorter word."""
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return a == b or (common >= 4 and common >= 0.6 * min(len(a), len(b)))


def content_words(level: Any, question: Any = None) -> list[str]:
    """The words of a level that say more than a degree: neither a number, a degree word, a
    stop word nor a word of the question itself (`Low urgency` under "How urgent?" says only
    `low`). Empty: the level has nothing to match the state against."""
    text = fold(level)
    if not text or _NUMBER.match(text):
        return []
    asked = set(_WORD.findall(fold(question)))
    out = []
    for word in _WORD.findall(text):
        if word.isdigit() or word in DEGREE_WORDS or word in STOP_WORDS:
            continue
        if any(_same_stem(word, w) for w in asked):
            continue
        if _is_cjk(word) and all(c in "".join(DEGREE_WORDS) for c in word):
            continue
        out.append(word)
    return out


_ARTICLES = frozenset(["a", "an", "the"])


def repeats_name(name: Any, description: Any) -> bool:
    """Whether a description only repeats its option's name (`"red": "Red"`, `"circle": "A
    circle"`): case, separators, articles and end punctuation aside."""
    if not isinstance(description, str) or not description.strip():
        return False
    words = [w for w in _WORD.findall(fold(description)) if w not in _ARTICLES]
    named = [w for w in _WORD.findall(fold(name)) if w not in _ARTICLES]
    return bool(words) and words == named


def blank(value: Any) -> bool:
    """A description that says nothing: missing, null, or whitespace."""
    return value is None or (isinstance(value, str) and not value.strip())


# ---------------------------------------------------------------- wordings (opt-in rules)

COUNTING = re.compile(
    r"\bhow\s+(?:many|often|long|old)\b"
    r"|\b(?:count|number)\s+of\b|\bcount\s+(?:the|how)\b"
    r"|\b(?:sum|total|add\s+up|average|calculate|compute|percentage)\b"
    r"|\d+(?:[.,]\d+)?\s*[-+×x*/÷]\s*\d+(?:[.,]\d+)?"
    r"|\b(?:more|fewer|less|greater|older|newer)\s+than\s+\d"
    r"|\b(?:before|after|earlier\s+than|later\s+than|since|until)\s+"
    r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\d+\s+(?:days?|weeks?|months?|years?)\b)"
    r"|\b(?:within|in\s+the\s+last|over\s+the\s+last)\s+\d+\s+(?:days?|weeks?|months?|years?|hours?)\b"
    r"|\bwie\s+viele\b|\bcu[aá]nt[oa]s\b|\bcombien\b|\bquant[ie]\b|\bile\b"
    r"|多少|几个|幾つ|いくつ|何個|何件|何日|몇\s*개",
    re.IGNORECASE,
)


def asks_to_count(text: Any) -> str | None:
    """The words of a question that ask the model to count, do arithmetic or compare dates, or
    None."""
    if not isinstance(text, str):
        return None
    found = COUNTING.search(text)
    return found.group(0) if found else None


NEGATION = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|n't)\b|n't\b"
    r"|\b(?:un|in|im|non|dis)(?:able|true|correct|safe|likely|valid|complete|possible|allowed|related|relevant)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.?!;:。？！；]+")


def double_negation(text: Any) -> str | None:
    """A sentence of the question with two negations or more (`not … not`, `no … without`,
    `not un…`), or None."""
    if not isinstance(text, str):
        return None
    for sentence in _SENTENCE.findall(text):
        if len(NEGATION.findall(sentence)) >= 2:
            return sentence.strip()
    return None


_PREDICATE = (
    r"(?:is|are|was|were|has|have|had|does|do|did|can|could|will|would|should|must|"
    r"ask(?:s|ed)?|request(?:s|ed)?|mention(?:s|ed)?|want(?:s|ed)?|need(?:s|ed)?|contain(?:s|ed)?|"
    r"state(?:s|d)?|report(?:s|ed)?|express(?:es|ed)?|include(?:s|d)?|describe(?:s|d)?|show(?:s|ed)?|"
    r"use(?:s|d)?|provide(?:s|d)?|refer(?:s|red)?|require(?:s|d)?|seem(?:s|ed)?|appear(?:s|ed)?)"
)
JOINED = re.compile(
    rf"\b{_PREDICATE}\b[^.?!;]*?\b(?:and|and\s+also|as\s+well\s+as)\s+(?:\w+\s+){{0,3}}?{_PREDICATE}\b",
    re.IGNORECASE,
)
BOTH = re.compile(r"\bboth\b[^.?!;]+\band\b", re.IGNORECASE)


def joined_judgements(text: Any) -> str | None:
    """The part of a yes/no question that joins two judgements with "and" (`Is the customer
    angry and asking for a refund?`: both must hold, and the answer cannot say which failed),
    or None. "and" between two nouns (`billing and refunds`) is no second judgement."""
    if not isinstance(text, str):
        return None
    found = JOINED.search(text) or BOTH.search(text)
    return found.group(0) if found else None


def request_body(data: Any, site: Any) -> dict | None:
    """The body of the decision request a question belongs to (its `request_pointer`), or None."""
    from auditor.schema.documents import resolve_pointer

    try:
        body = resolve_pointer(data, site.request_pointer)
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    return body if isinstance(body, dict) else None


def text_key(shape: str) -> str:
    """The key a question of this request shape holds its text under (`instructions`, SGLang's
    `question`)."""
    from auditor.schema.decisions import SHAPES

    found = SHAPES.get(shape)
    return found.text_key if found is not None else "instructions"


def word_count(text: Any) -> int:
    """The words of a question's text: space-separated words, and for text in a script written
    without spaces (Chinese, Japanese) one word per two characters."""
    if not isinstance(text, str):
        text = fold(text)
    count = 0
    for word in text.split():
        cjk = sum(1 for c in word if ord(c) > 0x2E80 and c.isalpha())
        count += max(1, (cjk + 1) // 2) if cjk else 1
    return count


_ID_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])")


def id_statement(name: str) -> str | None:
    """A question id read as the statement it names (`refund_requested` → `Refund requested.`),
    or None where it is one word or no plain identifier (too little to be a question)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z_\-]*", name or ""):
        return None
    words = [w.lower() for w in _ID_WORD.findall(name.replace("_", " ").replace("-", " "))]
    if len(words) < 2:
        return None
    return " ".join(words).capitalize() + "."
