"""Server answers checked against the shape their API documents, before anything reads them.

A server's JSON is untrusted input: a list where an object belongs, a string where a number
belongs, a NaN, ``-inf`` or positive log-prob, a 5,000-element list where one was asked for, or
indexes of mixed types must each end in one ``AnswerError`` line that names the field
(``choices[1].logprobs.token_logprobs[4]``) and quotes at most a short excerpt of the value,
never in a traceback or in a verdict computed from it.

The small checkers (``obj``, ``arr``, ``text``, ``integer``, ``logprob``) are shared by every
answer shape; ``completion_choices`` and ``model_ids`` read the OpenAI legacy completions and
model-list answers (https://platform.openai.com/docs/api-reference/completions/object).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from auditor.decoder.errors import DecoderError
from auditor.shown import shorten

MAX_LIST = 1_000_000  # elements in any one list of an answer
MAX_TEXT = 1_000_000  # characters in any one string of an answer
LOGPROB_SLACK = 1e-6  # float rounding above 0 that is still log(1)


class AnswerError(DecoderError):
    """The server's answer does not have the documented shape; one line naming the field."""


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return shorten(text, 40)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def fail(where: str, what: str, context: str) -> AnswerError:
    return AnswerError(f"{context}: {where} {what}")


def obj(value: object, where: str, context: str) -> dict:
    if not isinstance(value, dict):
        raise fail(where, f"is {_kind(value)}; expected an object", context)
    return value


def arr(
    value: object, where: str, context: str, *, length: int | None = None, max_len: int = MAX_LIST
) -> list:
    if not isinstance(value, list):
        raise fail(where, f"is {_kind(value)}; expected a list", context)
    if length is not None and len(value) != length:
        raise fail(where, f"has {len(value)} elements; expected {length}", context)
    if len(value) > max_len:
        raise fail(where, f"has {len(value)} elements; at most {max_len} are read", context)
    return value


def text(value: object, where: str, context: str, *, max_chars: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise fail(where, f"is {_kind(value)} {_shown(value)}; expected a string", context)
    if len(value) > max_chars:
        raise fail(where, f"is a string of {len(value)} characters; at most {max_chars} are read", context)
    return value


def integer(value: object, where: str, context: str, lo: int, hi: int) -> int:
    if type(value) is not int:
        raise fail(where, f"is {_kind(value)} {_shown(value)}; expected an integer", context)
    if not lo <= value <= hi:
        raise fail(where, f"is {_shown(value)}; expected an integer from {lo} to {hi}", context)
    return value


def logprob(value: object, where: str, context: str) -> float:
    """A log-probability: a finite number ≤ 0 (booleans and strings refused)."""
    if type(value) not in (int, float):
        raise fail(where, f"is {_kind(value)} {_shown(value)}; expected a log-prob (a number ≤ 0)", context)
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise fail(where, f"is {_shown(number)}; expected a finite log-prob", context)
    if number > LOGPROB_SLACK:
        raise fail(where, f"is {_shown(number)}; a log-prob is ≤ 0", context)
    return min(number, 0.0)


@dataclass
class Choice:
    """One completion choice's echo: its tokens and their log-probs (None where the server gives null)."""

    text: str
    tokens: list[str]
    token_logprobs: list[float | None]


def model_ids(answer: object, context: str) -> tuple[list[str], dict[str, int]]:
    """The ids of a ``GET /models`` answer (``{"data": [{"id": str, …}, …]}``) and, where an entry
    gives one (vLLM, SGLang), its ``max_model_len``."""
    listing = obj(answer, "the answer", context)
    data = arr(listing.get("data", []), "data", context, max_len=10_000)
    ids, limits = [], {}
    for i, entry in enumerate(data):
        entry = obj(entry, f"data[{i}]", context)
        ids.append(text(entry.get("id"), f"data[{i}].id", context, max_chars=1000))
        if entry.get("max_model_len") is not None:
            limits[ids[-1]] = integer(entry["max_model_len"], f"data[{i}].max_model_len", context, 1, 1 << 31)
    return ids, limits


def completion_choices(answer: object, count: int, context: str) -> list[Choice] | None:
    """The choices of a ``POST /completions`` answer in prompt order, echo log-probs checked.

    None when the answer holds another number of choices than ``count`` prompts (a server that
    took a prompt list as one prompt). Indexes are all integers forming 0..count-1, or all
    absent (list order).
    """
    choices = arr(obj(answer, "the answer", context).get("choices"), "choices", context)
    if len(choices) != count:
        return None
    given: list[int | None] = []
    for i, choice in enumerate(choices):
        index = obj(choice, f"choices[{i}]", context).get("index")
        given.append(None if index is None else integer(index, f"choices[{i}].index", context, 0, count - 1))
    if any(index is None for index in given) and not all(index is None for index in given):
        raise fail("choices[*].index", "is given for some choices and not others", context)
    indexes = [i if index is None else index for i, index in enumerate(given)]
    if sorted(indexes) != list(range(count)):
        raise fail(
            "choices[*].index",
            f"repeats an index ({sorted(indexes)[:8]}); expected 0 to {count - 1}",
            context,
        )
    ordered: list[Choice | None] = [None] * count
    for i, (index, choice) in enumerate(zip(indexes, choices)):
        ordered[index] = _choice(choice, f"choices[{i}]", context)
    return [choice for choice in ordered if choice is not None]


def _choice(choice: dict, where: str, context: str) -> Choice:
    said = choice.get("text")
    said = "" if said is None else text(said, f"{where}.text", context)
    logprobs = choice.get("logprobs")
    if logprobs is None:
        return Choice(said, [], [])
    logprobs = obj(logprobs, f"{where}.logprobs", context)
    tokens = arr(logprobs.get("tokens"), f"{where}.logprobs.tokens", context)
    values = arr(
        logprobs.get("token_logprobs"), f"{where}.logprobs.token_logprobs", context, length=len(tokens)
    )
    return Choice(
        said,
        [
            text(token, f"{where}.logprobs.tokens[{i}]", context, max_chars=10_000)
            for i, token in enumerate(tokens)
        ],
        [
            None if value is None else logprob(value, f"{where}.logprobs.token_logprobs[{i}]", context)
            for i, value in enumerate(values)
        ],
    )
