"""llm2jev's decision service computed in this process, on pcdlint's decoder model.

llm2jev (PyPI, read at 0.6.1: ``llm2jev/prompt.py``, ``engine.py``, ``scoring.py``) answers a
System One request with one prefill per question and one label token read out:

- the chat is the state (a list of ``{role, content}`` messages stays a chat; anything else
  becomes one user message, objects and arrays flattened to indented text), then one user turn
  holding llm2jev's fixed instruction and the question with ALL its options labelled ``A. …``;
  the model's chat template renders it (generation prompt on, thinking off) and the assistant
  turn is opened with ``Answer:``;
- the labels are A–Z then AA, AB, … kept only where ``context + " " + code`` adds one distinct
  token that decodes to the code, right after a real prompt ending; 255 of them must exist or
  the service does not start;
- the distribution is a softmax over the requested labels' log-probabilities at the last
  prompt position, divided by the temperature; a choice answers the most likely key, a score
  the expected level, a noul the probability of "true" (Yes is shown as A, No as B).

``Llm2jevEngine.decide(body)`` returns the body the server would send (``answers``, ``usage``)
or raises ``DecisionRefused`` with the status and message the server refuses with (422).
This is the parity anchor for ``verify --backend systemone`` against a served llm2jev. llm2jev's
prose (its instruction paragraph, default question and prefill) is read from the installed
llm2jev package (``prompt_texts``), not copied here; limits and status come from engines.toml.
"""

from __future__ import annotations

import itertools
import math
import string
from dataclasses import dataclass
from typing import Any

from auditor.decoder.errors import DecoderError
from auditor.decoder.systemone import DecisionRefused
from auditor.pcd.engines.table import ENGINE_ROWS, EngineTableError, Limit

ENGINE = ENGINE_ROWS["llm2jev"]  # its limits and refusal status (engines.toml)


def _bounded(limit: Limit | None, column: str) -> Limit:
    if limit is None or limit.high is None:
        raise EngineTableError(f"engines.toml: the llm2jev row needs a bounded {column} limit")
    return limit


OPTIONS = _bounded(ENGINE.options, "options")
LEVELS = _bounded(ENGINE.levels, "levels")
QUESTIONS = _bounded(ENGINE.questions, "questions")
MAX_LABELS: int = OPTIONS.high  # type: ignore[assignment]  # the service needs this many labels to start
REFUSAL_STATUS = ENGINE.status or 422
# Where the question goes while the chat template renders; split out again afterwards, so the
# text before it is byte-identical for every question of a request.
_SLOT = "PCDLINT_QUESTION_SLOT_5b7e0c"
TESTED_VERSION = "0.6.1"


@dataclass(frozen=True)
class PromptTexts:
    """llm2jev's own prose: read from the installed package, not copied into pcdlint."""

    instruction: str  # the paragraph the user turn opens with
    default_question: str  # the question line of a question without instructions
    prefill: str  # the assistant turn's opening, after which the label is read
    version: str


def prompt_texts() -> PromptTexts:
    """The texts of the installed llm2jev (``llm2jev.prompt``), or DecoderError saying how to get them."""
    try:
        from importlib.metadata import version

        from llm2jev import prompt
    except ImportError:
        raise DecoderError(
            "the in-process llm2jev reference renders llm2jev's prompt with its own instruction text, read "
            f"from the llm2jev package: pip install --no-deps llm2jev=={TESTED_VERSION}"
        ) from None
    return PromptTexts(prompt.INSTRUCTION, prompt.DEFAULT_QUESTION, prompt.ANSWER, version("llm2jev"))


def render_value(value: Any, indent: int = 0) -> str:
    """A state or criterion as llm2jev shows it: strings verbatim, objects and arrays as indented lines."""
    pad = "  " * indent
    if isinstance(value, str):
        if not indent:
            return value
        return "\n".join(pad + line for line in (value.splitlines() or [""]))
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            nested = isinstance(item, (dict, list)) or (isinstance(item, str) and "\n" in item)
            lines.append(
                f"{pad}{key}:\n{render_value(item, indent + 1)}" if nested else f"{pad}{key}: {item}"
            )
        return "\n".join(lines)
    if isinstance(value, list):
        lines = []
        for item in value:
            body = render_value(item, indent + 1)
            lines.append(f"{pad}-\n{body}" if "\n" in body else f"{pad}- {body.strip()}")
        return "\n".join(lines)
    return f"{pad}{value}"


def state_messages(state: Any) -> list[dict]:
    """The chat a state becomes: its own messages, or one user message with the state as text."""
    messages = state["messages"] if isinstance(state, dict) and set(state) == {"messages"} else state
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
        for message in messages:
            if isinstance(message.get("content"), list):
                raise DecisionRefused(
                    REFUSAL_STATUS,
                    "content parts (images, audio) in the state: the in-process "
                    "llm2jev reference takes text messages only",
                )
        return [dict(message) for message in messages]
    return [{"role": "user", "content": render_value(state)}]


def question_options(question: dict) -> tuple[list[str], list[str]]:
    """(answer keys, option texts shown to the model); the engine table's limits refuse (422)."""
    if not isinstance(question, dict):
        raise DecisionRefused(REFUSAL_STATUS, "a question is an object with a type and criteria")
    kind, criteria = question.get("type"), question.get("criteria")
    if kind == "noul":
        criteria = criteria or {}
        return ["true", "false"], [
            f"Yes: {criteria.get('true', 'yes')}",
            f"No: {criteria.get('false', 'no')}",
        ]
    if kind == "choice":
        if not isinstance(criteria, dict) or not OPTIONS.admits(len(criteria)):
            raise DecisionRefused(REFUSAL_STATUS, f"choice needs {OPTIONS.phrase()} criteria")
        return list(criteria), [
            key if text is None else f"{key}: {render_value(text)}" for key, text in criteria.items()
        ]
    if kind == "score":
        if not isinstance(criteria, list) or not LEVELS.admits(len(criteria)):
            raise DecisionRefused(REFUSAL_STATUS, f"score needs {LEVELS.phrase()} levels")
        return [str(i) for i in range(len(criteria))], [
            f"{i}: {render_value(level)}" for i, level in enumerate(criteria)
        ]
    raise DecisionRefused(REFUSAL_STATUS, f"unknown question type {kind!r}")


def _chat_halves(tokenizer: Any, state: Any, texts: PromptTexts) -> tuple[str, str]:
    """The rendered chat before and after the question slot."""
    messages = state_messages(state)
    ask = texts.instruction + "\n\n" + _SLOT
    options = {"tokenize": False, "add_generation_prompt": True, "enable_thinking": False}
    try:
        text = tokenizer.apply_chat_template([*messages, {"role": "user", "content": ask}], **options)
    except Exception:
        # templates that demand strict user/assistant turns: the ask joins the last user turn
        if not messages or messages[-1]["role"] != "user":
            raise
        last = {**messages[-1], "content": f"{messages[-1]['content']}\n\n{ask}"}
        text = tokenizer.apply_chat_template([*messages[:-1], last], **options)
    if text.count(_SLOT) != 1:
        raise DecisionRefused(REFUSAL_STATUS, "chat template dropped or duplicated the question slot")
    before, after = text.split(_SLOT)
    return before, after


def render(
    tokenizer: Any, state: Any, questions: dict, labels: list[str], texts: PromptTexts
) -> dict[str, tuple[str, list[str]]]:
    """Per question id: (the whole prompt text, ending with the prefill; the answer keys)."""
    before, after = _chat_halves(tokenizer, state, texts)
    prompts = {}
    for qid, question in questions.items():
        keys, option_texts = question_options(question)
        head = (
            render_value(question["instructions"])
            if question.get("instructions") is not None
            else texts.default_question
        )
        lines = "".join(f"{labels[i]}. {shown}\n" for i, shown in enumerate(option_texts)).rstrip()
        prompts[qid] = (f"{before}Question: {head}\nOptions:\n{lines}{after}{texts.prefill}", keys)
    return prompts


def find_labels(tokenizer: Any, context: str, n: int = MAX_LABELS) -> tuple[list[str], list[int]]:
    """Codes A..Z, AA.. that are ONE distinct token when written after ``context`` with a space."""
    base = tokenizer.encode(context, add_special_tokens=False)
    labels: list[str] = []
    ids: list[int] = []
    pairs = ("".join(p) for p in itertools.product(string.ascii_uppercase, repeat=2))
    for code in itertools.chain(string.ascii_uppercase, pairs):
        full = tokenizer.encode(context + " " + code, add_special_tokens=False)
        if (
            full[: len(base)] == base
            and len(full) == len(base) + 1
            and full[-1] not in ids
            and tokenizer.decode(full[-1:]).strip() == code
        ):
            labels.append(code)
            ids.append(full[-1])
            if len(labels) == n:
                break
    return labels, ids


def softmax(logprobs: list[float], temperature: float = 1.0) -> list[float]:
    peak = max(logprobs)
    if not math.isfinite(peak):
        raise DecoderError("no finite label log-probability")
    weights = [math.exp((x - peak) / temperature) for x in logprobs]
    total = math.fsum(weights)
    return [w / total for w in weights]


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
        tokenizer = loaded.tokenizer
        # labels are found once, after a real prompt ending, as the service does at start-up
        probe = render(tokenizer, "x", {"q": {"type": "noul"}}, ["A", "B"], self.texts)["q"][0]
        self.labels, self.label_ids = find_labels(tokenizer, probe)
        if len(self.labels) < MAX_LABELS:
            raise DecoderError(
                f"llm2jev refuses this tokenizer: only {len(self.labels)} single-token labels "
                f"after {self.texts.prefill!r}, it needs {MAX_LABELS}"
            )

    def identity(self) -> dict:
        return {
            "backend": "local",
            "engine": "llm2jev",
            "model": self.loaded.name,
            "device": self.loaded.device,
            "dtype": self.loaded.dtype,
            "temperature": self.temperature,
        }

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
            answers[qid] = answer(questions[qid], keys, softmax(row, self.temperature))
        return {
            "model": body.get("model") or self.loaded.name,
            "answers": answers,
            "usage": {"input_tokens": tokens, "output_tokens": len(prompts)},
        }
