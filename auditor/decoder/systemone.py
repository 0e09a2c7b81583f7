"""System One decision requests answered by a server, and what its answers say.

A System One body is ``{"model"?, "state", "questions": {id: {"type", "instructions",
"criteria"}}}`` with ``type`` one of ``choice`` (criteria: an object of option key ->
description or null), ``score`` (criteria: a list of levels) and ``noul`` (a yes/no question;
criteria ``{"true": …, "false": …}`` optional). The response carries ``answers`` per question
id: ``choice`` and ``probabilities`` (key -> p) for a choice, ``score`` (the expected level) and
``probabilities`` (level index as a string -> p) for a score, ``noul`` (p of true) for a noul;
``x_label_mass`` or ``label_mass`` where the server reports how much probability its labels held
(vLLM reports it beside the answers, in ``diagnostics.<id>.label_mass``).

``SystemOneBackend`` POSTs bodies to ``base_url + route`` through the one HTTP client
(``auditor.decoder.http``); ``Llm2jevEngine`` (``llm2jev.py``) answers the same bodies in this
process. Both have ``decide(body) -> response body`` and raise ``DecisionRefused`` when the
service refuses the request (a 4xx with its message), ``DecoderError`` when it cannot be reached.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from auditor.decoder.errors import DecoderError

DEFAULT_ROUTE = "/v1/systemone"
QUESTION_KINDS = ("choice", "score", "noul")
# 408 and 429 are "try again", not "this request is wrong"; the client retries them
_NOT_REFUSALS = {408, 429}


class DecisionRefused(Exception):
    """The service refused this request: its HTTP status and its own message (short)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass
class QuestionAnswer:
    """One question's answer, read off a response, probabilities aligned with the request's keys."""

    name: str
    kind: str
    keys: list[str]
    probabilities: list[float] | None
    answer: str | None
    score: float | None = None
    noul: float | None = None
    label_mass: float | None = None

    def probability_of(self, key: str) -> float | None:
        if self.probabilities is None or key not in self.keys:
            return None
        return self.probabilities[self.keys.index(key)]

    def to_dict(self) -> dict:
        return {
            "question": self.name,
            "kind": self.kind,
            "answer": self.answer,
            "probabilities": None if self.probabilities is None else dict(zip(self.keys, self.probabilities)),
            "score": self.score,
            "noul": self.noul,
            "label_mass": self.label_mass,
        }


def question_keys(question: dict) -> list[str]:
    """The answer keys of a question, in the order the request lists them."""
    kind, criteria = question.get("type"), question.get("criteria")
    if kind == "choice":
        return [str(key) for key in criteria] if isinstance(criteria, dict) else []
    if kind == "score":
        return [str(i) for i in range(len(criteria))] if isinstance(criteria, list) else []
    return ["true", "false"]


def check_body(body: Any) -> dict:
    """A System One body's outline, or DecoderError naming what is missing (exit 2, no request sent)."""
    if not isinstance(body, dict) or not isinstance(body.get("questions"), dict):
        raise DecoderError('a System One request is an object with a "questions" object (id -> question)')
    for qid, question in body["questions"].items():
        if not isinstance(question, dict) or question.get("type") not in QUESTION_KINDS:
            raise DecoderError(f"question {qid!r}: type must be one of {', '.join(QUESTION_KINDS)}")
    return body


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _probability(value: Any, where: str) -> float | None:
    """A probability from the response, or DecoderError naming the field when it is not one."""
    number = _number(value)
    if value is not None and (number is None or not 0.0 <= number <= 1.0 + 1e-9):
        shown = repr(value)[:40]
        raise DecoderError(f"the server's response: {where} is not a probability ({shown})")
    return number


def read_answers(body: dict, response: Any) -> list[QuestionAnswer]:
    """Every question of ``body`` answered in ``response``, in request order."""
    answers = response.get("answers") if isinstance(response, dict) else None
    if not isinstance(answers, dict):
        raise DecoderError('the server\'s response has no "answers" object')
    diagnostics = response.get("diagnostics")
    out = []
    for qid, question in body["questions"].items():
        got = answers.get(qid)
        if not isinstance(got, dict):
            raise DecoderError(f"the server's response has no answer for question {qid!r}")
        kind = question["type"]
        keys = question_keys(question)
        mass = _probability(got.get("x_label_mass", got.get("label_mass")), f"answers.{qid}.label_mass")
        read = diagnostics.get(qid) if isinstance(diagnostics, dict) else None
        if mass is None and isinstance(read, dict):
            mass = _probability(read.get("label_mass"), f"diagnostics.{qid}.label_mass")
        if kind == "noul":
            p_true = _probability(got.get("noul"), f"answers.{qid}.noul")
            probs = None if p_true is None else [p_true, 1.0 - p_true]
            chosen = None if p_true is None else ("true" if p_true >= 0.5 else "false")
            out.append(QuestionAnswer(qid, kind, keys, probs, chosen, noul=p_true, label_mass=mass))
            continue
        table = got.get("probabilities")
        probs = None
        if isinstance(table, dict) and all(key in table for key in keys):
            probs = [_probability(table[key], f"answers.{qid}.probabilities.{key}") or 0.0 for key in keys]
        if kind == "choice":
            chosen = got.get("choice") if isinstance(got.get("choice"), str) else None
            if chosen is None and probs is not None:
                chosen = keys[max(range(len(keys)), key=probs.__getitem__)]
            out.append(QuestionAnswer(qid, kind, keys, probs, chosen, label_mass=mass))
        else:
            chosen = None if probs is None else keys[max(range(len(keys)), key=probs.__getitem__)]
            out.append(
                QuestionAnswer(
                    qid, kind, keys, probs, chosen, score=_number(got.get("score")), label_mass=mass
                )
            )
    return out


class SystemOneBackend:
    """A served decision model: POST ``base_url + route`` with a System One body."""

    def __init__(
        self, client: Any, base_url: str, route: str = DEFAULT_ROUTE, model: str | None = None
    ) -> None:
        self.client = client
        self.base_url = base_url
        self.route = route if route.startswith("/") else "/" + route
        self.model = model

    def identity(self) -> dict:
        """Endpoint and model: what a cached answer depends on (never the key)."""
        return {
            "backend": "systemone",
            "endpoint": self.base_url.rstrip("/") + self.route,
            "model": self.model,
        }

    def decide(self, body: dict) -> dict:
        payload = dict(body)
        if self.model:
            payload["model"] = self.model
        return self._answer(lambda: self.client.post_json(self.route, payload))

    def _answer(self, post: Callable[[], Any]) -> dict:
        from auditor.decoder.http import HttpError

        try:
            response = post()
        except HttpError as exc:
            status = exc.status
            if status is not None and 400 <= status < 500 and status not in _NOT_REFUSALS:
                raise DecisionRefused(status, exc.server_message or str(exc)) from None
            raise DecoderError(str(exc)) from None
        if not isinstance(response, dict):
            raise DecoderError("the server's response is not a JSON object")
        return response

    def encoder(self, body: dict) -> Callable[[Any], bytes]:
        """A function of a state giving the bytes ``decide`` would send for ``body`` with that
        state: the rest of the request is encoded once, the state's JSON spliced in."""
        payload = dict(body)
        if self.model:
            payload["model"] = self.model
        mark = "\ue000pcdlint-state-" + secrets.token_hex(16) + "\ue000"
        payload["state"] = mark
        text = json.dumps(payload, allow_nan=False, ensure_ascii=False)
        head, quoted, tail = text.partition(json.dumps(mark, ensure_ascii=False))
        assert quoted, "the state's place in the request"
        before, after = head.encode("utf-8"), tail.encode("utf-8")

        def encode(state: Any) -> bytes:
            try:
                return before + json.dumps(state, allow_nan=False, ensure_ascii=False).encode("utf-8") + after
            except (TypeError, ValueError) as exc:  # NaN or Infinity in a row's state
                raise DecoderError(f"the row's state is not JSON ({exc})") from None

        return encode

    def decide_content(self, content: bytes) -> dict:
        """``decide`` for a body already encoded (``encoder``)."""
        return self._answer(lambda: self.client.post_content(self.route, content))

    def redact(self, text: str) -> str:
        """``text`` with the API key masked (a message quoting a server's answer may carry it)."""
        redact = getattr(self.client, "redact", None)
        return redact(text) if redact is not None else text

    @property
    def stats(self) -> dict:
        return dict(getattr(self.client, "stats", {}) or {})
