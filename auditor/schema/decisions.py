"""Find decision requests in a document and turn every question into a decision site.

A decision request is a body a team sends to a decision model: a shared state or input and
typed questions, answered with probabilities and no generated text. Three wire shapes carry
almost all of them, one `RequestShape` row each in `SHAPES`:

- `systemone`: System One (TypeSafe Jev, OpenRouter, Perplexity, Fireworks, SGLang and llama.cpp
  `/v1/systemone`): `{"model", "state", "questions": {NAME: {"type": "choice" | "score" | "noul" |
  "box", "instructions", "criteria"}}}` (typesafe-sdk `_schemas/models.py`).
- `openai-decisions`: OpenAI `POST /v1/decisions` (openai-python
  `types/decision_create_params.py`): `{"model", "input", "questions": [{"type": "predicate" |
  "choice" | "score", "name", "instructions", "choices": [{"value", "description"}], "levels":
  [{"label", "description"}]}], "safety_identifier"}`; choice values are typed.
- `sglang-decisions`: SGLang `/v1/decisions` (docs "Decision models"): `{"input", "questions":
  [{"id", "type": "choice" | "score" | "yes_no", "question", "options": [{"name",
  "description"}], "levels": [...], "yes", "no"}], "temperature", ...}`.

Where they sit is a second table, `CONTAINERS`, beside the schema locator's wrapper table: a
body anywhere in the document (a file that is one body, a list of bodies, a config holding
them) and the questions of a promptfoo `openai:decisions:*` provider's `config`. A body is told
apart by its own keys: a `questions` map whose every question has a System One type, in a body
that has a `state` or a `model` or nothing else (an RLCD preset's `questions` map beside `text`,
or with types of its own, stays a preset); a `questions` list whose types one shape documents,
the shape whose own keys the body uses most.

Each open engine also has a dialect of its own, one more row of the same table (`DIALECTS`):
the same questions under other names (`kind` for `type`; `candidates`, `options` of bare
strings, `choices`, `labels` for the options; `instruction`, `prompt`, `question` for the text;
`boolean`, `yes_no`, `predicate` for a yes/no question; `min`/`max` score levels), one question
per body (`{"question": {...}}`), an object `input`, or a list of `{"state", "question",
"options"}` rows. A row is recognised only where its structure is unambiguous: the keys it
requires are there and every question's type is one it knows. Every located request names the
row it matched (`LocatedRequest.shape`), which a file reports as its `dialect`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from auditor.schema.documents import escape_token, resolve_pointer

MAX_WALK_DEPTH = 16
QUESTION_KINDS = ("choice", "score", "binary")


@dataclass(frozen=True)
class RequestShape:
    """One wire shape or dialect: how its questions are held and typed, and its documented fields."""

    name: str
    # "map": questions keyed by name; "list": a list of questions; "single": one question under
    # `question`; "row": the body is one question (a row of a list of rows)
    container: str
    types: dict[str, str | None]  # type as written → question kind (None: read, not linted)
    top_fields: frozenset[str]  # the body's documented fields
    question_fields: frozenset[str]  # a question's documented fields
    item_fields: dict[str, frozenset[str]]  # a list/map member's documented fields, by its key
    own_keys: frozenset[str]  # keys of a body or question only this shape uses (recognition)
    name_key: str = ""  # the question key holding its name (list shapes)
    text_key: str = "instructions"  # the question key holding its text
    type_key: str = "type"  # the question key holding its type ("" : typeless, `default_kind`)
    # per question kind, where its options are: (key, the member key holding each option's
    # value; "" for a bare value)
    options: tuple[tuple[str, str, str], ...] = ()  # (kind, key, member)
    required: frozenset[str] = frozenset()  # keys every question (or row) must have
    body_required: frozenset[str] = frozenset()  # keys the body must have
    default_kind: str = ""  # the type of a typeless question
    levels: tuple[str, str] = ("", "")  # (min key, max key): a score's levels as a range

    def members(self, kind: str | None) -> list[tuple[str, str]]:
        """(list key, member key) of a question kind's options."""
        return [(key, member) for k, key, member in self.options if k == kind]


SYSTEMONE = RequestShape(
    "systemone",
    "map",
    {"choice": "choice", "score": "score", "noul": "binary", "box": None},
    frozenset({"model", "state", "questions", "images", "files", "chat_template_kwargs"}),
    frozenset({"type", "instructions", "criteria"}),
    {"criteria": frozenset({"true", "false"})},  # a noul's criteria
    frozenset({"state", "criteria", "noul", "box"}),
)
OPENAI_DECISIONS = RequestShape(
    "openai-decisions",
    "list",
    {"choice": "choice", "score": "score", "predicate": "binary"},
    frozenset({"model", "input", "questions", "safety_identifier"}),
    frozenset({"type", "name", "instructions", "choices", "levels"}),
    {"choices": frozenset({"value", "description"}), "levels": frozenset({"label", "description"})},
    frozenset({"safety_identifier", "name", "instructions", "choices", "predicate"}),
    name_key="name",
    options=(("choice", "choices", "value"), ("score", "levels", "label")),
)
SGLANG_DECISIONS = RequestShape(
    "sglang-decisions",
    "list",
    {"choice": "choice", "score": "score", "yes_no": "binary"},
    frozenset(
        {
            "input",
            "questions",
            "temperature",
            "chat_template_kwargs",
            "prompt_format_version",
            "return_prompt_token_ids",
            "model",
            "images",
        }
    ),
    frozenset({"id", "type", "question", "options", "levels", "yes", "no"}),
    {"options": frozenset({"name", "description"})},
    frozenset(
        {
            "temperature",
            "chat_template_kwargs",
            "prompt_format_version",
            "return_prompt_token_ids",
            "id",
            "question",
            "options",
            "yes",
            "no",
            "yes_no",
        }
    ),
    name_key="id",
    text_key="question",
    options=(("choice", "options", "name"), ("score", "levels", "")),
)

# --------------------------------------------------------------------------- dialects
# Each open engine's own way of writing the same questions: rows of the same table, recognised
# only by keys no documented shape uses (`required`), never by a guess.

DIALECTS: tuple[RequestShape, ...] = (
    # `{"questions": [{"kind": "choice", "id", "instructions", "candidates": [{"id", "description"}]}]}`
    RequestShape(
        "kind-candidates",
        "list",
        {"choice": "choice", "score": "score", "boolean": "binary", "yes_no": "binary", "noul": "binary"},
        frozenset({"model", "input", "state", "questions"}),
        frozenset({"kind", "id", "instructions", "candidates", "levels"}),
        {"candidates": frozenset({"id", "description"})},
        frozenset({"kind", "candidates"}),
        name_key="id",
        type_key="kind",
        options=(("choice", "candidates", "id"), ("score", "levels", "")),
        required=frozenset({"kind", "id", "instructions"}),
    ),
    # `{"questions": [{"id", "type": "boolean" | "choice" | "score", "prompt", "options": ["ship",
    # …], "min", "max"}]}`: bare option strings, a score's levels a range
    RequestShape(
        "prompt-options",
        "list",
        {"choice": "choice", "score": "score", "boolean": "binary", "yes_no": "binary"},
        frozenset({"model", "input", "state", "questions"}),
        frozenset({"id", "type", "prompt", "options", "min", "max"}),
        {},
        frozenset({"prompt"}),
        name_key="id",
        text_key="prompt",
        options=(("choice", "options", ""), ("score", "options", "")),
        required=frozenset({"prompt"}),
        levels=("min", "max"),
    ),
    # `{"input": {"text": …}, "questions": [{"id", "instruction", "options": [{"id",
    # "description"}]}]}`: typeless questions, each a choice
    RequestShape(
        "input-instruction",
        "list",
        {"choice": "choice", "score": "score", "yes_no": "binary", "boolean": "binary"},
        frozenset({"model", "input", "questions"}),
        frozenset({"id", "type", "instruction", "options"}),
        {"options": frozenset({"id", "description"})},
        frozenset({"instruction"}),
        name_key="id",
        text_key="instruction",
        type_key="",
        options=(("choice", "options", "id"),),
        required=frozenset({"instruction", "options"}),
        default_kind="choice",
    ),
    # `{"question": {"type", "instructions", "criteria"}}`: one System One question per body
    RequestShape(
        "single-question",
        "single",
        dict(SYSTEMONE.types),
        frozenset({"model", "state", "question", "images"}),
        SYSTEMONE.question_fields,
        SYSTEMONE.item_fields,
        frozenset({"question"}),
        body_required=frozenset({"question"}),
    ),
    # a list of `{"state", "question", "options", "expected_index"}` rows: each row one choice
    RequestShape(
        "state-question-rows",
        "row",
        {"choice": "choice"},
        frozenset({"state", "question", "options", "expected_index", "id"}),
        frozenset({"state", "question", "options", "expected_index", "id"}),
        {},
        frozenset({"expected_index"}),
        text_key="question",
        type_key="",
        options=(("choice", "options", ""),),
        body_required=frozenset({"state", "question", "options"}),
        default_kind="choice",
    ),
)
SHAPES: dict[str, RequestShape] = {
    s.name: s for s in (SYSTEMONE, OPENAI_DECISIONS, SGLANG_DECISIONS, *DIALECTS)
}


@dataclass(frozen=True)
class LocatedRequest:
    """One decision request: where its body is and which shape it is written in."""

    pointer: str  # the body (for a promptfoo provider: its `config`)
    shape: str
    source: str = "body"  # "body" | "promptfoo": a config, whose other keys are no request fields
    label: str = ""  # what field paths start with ("provider openai:decisions:gpt-6-luna")


# --------------------------------------------------------------------------- recognition


def _question_types(questions, type_key: str = "type", default: str = "") -> list[str] | None:
    """Every question's type, or None when a question is no object with a string type."""
    values = questions.values() if isinstance(questions, dict) else questions
    if not isinstance(values, (list, type({}.values()))):
        return None
    types = [(q.get(type_key) if type_key else default) if isinstance(q, dict) else None for q in values]
    return types if types and all(isinstance(t, str) and t for t in types) else None  # type: ignore[return-value]


def request_shape(node: Any) -> str | None:
    """The shape (or dialect) of a decision request body, or None when the node is none."""
    if not isinstance(node, dict):
        return None
    questions = node.get("questions")
    if isinstance(questions, dict):
        types = _question_types(questions)
        if types is None or not set(types) <= SYSTEMONE.types.keys():
            return None
        others = set(node) - {"questions"}
        # A System One body, with or without `state`/`model` (`{"image": …, "questions": …}`);
        # an RLCD preset's questions map sits beside `text` (and no state or model)
        if "text" not in node or others & {"state", "model"}:
            return SYSTEMONE.name
        return None
    if isinstance(questions, list):
        candidates = []
        for shape in SHAPES.values():
            if shape.container != "list":
                continue
            types = _question_types(questions, shape.type_key, shape.default_kind)
            if types is None or not set(types) <= shape.types.keys():
                continue
            if shape.required and not all(
                shape.required <= q.keys() for q in questions if isinstance(q, dict)
            ):
                continue
            candidates.append(shape)
        if len(candidates) < 2:
            return candidates[0].name if candidates else None
        keys = set(node).union(*(q.keys() for q in questions if isinstance(q, dict)))
        keys |= {q.get("type") for q in questions if isinstance(q.get("type"), str)}
        return max(candidates, key=lambda s: len(keys & s.own_keys)).name  # (a tie: the first, OpenAI)
    for shape in DIALECTS:  # one question per body: the body itself, or under `question`
        if shape.container not in ("single", "row") or not shape.body_required <= node.keys():
            continue
        if shape.container == "single":
            question = node.get("question")
            if (
                isinstance(question, dict)
                and isinstance(question.get("type"), str)
                and question["type"] in shape.types
                and set(node) <= shape.top_fields
            ):
                return shape.name
        elif (
            isinstance(node.get("question"), str)
            and isinstance(node.get("options"), list)
            and set(node) <= shape.top_fields
        ):
            return shape.name
    return None


def _promptfoo_bodies(node: dict) -> Iterator[tuple[tuple, str, str]]:
    config = node.get("config")
    if (
        isinstance(config, dict)
        and _question_types(config.get("questions")) is not None
        and isinstance(config["questions"], list)
    ):
        yield ("config",), OPENAI_DECISIONS.name, f"provider {node['id']}"


def _bodies(node: dict) -> Iterator[tuple[tuple, str, str]]:
    shape = request_shape(node)
    if shape is not None:
        yield (), shape, ""


@dataclass(frozen=True)
class Container:
    """One place decision requests sit: a test on the node and the bodies it holds (relative
    path, shape, label)."""

    kind: str
    source: str
    test: Callable[[dict], bool]
    bodies: Callable[[dict], Iterator[tuple[tuple, str, str]]]


CONTAINERS: tuple[Container, ...] = (
    # promptfoo: providers[] entry `{"id": "openai:decisions:<model>", "config": {"questions": [...]}}`
    Container(
        "promptfoo-openai-decisions",
        "promptfoo",
        lambda n: isinstance(n.get("id"), str) and n["id"].startswith("openai:decisions"),
        _promptfoo_bodies,
    ),
    # a request body, anywhere: a file that is one, a list of them, a config that holds them
    Container("decision-request", "body", lambda n: "questions" in n or "question" in n, _bodies),
)


def locate_requests(data: Any) -> list[LocatedRequest]:
    """Every decision request in the document, in document order (none inside another)."""
    found: list[LocatedRequest] = []

    def walk(node, pointer: str, depth: int) -> None:
        if depth > MAX_WALK_DEPTH:
            return
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{pointer}/{index}", depth + 1)
            return
        if not isinstance(node, dict):
            return
        for container in CONTAINERS:
            if container.test(node):
                hits = list(container.bodies(node))
                for path, shape, label in hits:
                    at = pointer + "".join(f"/{escape_token(str(step))}" for step in path)
                    found.append(LocatedRequest(at, shape, container.source, label))
                if hits:
                    return  # (a body's questions are no bodies of their own)
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                walk(value, f"{pointer}/{escape_token(str(key))}", depth + 1)

    walk(data, "", 0)
    return found


# --------------------------------------------------------------------------- sites


@dataclass
class Question:
    """One question as read from a body, before it becomes a Site."""

    pointer: str
    name: str
    type: str
    kind: str | None
    text: object
    options: list
    option_pointers: list[str]
    details: list
    keyed: bool  # whether the question is a map member (its span is its key's)
    option_keys: bool = False  # whether the options are map keys (a choice's criteria)


def _scalar(value) -> object:
    """An option as rules read it: a string, number, boolean or null as written; an object or
    array (a structured level) as its compact JSON text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def _systemone_questions(body: dict, pointer: str) -> Iterator[Question]:
    for name, spec in body["questions"].items():
        at = f"{pointer}/questions/{escape_token(name)}"
        kind = SYSTEMONE.types.get(spec["type"])
        criteria = spec.get("criteria")
        options: list = []
        pointers: list[str] = []
        details: list = []
        keys = False
        if kind == "choice" and isinstance(criteria, dict):
            options = list(criteria)
            pointers = [f"{at}/criteria/{escape_token(k)}" for k in criteria]
            details, keys = list(criteria.values()), True
        elif kind == "score" and isinstance(criteria, list):
            options = [_scalar(level) for level in criteria]
            pointers = [f"{at}/criteria/{i}" for i in range(len(criteria))]
            details = list(criteria)
        elif kind == "binary":
            given = criteria if isinstance(criteria, dict) else {}
            options = ["true", "false"]
            pointers = [f"{at}/criteria/{k}" if k in given else f"{at}/type" for k in options]
            details = [given.get("true"), given.get("false")]
        yield Question(
            at,
            str(name),
            spec["type"],
            kind,
            spec.get("instructions"),
            options,
            pointers,
            details,
            True,
            keys,
        )


def _list_questions(shape: RequestShape, body: dict, pointer: str) -> Iterator[Question]:
    if shape.container == "list":
        specs = [(f"{pointer}/questions/{index}", spec) for index, spec in enumerate(body["questions"])]
    elif shape.container == "single":
        specs = [(f"{pointer}/question", body["question"])]
    else:  # "row": the body is the question
        specs = [(pointer, body)]
    for index, (at, spec) in enumerate(specs):
        written = spec.get(shape.type_key) if shape.type_key else shape.default_kind
        kind = shape.types.get(written)
        named = spec.get(shape.name_key) if shape.name_key else None
        name = named if isinstance(named, str) and named else f"#{index}"
        if shape.container == "single":
            name = "question"
        elif shape.container == "row":
            name = f"row {pointer.rsplit('/', 1)[-1] or 0}"
        options: list = []
        pointers: list[str] = []
        details: list = []
        keyed = False
        option_keys = False
        if shape.container == "single":  # a System One question under `question`
            for question in _systemone_questions({"questions": {"question": spec}}, pointer):
                question.pointer = at
                question.option_pointers = [
                    p.replace(f"{pointer}/questions/question", at, 1) for p in question.option_pointers
                ]
                question.keyed = False
                yield question
            continue
        for key, member in shape.members(kind):
            items = spec.get(key)
            if not isinstance(items, list):
                continue
            for i, item in enumerate(items):
                if member and isinstance(item, dict):
                    options.append(_scalar(item.get(member)))
                    pointers.append(f"{at}/{key}/{i}/{member}" if member in item else f"{at}/{key}/{i}")
                    details.append(item.get("description"))
                else:
                    options.append(_scalar(item))
                    pointers.append(f"{at}/{key}/{i}")
                    details.append(item)
        low, high = shape.levels
        if (
            kind == "score"
            and not options
            and low
            and isinstance(spec.get(low), int)
            and isinstance(spec.get(high), int)
        ):
            if 0 <= spec[high] - spec[low] <= 100:
                options = [str(level) for level in range(spec[low], spec[high] + 1)]
                pointers = [f"{at}/{low}"] * len(options)
                details = [None] * len(options)
        if kind == "binary":
            if shape is SGLANG_DECISIONS:
                options = ["yes", "no"]
                pointers = [f"{at}/{w}" if w in spec else f"{at}/type" for w in ("yes", "no")]
                details = [spec.get("yes"), spec.get("no")]
            else:
                options = [True, False] if shape is OPENAI_DECISIONS else ["true", "false"]
                where = f"{at}/{shape.type_key}" if shape.type_key else at
                pointers, details = [where, where], [None, None]
        yield Question(
            at,
            name,
            str(written),
            kind,
            spec.get(shape.text_key),
            options,
            pointers,
            details,
            keyed,
            option_keys,
        )


def request_questions(request: LocatedRequest, body: dict) -> list[Question]:
    shape = SHAPES[request.shape]
    if shape.container == "map":
        return list(_systemone_questions(body, request.pointer))
    return list(_list_questions(shape, body, request.pointer))


def field_pointers(data: Any, request_pointer: str, question_pointer: str) -> list[str]:
    """The pointers a field finding on a question may point at: the body's top-level fields, the
    question's fields and those of its members (so their positions are kept)."""
    out = []
    body = resolve_pointer(data, request_pointer)
    if isinstance(body, dict):
        out += [f"{request_pointer}/{escape_token(str(k))}" for k in body]
    question = resolve_pointer(data, question_pointer)
    for key, value in question.items() if isinstance(question, dict) else ():
        at = f"{question_pointer}/{escape_token(str(key))}"
        out.append(at)
        members = (
            value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        )
        for index, member in members:
            out.append(f"{at}/{escape_token(str(index))}")
            if isinstance(member, dict):
                out += [f"{at}/{escape_token(str(index))}/{escape_token(str(k))}" for k in member]
    return out


def decision_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# --------------------------------------------------------------------------- System One bodies


def system_one_body(subject: Any, state: object = "") -> dict:
    """A System One body for any of the three shapes (a request dict), a decision site, or a
    schema's enum-like field (a Site without a question kind: one choice question)."""
    if hasattr(subject, "question_kind"):  # a Site (auditor.schema.sites)
        return {"state": state, "questions": {subject.question_name or subject.name: _site_question(subject)}}
    shape = request_shape(subject)
    if shape is None:
        raise ValueError("not a decision request in a shape pcdlint reads")
    if shape == SYSTEMONE.name:
        return {"state": subject.get("state", state), "questions": dict(subject["questions"])}
    located = LocatedRequest("", shape)
    questions = {}
    for question in request_questions(located, subject):
        if question.kind is not None:
            questions[question.name] = _question(
                question.kind, question.text, question.options, question.details
            )
    return {"state": subject.get("input", state), "questions": questions}


def option_key(value: object) -> str:
    """The key an option is sent as in a System One body: a string as it is, any other value as
    its JSON text (``true``, ``null``, ``1.5``), never a Python repr (``True``, ``None``)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _site_question(site) -> dict:
    if site.question_kind is None:  # a schema's field: its options, as a choice's labels
        return {
            "type": "choice",
            "instructions": site.description or site.name,
            "criteria": {option_key(o): None for o in site.options},
        }
    return _question(site.question_kind, site.question_text, site.options, site.option_details)


def _question(kind: str, text, options: list, details: list) -> dict:
    out: dict = {"type": {"choice": "choice", "score": "score", "binary": "noul"}[kind]}
    if text is not None:
        out["instructions"] = text
    if kind == "choice":
        out["criteria"] = {option_key(o): d for o, d in zip(options, details)}
    elif kind == "score":
        out["criteria"] = list(details)
    elif any(d is not None for d in details):
        out["criteria"] = {k: d for k, d in zip(("true", "false"), details) if d is not None}
    return out


def undocumented_fields(shape_name: str, question_pointer: str, question: dict) -> list[tuple[str, str]]:
    """(pointer, name) of each field of one question, and of its members (a choice's `choices`
    or `options`, a noul's criteria), that its shape does not document."""
    shape = SHAPES[shape_name]
    out = [(f"{question_pointer}/{escape_token(k)}", k) for k in question if k not in shape.question_fields]
    for key, allowed in shape.item_fields.items():
        members = question.get(key)
        if shape is SYSTEMONE:  # a noul's criteria only: a choice's criteria keys are its options
            if question.get("type") == "noul" and isinstance(members, dict):
                out.extend(
                    (f"{question_pointer}/{key}/{escape_token(k)}", k) for k in members if k not in allowed
                )
            continue
        for i, member in enumerate(members if isinstance(members, list) else []):
            if isinstance(member, dict):
                out.extend(
                    (f"{question_pointer}/{key}/{i}/{escape_token(k)}", k) for k in member if k not in allowed
                )
    return out


def undocumented_body_fields(shape_name: str, body: dict, pointer: str) -> list[tuple[str, str]]:
    """(pointer, name) of each top-level field of a body its shape does not document."""
    shape = SHAPES[shape_name]
    return [(f"{pointer}/{escape_token(k)}", k) for k in body if k not in shape.top_fields]
