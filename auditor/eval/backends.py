"""What eval needs from a model, and the in-process backend on the reference decoder.

A backend scores one context for all fields of a schema and returns, per field, log-scores
over the options in schema order for every method it supports:

``first_token``    log of the engine's softmax over the gathered first tokens (ties identical)
``full_sequence``  summed log-prob of each option's whole token sequence plus its closing token
``constrained``    log of the constrained decoder's distribution (``eval/constrained.py``), and
                   ``constrained_pick``, the decoder's greedy masked pick
``letter``         log of the softmax over letters A, B, … after an ``A = …`` legend, or None
                   where a remap is not viable

``reverse_order`` reverses the options only where the model *reads* them (the prompt's field
catalog and the letter legend); scoring order, and so every index here, stays schema order.

``InProcessBackend`` runs the reference decoder's model here; ``ServerBackend`` scores the same
prompt through an OpenAI-compatible ``/v1/completions`` server with verify's scorer
(``auditor.decoder.backends.OpenAIBackend``: the one HTTP client, echo + logprobs). Both build
the prompt and the field plans the same way (``PromptedBackend``), so their structure and cache
fingerprint agree for the same tokenizer. A server backend sets ``row_failures``: a row whose
requests still fail after the client's retries is reported failed, not fatal to the run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from auditor.decoder.backends import model_identity
from auditor.decoder.constrained import constrained_pick
from auditor.eval.constrained import constrained_distribution
from auditor.eval.data import EvalField

METHODS = ("first_token", "full_sequence", "constrained", "letter")
METHOD_LABELS = {
    "first_token": "first-token",
    "full_sequence": "full-sequence",
    "constrained": "constrained",
    "letter": "letter",
}


@dataclass
class FieldStructure:
    """What the tokenizer alone decides about a field: the scored tokens and their buckets."""

    name: str
    kind: str  # "string" or "literal"
    prefix: str
    scored_tokens: list[str]
    buckets: list[list[int]]  # options sharing a scored token (2+), schema order; first = tie winner
    letter_viable: bool
    letter_note: str
    noncanonical_options: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["tie_winners"] = [bucket[0] for bucket in self.buckets]
        return data


class ScoringBackend(Protocol):
    def identity(self) -> dict:
        """JSON-able description of the model and settings; part of the score-cache key."""

    def structure(self, fields: list[EvalField]) -> list[FieldStructure]:
        """The tokenizer's view of every field (independent of the context)."""

    def fingerprint(self, fields: list[EvalField]) -> str:
        """Changes whenever what is scored changes (prompt text, suffixes, option tokens): part of
        the cache key, so scores from an older prompt are never reused."""

    def score(
        self, fields: list[EvalField], context: str, *, reverse_order: bool = False, letters: bool = True
    ) -> list[dict]:
        """Per field (schema order), ``{method: [log-score per option] | None, "constrained_pick": i}``."""


def _display(fields: list[EvalField], reverse_order: bool) -> list[Any]:
    from auditor.decoder import FieldSpec

    return [
        FieldSpec(
            f.name,
            list(reversed(f.options)) if reverse_order else list(f.options),
            f.description,
            label=f.label,
        )
        for f in fields
    ]


def _logs(values: list[float]) -> list[float]:
    return [math.log(v) if v > 0 else -1e30 for v in values]


class PromptedBackend:
    """What every backend shares: the prompt (``auditor.decoder.prompt``), the field plans on the
    scoring tokenizer, the structure and the fingerprint. Subclasses set ``chat_tokenizer`` (its
    chat template builds the prompt) and ``tokenizer`` (the scoring model's, ``auditor.pcd``)."""

    chat_tokenizer: Any
    tokenizer: Any
    row_failures = False  # True: a row that fails is reported, and the run goes on

    def _plans(self, fields: list[EvalField], prompt_text: str, prompt_ids: list[int]) -> list[Any]:
        from auditor.decoder.prompt import plan_field

        return [plan_field(self.tokenizer, spec, prompt_text, prompt_ids) for spec in _display(fields, False)]

    def structure(self, fields: list[EvalField]) -> list[FieldStructure]:
        from auditor.decoder.prompt import build_prompt

        prompt_text = build_prompt(self.chat_tokenizer, _display(fields, False), "(context)")
        plans = self._plans(fields, prompt_text, self.tokenizer.encode(prompt_text))
        return [
            FieldStructure(
                name=plan.name,
                kind=plan.kind,
                prefix=plan.prefix,
                scored_tokens=[self.tokenizer.decode([token]) for token in plan.scored_ids],
                buckets=plan.collision_groups(),
                letter_viable=plan.letter_ids is not None and len(plan.options) > 1,
                letter_note=plan.letter_note,
                noncanonical_options=list(plan.noncanonical_options),
            )
            for plan in plans
        ]

    def fingerprint(self, fields: list[EvalField]) -> str:
        import hashlib
        import json

        from auditor.decoder.prompt import build_prompt

        probe = "\x00context\x00"
        display = _display(fields, False)
        letters = {spec.name: tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(spec.options)]) for spec in display}
        prompt_text = build_prompt(self.chat_tokenizer, display, probe)
        plans = self._plans(fields, prompt_text, self.tokenizer.encode(prompt_text))
        material = [
            prompt_text,
            build_prompt(self.chat_tokenizer, display, probe, letters),
            [[p.suffix_ids, p.sequences, p.scored_ids, p.letter_ids] for p in plans],
        ]
        return hashlib.sha256(json.dumps(material).encode("utf-8")).hexdigest()


class InProcessBackend(PromptedBackend):
    """The reference decoder's model in this process (``auditor.decoder``), no parity, no coupling."""

    def __init__(self, loaded: Any) -> None:
        self.loaded = loaded
        self.chat_tokenizer = loaded.tokenizer  # its chat template builds the prompt
        self.tokenizer = loaded.linter_tokenizer  # the scoring model's tokenizer (auditor.pcd)

    def identity(self) -> dict:
        return model_identity(self.loaded)

    def score(
        self, fields: list[EvalField], context: str, *, reverse_order: bool = False, letters: bool = True
    ) -> list[dict]:
        import torch

        from auditor.decoder.pcd import ROW_TOKENS, Scorer
        from auditor.decoder.prompt import build_prompt, letter_suffix
        from auditor.decoder.result import Ledger
        from auditor.decoder.tree import pack_forest

        tokenizer = self.tokenizer
        display = _display(fields, reverse_order)
        scorer = Scorer(self.loaded, Ledger())
        prompt_text = build_prompt(self.chat_tokenizer, display, context)
        prompt_ids = tokenizer.encode(prompt_text)
        plans = self._plans(fields, prompt_text, prompt_ids)
        past = len(prompt_ids)
        cache = scorer.prefill(prompt_ids, "prefill")
        # One pass over the options' forest (the decoder's packing) gives both scores: the last
        # suffix node's logits are the first-token gather, and each option's per-token log-probs
        # feed full-sequence and constrained scoring (teacher_forced() keeps only sums).
        rows = pack_forest([(plan.suffix_ids, plan.sequences) for plan in plans], ROW_TOKENS)
        hidden = scorer.run_trees(cache, past, [tree for tree, _ in rows], "teacher_forced")
        per_token: dict[int, list[float]] = {}
        last_suffix_state: dict = {}
        first_option = [sum(len(p.options) for p in plans[:i]) for i in range(len(plans))]
        for (tree, owners), states in zip(rows, hidden):
            per_token.update(zip(owners, scorer._target_logprobs(tree, states)))
            for owner, targets in zip(owners, tree.targets):
                if owner in first_option:  # the node scoring token 0 is the field's last suffix token
                    last_suffix_state[owner] = states[targets[0][0]]
        suffix_logits = scorer.logits(torch.stack([last_suffix_state[n] for n in first_option]))
        del cache

        letter_logs: dict[str, list[float]] = {}
        letter_plans = (
            [p for p in plans if p.letter_ids is not None and len(p.options) > 1] if letters else []
        )
        if letter_plans:
            letter_text = build_prompt(
                self.chat_tokenizer, display, context, {p.name: p.letters for p in letter_plans}
            )
            letter_ids = tokenizer.encode(letter_text)
            letter_cache = scorer.prefill(letter_ids, "letter_prefill")
            heads = [tokenizer.encode(letter_suffix(p.name)) for p in letter_plans]
            logits = scorer.suffix_logits(letter_cache, len(letter_ids), heads, "letter_suffix")
            for plan, row in zip(letter_plans, logits):
                probs = torch.softmax(row[torch.tensor(plan.letter_ids)], dim=-1).tolist()
                # letter k names the k-th option *as displayed*; map back to schema order
                letter_logs[plan.name] = _logs(probs[::-1] if reverse_order else probs)
            del letter_cache

        out, number = [], 0
        for plan, row in zip(plans, suffix_logits):
            first = torch.softmax(row[torch.tensor(plan.scored_ids)], dim=-1).tolist()
            steps = [per_token[number + i] for i in range(len(plan.options))]
            number += len(plan.options)
            pick = constrained_pick(plan.sequences, steps).option
            constrained = constrained_distribution(plan.sequences, steps)
            out.append(
                {
                    "first_token": _logs(first),
                    "full_sequence": [sum(values) for values in steps],
                    "constrained": _logs(constrained),
                    "constrained_pick": pick,
                    "letter": letter_logs.get(plan.name),
                }
            )
        return out


class ServerBackend(PromptedBackend):
    """A model behind an OpenAI-compatible ``/v1/completions`` server, scored by verify's scorer.

    ``server`` is an ``auditor.decoder.backends.OpenAIBackend`` (its HTTP client holds the
    concurrency, the timeouts, the retries and the key). Every option of every field is one
    scored prompt (echo + logprobs), as in ``verify --backend openai``; the letter legend, when
    viable, adds one prompt per letter. The identity (part of the cache key) names the endpoint,
    the served model and the tokenizer, never the key.
    """

    row_failures = True

    def __init__(self, server: Any) -> None:
        self.server = server
        self.chat_tokenizer = server.tokenizer
        self.tokenizer = server.linter_tokenizer
        self.notes: list[str] = []  # distinct notes of the scorer (cut differences, text prompts)
        self.mismatches = 0  # scored texts the server tokenized unlike pcdlint

    def identity(self) -> dict:
        return self.server.identity()

    @property
    def stats(self) -> dict:
        """The HTTP client's counts: requests (retries included), retries, answers by status."""
        return self.server.http.stats

    def score(
        self, fields: list[EvalField], context: str, *, reverse_order: bool = False, letters: bool = True
    ) -> list[dict]:
        from auditor.decoder.backends import ScoreRequest
        from auditor.decoder.prompt import build_prompt, letter_suffix
        from auditor.decoder.result import Ledger
        from auditor.softmax import softmax

        tokenizer = self.tokenizer
        display = _display(fields, reverse_order)
        prompt_text = build_prompt(self.chat_tokenizer, display, context)
        prompt_ids = tokenizer.encode(prompt_text)
        plans = self._plans(fields, prompt_text, prompt_ids)
        request = ScoreRequest(prompt_text, prompt_ids, plans, parity="off")
        letter_plans = (
            [p for p in plans if p.letter_ids is not None and len(p.options) > 1] if letters else []
        )
        if letter_plans:
            # letter k names the k-th option *as displayed* (the reversed catalog with reverse_order)
            request.letter_plans = letter_plans
            request.letter_text = build_prompt(
                self.chat_tokenizer, display, context, {p.name: p.letters for p in letter_plans}
            )
            request.letter_ids = tokenizer.encode(request.letter_text)
            request.letter_heads = [
                (letter_suffix(p.name), tokenizer.encode(letter_suffix(p.name))) for p in letter_plans
            ]
        seen = len(self.server.notes)
        scores = self.server.score(request, Ledger())
        for note in self.server.notes[seen:]:
            # one note of a kind (the cut-difference note names each row's token counts)
            kind = note.split(":", 1)[0]
            if kind != "parity is an in-process check" and all(
                known.split(":", 1)[0] != kind for known in self.notes
            ):
                self.notes.append(note)
        self.mismatches += sum(len(s.mismatches) for s in scores)
        out = []
        for plan, scored in zip(plans, scores):
            first = softmax(scored.first_token_logprobs)
            pick = constrained_pick(plan.sequences, scored.sequence_logprobs).option
            constrained = constrained_distribution(plan.sequences, scored.sequence_logprobs)
            letter = None
            if scored.letter_logprobs is not None:
                probs = softmax(scored.letter_logprobs)
                letter = _logs(probs[::-1] if reverse_order else probs)
            out.append(
                {
                    "first_token": _logs(first),
                    "full_sequence": [sum(values) for values in scored.sequence_logprobs],
                    "constrained": _logs(constrained),
                    "constrained_pick": pick,
                    "letter": letter,
                }
            )
        return out
