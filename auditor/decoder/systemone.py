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
from typing import Any

from auditor.decoder.decision_answers import QuestionAnswer, read_checked
from auditor.decoder.decision_answers import question_keys as question_keys  # (re-exported)
from auditor.decoder.errors import DecoderError, ServerUnreachable
from auditor.redaction import masked_by

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


def check_body(body: Any) -> dict:
    """A System One body's outline, or DecoderError naming what is missing (exit 2, no request sent)."""
    if not isinstance(body, dict) or not isinstance(body.get("questions"), dict):
        raise DecoderError('a System One request is an object with a "questions" object (id -> question)')
    for qid, question in body["questions"].items():
        if not isinstance(question, dict) or question.get("type") not in QUESTION_KINDS:
            raise DecoderError(f"question {qid!r}: type must be one of {', '.join(QUESTION_KINDS)}")
    return body


def read_answers(body: dict, response: Any) -> list[QuestionAnswer]:
    """Every question of ``body`` answered in ``response``, in request order, each checked
    against the request (``auditor.decoder.decision_answers``): an answer in another shape is an
    ``AnswerError`` naming the question and the field, never a verdict."""
    return read_checked(body, response)


class SystemOneBackend:
    """A served decision model: POST ``base_url + route`` with a System One body."""

    def __init__(
        self, client: Any, base_url: str, route: str = DEFAULT_ROUTE, model: str | None = None
    ) -> None:
        self.client = client
        self.base_url = base_url
        from auditor.decoder.decision_request import check_route

        self.route = check_route(route)  # a bounded URL path (a 10 kB or odd route: one line)
        self.model = model

    def identity(self) -> dict:
        """Endpoint and model: what a cached answer depends on (never the key)."""
        return {
            "backend": "systemone",
            "endpoint": self.base_url.rstrip("/") + self.route,
            "model": self.model,
        }

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close is not None:
            close()

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
            if isinstance(exc, ServerUnreachable):
                raise ServerUnreachable(str(exc)) from None
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
        return masked_by(self.client, text)

    @property
    def stats(self) -> dict:
        return dict(getattr(self.client, "stats", {}) or {})
