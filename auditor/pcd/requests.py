"""What a decision engine does with a decision request: its limits, name rules and field rules
(the engine table's rows), as pure functions over a question's site and its document.

The decision-request rules read these; how an engine shows a question and labels its options
is its rendering family's (auditor.pcd.readouts).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from auditor.pcd.engines.table import EngineRow
from auditor.schema.decisions import SHAPES, undocumented_body_fields, undocumented_fields
from auditor.schema.documents import escape_token, resolve_pointer
from auditor.schema.sites import Site

# line breaks that are not Cc, Zl or Zp (NEL U+0085 is Cc already)
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def refusal(row: EngineRow, invalid: bool = True) -> str:
    """`sglang-decisions refuses the request (400)`."""
    status = row.invalid_status() if invalid else row.status
    return f"{row.name} refuses the request" + (f" ({status})" if status else "")


def name_key(name: str) -> str:
    """What SGLang compares option names by: trimmed, case-folded."""
    return name.strip().casefold()


def bad_characters(name: str) -> list[str]:
    """The control (Cc), line (Zl) and paragraph (Zp) separators and line breaks in a name."""
    return [
        c for c in dict.fromkeys(name) if c in LINE_BREAKS or unicodedata.category(c) in ("Cc", "Zl", "Zp")
    ]


def stringified(value: object) -> str:
    """A typed choice value as a prompt or an answer key shows it: a string as itself, a boolean
    or number as its JSON text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return str(value)


def distinct_names(options: list) -> list:
    """The options renamed so that no engine refuses their names: control and line-break
    characters become spaces, runs of spaces one, the ends trimmed, and a name that repeats an
    earlier one after case folding gets ` 2`, ` 3`, … (other values stay as they are)."""
    out: list = []
    seen: set[str] = set()
    for option in options:
        if not isinstance(option, str):
            out.append(option)
            continue
        bad = set(bad_characters(option))
        name = " ".join("".join(" " if c in bad else c for c in option).split()) or "option"
        candidate, n = name, 1
        while name_key(candidate) in seen:
            n += 1
            candidate = f"{name} {n}"
        seen.add(name_key(candidate))
        out.append(candidate)
    return out


def renaming(options: list, renamed: list, description: str) -> dict:
    """A suggestion as `pcdlint suggest` reads it (auditor.linter.suggest)."""
    return {
        "strategy": "distinct-names",
        "description": description,
        "options": renamed,
        "mapping": [{"from": o, "to": r} for o, r in zip(options, renamed)],
    }


def split_passes(n: int, limit: int) -> list[dict]:
    """A choice of n options past an engine's limit as two passes, the way the 255-option
    cookbooks split one: a first choice among balanced groups of at most `limit` options, then
    a choice within the group picked (`first`, `last`: option indexes of each group)."""
    groups = -(-n // limit)
    size = -(-n // groups)
    return [
        {"first": start, "last": min(start + size, n) - 1, "options": min(start + size, n) - start}
        for start in range(0, n, size)
    ]


def first_site(site: Site, data: Any) -> bool:
    """Whether `site` is the first question of its request that is a site (a question of a type
    pcdlint does not lint, a System One `box`, is none): where a request's body is checked once."""
    if site.question_index == 0:
        return True
    try:
        body = resolve_pointer(data, site.request_pointer)
    except (KeyError, IndexError, ValueError, TypeError):
        return False
    questions = body.get("questions") if isinstance(body, dict) else None
    shape = SHAPES.get(site.request_shape or "")
    if shape is None or not isinstance(questions, (dict, list)):
        return False
    members = list(questions.values() if isinstance(questions, dict) else questions)
    linted = [
        i
        for i, q in enumerate(members)
        if isinstance(q, dict) and isinstance(q.get("type"), str) and shape.types.get(q["type"]) is not None
    ]
    return bool(linted) and linted[0] == site.question_index


def blank(value: Any) -> bool:
    """Text a decision server refuses as empty: null, or a string of whitespace only."""
    return value is None or (isinstance(value, str) and not value.strip())


def _blanks(site, question: dict, body, shape, first: bool) -> list:
    """Blank text SGLang refuses: the input (once), the question, its id."""
    out = []
    if isinstance(body, dict) and first and "input" in body and blank(body["input"]):
        out.append(FieldProblem(f"{site.request_pointer}/input", "input", "blank"))
    for key in (shape.text_key, shape.name_key):
        if key and key in question and blank(question[key]):
            out.append(FieldProblem(f"{site.pointer}/{key}", key, "blank"))
    return out


@dataclass(frozen=True)
class FieldProblem:
    pointer: str
    field: str
    why: str  # "unknown" | "refused" | "required" | "blank" | "repeated" | "empty" | "shape" | "thinking" | "type"
    expected: str = ""  # what the route takes instead (a criteria shape)


# what each question type's criteria must be where the route checks their shape (criteria_shapes)
CRITERIA_SHAPES = {
    "choice": (lambda c: isinstance(c, dict), "an object of option names"),
    "score": (lambda c: isinstance(c, list), "a list of levels"),
    "binary": (lambda c: c is None or isinstance(c, dict), 'null or an object with "true" and "false"'),
}


def _criteria_shape(site, question: dict) -> list[FieldProblem]:
    """A System One question whose criteria are not its type's shape (an empty choice or a
    score of one level is a count: the limits say it)."""
    fits, expected = CRITERIA_SHAPES[site.question_kind]
    criteria = question.get("criteria")
    if fits(criteria):
        return []
    pointer = f"{site.pointer}/criteria" if "criteria" in question else site.pointer
    return [FieldProblem(pointer, "criteria", "shape", expected)]


def _question_types(row: EngineRow, site, body: dict) -> list[FieldProblem]:
    """Questions of a type the route does not take (vLLM knows no `box`): checked once per body,
    at its first question, since such a question is no site of its own."""
    if not row.question_types:
        return []
    questions = body.get("questions")
    if isinstance(questions, dict):
        members = [
            (f"{site.request_pointer}/questions/{escape_token(str(k))}", q) for k, q in questions.items()
        ]
    elif isinstance(questions, list):
        members = [(f"{site.request_pointer}/questions/{i}", q) for i, q in enumerate(questions)]
    else:
        return []
    return [
        FieldProblem(f"{at}/type", question["type"], "type", ", ".join(row.question_types))
        for at, question in members
        if isinstance(question, dict)
        and isinstance(question.get("type"), str)
        and question["type"] not in row.question_types
    ]


def _body_requirements(row: EngineRow, site, body: dict) -> list[FieldProblem]:
    """What the route requires of the body as a whole (checked at its first question)."""
    out = []
    if "state" in row.required and body.get("state") is None:
        out.append(FieldProblem(site.request_pointer, "state", "required"))
    if "state-field" in row.required and "state" not in body:
        out.append(FieldProblem(site.request_pointer, "state", "required"))
    if "model" in row.required and body.get("model") is None:
        out.append(FieldProblem(site.request_pointer, "model", "required"))
    kwargs = body.get("chat_template_kwargs")
    if "thinking-off" in row.required and isinstance(kwargs, dict) and kwargs.get("enable_thinking"):
        at = f"{site.request_pointer}/chat_template_kwargs/enable_thinking"
        out.append(FieldProblem(at, "enable_thinking", "thinking"))
    return out


def field_problems(row: EngineRow, site: Site, data: Any) -> list[FieldProblem]:
    """The fields of a question (and, at the request's first question, of its body) that the
    engine's route refuses, and what it requires that is missing. Only for bodies of a shape
    the route takes; a promptfoo config's other keys are no request fields."""
    if site.request_shape not in row.shapes:
        return []
    question = resolve_pointer(data, site.pointer)
    body = resolve_pointer(data, site.request_pointer) if site.request_source == "body" else None
    out: list[FieldProblem] = []
    if row.unknown_fields in ("refused", "questions"):
        out += [
            FieldProblem(p, k, "unknown")
            for p, k in undocumented_fields(site.request_shape, site.pointer, question)
        ]
    first = first_site(site, data)
    if isinstance(body, dict) and first:
        if row.unknown_fields == "refused":
            out += [
                FieldProblem(p, k, "unknown")
                for p, k in undocumented_body_fields(site.request_shape, body, site.request_pointer)
                if k not in row.extra_fields
            ]
        out += [
            FieldProblem(f"{site.request_pointer}/{escape_token(k)}", k, "refused")
            for k in row.refused_fields
            if body.get(k) is not None
        ]
        out += _body_requirements(row, site, body)
        out += _question_types(row, site, body)
    if row.criteria_shapes and site.request_shape == "systemone" and isinstance(question, dict):
        out += _criteria_shape(site, question)
    shape = SHAPES[site.request_shape]
    text_key = shape.text_key
    if "nonblank" in row.required:
        out += _blanks(site, question, body, shape, first)
    if site.question_kind == "score" and {"nonblank", "nonblank-levels"} & set(row.required):
        out += [
            FieldProblem(p, "level", "blank") for p, o in zip(site.option_pointers, site.options) if blank(o)
        ]
    if "unique-ids" in row.required and shape.name_key and isinstance(body, dict):
        ids = [q.get(shape.name_key) for q in body.get("questions", []) if isinstance(q, dict)]
        mine = question.get(shape.name_key)
        if mine is not None and mine in ids[: site.question_index]:
            out.append(FieldProblem(f"{site.pointer}/{shape.name_key}", shape.name_key, "repeated"))
    empty_id = question.get(shape.name_key) == "" if shape.name_key else site.question_name == ""
    if "nonempty-ids" in row.required and empty_id and site.request_source == "body":
        pointer = f"{site.pointer}/{shape.name_key}" if shape.name_key else site.pointer
        out.append(FieldProblem(pointer, shape.name_key or "id", "empty"))
    if "instructions" in row.required and question.get(text_key) is None:
        out.append(FieldProblem(site.pointer, text_key, "required"))
    if (
        "noul-text" in row.required
        and site.question_kind == "binary"
        and question.get(text_key) is None
        and not question.get("criteria")
    ):
        out.append(FieldProblem(site.pointer, text_key, "required"))
    return out
