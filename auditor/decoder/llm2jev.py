"""llm2jev's decision service computed in this process, on pcdlint's decoder model.

llm2jev (PyPI, read at 0.6.1: ``llm2jev/prompt.py``, ``engine.py``, ``scoring.py``) answers a
System One request with one prefill per question and one label token read out. How it renders
a question and finds its labels is its rendering family's, ``auditor.pcd.readouts.llm2jev``: the
linter's PCD106 renders through the same functions, so this module's parity with a live llm2jev
server covers the linter's renderer too. Here the chat is rendered by the model tokenizer's own
``apply_chat_template`` (as llm2jev does), and:

- the distribution is a softmax over the requested labels' log-probabilities at the last
  prompt position, divided by the temperature; a choice answers the most likely key, a score
  the expected level, a noul the probability of "true" (Yes is shown as A, No as B).

``Llm2jevEngine.decide(body)`` returns the body the server would send (``answers``, ``usage``)
or raises ``DecisionRefused`` with the status and message the server refuses with (422).
This is the parity anchor for ``verify --backend systemone`` against a served llm2jev.
llm2jev's prose (its instruction paragraph, default question and prefill) is read from the
installed llm2jev package; limits and status come from engines.toml.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from auditor.decoder.errors import DecoderError
from auditor.decoder.systemone import DecisionRefused
from auditor.pcd.engines.table import ENGINE_ROWS, EngineTableError, Limit
from auditor.pcd.readouts import RenderError
from auditor.pcd.readouts import llm2jev as family
from auditor.softmax import softmax

ENGINE = ENGINE_ROWS["llm2jev"]  # its limits and refusal status (engines.toml)


def _bounded(limit: Limit | None, column: str) -> Limit:
    if limit is None or limit.high is None:
        raise EngineTableError(f"engines.toml: the llm2jev row needs a bounded {column} limit")
    return limit


OPTIONS = _bounded(ENGINE.options, "options")
LEVELS = _bounded(ENGINE.levels, "levels")
QUESTIONS = _bounded(ENGINE.questions, "questions")
MAX_LABELS: int = family.needed(ENGINE)  # the service needs this many labels to start
REFUSAL_STATUS = ENGINE.status or 422


def prompt_texts() -> family.Texts:
    """The installed llm2jev's texts, or DecoderError saying how to get them."""
    texts = family.texts()
    if not texts.installed:
        raise DecoderError(
            "the in-process llm2jev reference renders llm2jev's prompt with its own instruction text, read "
            f"from the llm2jev package: {family.INSTALL}"
        )
    return texts


def question_options(question: Any) -> tuple[list[str], list[str]]:
    """(answer keys, option texts shown to the model); the engine table's limits refuse (422)."""
    if not isinstance(question, dict):
        raise DecisionRefused(REFUSAL_STATUS, "a question is an object with a type and criteria")
    kind, criteria = question.get("type"), question.get("criteria")
    if kind == "choice" and (not isinstance(criteria, dict) or not OPTIONS.admits(len(criteria))):
        raise DecisionRefused(REFUSAL_STATUS, f"choice needs {OPTIONS.phrase()} criteria")
    if kind == "score" and (not isinstance(criteria, list) or not LEVELS.admits(len(criteria))):
        raise DecisionRefused(REFUSAL_STATUS, f"score needs {LEVELS.phrase()} levels")
    try:
        return family.option_texts(question)
    except RenderError as error:
        raise DecisionRefused(REFUSAL_STATUS, str(error)) from None


def transformers_chat(tokenizer: Any) -> Callable[[list[dict]], str]:
    """The chat as llm2jev renders it: the tokenizer's template, generation prompt on, thinking off."""

    def render_chat(messages: list[dict]) -> str:
        return tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
        )

    return render_chat


def render(
    tokenizer: Any, state: Any, questions: dict, labels: list[str], texts: family.Texts
) -> dict[str, tuple[str, list[str]]]:
    """Per question id: (the whole prompt text, ending with the prefill; the answer keys)."""
    if any(isinstance(message.get("content"), list) for message in family.chat_state(state) or ()):
        raise DecisionRefused(
            REFUSAL_STATUS,
            "content parts (images, audio) in the state: the in-process llm2jev reference takes text messages only",
        )
    for question in questions.values():
        question_options(question)
    try:
        return family.render_request(transformers_chat(tokenizer), state, questions, labels, texts)
    except RenderError as error:
        raise DecisionRefused(REFUSAL_STATUS, str(error)) from None


def label_probs(logprobs: list[float], temperature: float = 1.0) -> list[float]:
    """The labels' probabilities, as llm2jev computes them (a DecoderError where no label
    scored a finite log-probability)."""
    if not math.isfinite(max(logprobs)):
        raise DecoderError("no finite label log-probability")
    return softmax(logprobs, temperature)


def confidence(probs: list[float]) -> float:
    """1 - H(p) / log K, clamped to [0, 1]."""
    entropy = -math.fsum(p * math.log(p) for p in probs if p > 0)
    return min(1.0, max(0.0, 1 - entropy / math.log(len(probs))))


def answer(question: dict, keys: list[str], probs: list[float]) -> dict:
    """One question's answer object, as the System One response carries it."""
    dist = dict(zip(keys, probs, strict=True))
    kind = question["type"]
    if kind == "noul":
        return {"type": kind, "noul": dist["true"]}
    if kind == "score":
        return {
            "type": kind,
            "score": math.fsum(i * p for i, p in enumerate(probs)),
            "probabilities": dist,
            "legend": {str(i): level for i, level in enumerate(question["criteria"])},
            "confidence": confidence(probs),
        }
    return {
        "type": kind,
        "choice": max(dist, key=dist.__getitem__),
        "probabilities": dist,
        "confidence": confidence(probs),
    }


class Llm2jevEngine:
    """llm2jev's service on a ``LoadedModel`` (decoder/model.py): the same prompts, labels and readout."""

    name = "llm2jev"

    def __init__(self, loaded: Any, temperature: float = 1.0) -> None:
        self.loaded = loaded
        self.temperature = temperature
        self.texts = prompt_texts()
        # labels are found once, after a real prompt ending, as the service does at start-up
        probe = family.probe(transformers_chat(loaded.tokenizer), self.texts)
        self.labels, self.label_ids = family.find_labels(loaded.linter_tokenizer, probe, MAX_LABELS)
        if len(self.labels) < MAX_LABELS:
            raise DecoderError(
                f"llm2jev refuses this tokenizer: only {len(self.labels)} single-token labels "
                f"after {self.texts.prefill!r}, it needs {MAX_LABELS}"
            )

    def identity(self) -> dict:
        from auditor.decoder.backends import model_identity

        return {**model_identity(self.loaded), "engine": self.name, "temperature": self.temperature}

    def close(self) -> None:
        """Nothing to release: the model goes with the engine."""

    def label_logprobs(self, text: str, count: int) -> list[float]:
        """log p(label) at the last position of ``text``, for the first ``count`` labels."""
        import torch

        ids = self.loaded.tokenizer.encode(text, add_special_tokens=False)
        inputs = torch.tensor([ids], device=self.loaded.device)
        with torch.no_grad():
            logits = self.loaded.model(input_ids=inputs).logits[0, -1].float().log_softmax(-1)
        return [float(logits[i]) for i in self.label_ids[:count]]

    def decide(self, body: dict) -> dict:
        """The response body for a System One request body (``answers``, ``usage``)."""
        if not isinstance(body, dict):
            raise DecisionRefused(REFUSAL_STATUS, "the request body is a JSON object")
        questions = body.get("questions") or {}
        if not isinstance(questions, dict) or not QUESTIONS.admits(len(questions)):
            count = len(questions) if isinstance(questions, dict) else 0
            raise DecisionRefused(REFUSAL_STATUS, f"{QUESTIONS.phrase()} questions, got {count}")
        prompts = render(self.loaded.tokenizer, body.get("state", ""), questions, self.labels, self.texts)
        answers = {}
        tokens = 0
        for qid, (text, keys) in prompts.items():
            row = self.label_logprobs(text, len(keys))
            tokens += len(self.loaded.tokenizer.encode(text, add_special_tokens=False))
            answers[qid] = answer(questions[qid], keys, label_probs(row, self.temperature))
        return {
            "model": body.get("model") or self.loaded.name,
            "answers": answers,
            "usage": {"input_tokens": tokens, "output_tokens": len(prompts)},
        }
