"""Where the scores come from: the model in-process, or a model behind an OpenAI-compatible server.

Both backends answer one question, ``score(request, ledger, progress) -> list[FieldScores]``:
for every field of a ``ScoreRequest`` (the prompt, each field's ``PromptField`` and, when a
letter remap is viable, the letter prompt and heads), the log-probs that the verdicts and
picks are computed from. ``FieldScores`` holds, per field:

``first_token_logprobs``  per option, log p(scored token | prompt + suffix): the PCD score
``sequence_logprobs``     per option, log p of each of its tokens, closing token last, as
                          teacher forcing gives them; sums are full-sequence scores and the
                          constrained-decoding pick (decoder/constrained.py) walks them
``letter_logprobs``       per letter A, B, …, log p(letter) after the letter legend, or None;
``letter_logprobs_reversed``  the same with the legend reversed (A = the last option)
``parity_max_abs_diff``   max |Δlogit| of the shared-cache pass against plain forwards (in-process only)
``mismatches``            texts the server tokenized differently from pcdlint's tokenizer

A backend also has ``name``, ``tokenizer`` (a transformers tokenizer: the chat template),
``linter_tokenizer`` (the same as auditor.tokenizers' ``LoadedTokenizer``: every cut and
every encoding), ``tokenizer_name``, ``device``, ``dtype``, ``load_seconds``, ``notes`` and ``stats``
(requests, prompts and tokens sent; empty in-process), and ``first_token_logprobs(prompt_text,
prompt_ids, plans, stage, ledger)`` for re-scoring after a rewritten prompt (coupling).

``InProcessBackend`` wraps a ``LoadedModel`` (decoder/model.py) and runs decoder/pcd.py's
passes. ``OpenAIBackend`` scores through the legacy ``/v1/completions`` endpoint as
lm-evaluation-harness does: ``echo=true``, ``logprobs=1``, ``max_tokens=1``, ``temperature=0``,
prompt + suffix + option as one prompt, many prompts per request when the server takes a
prompt list (vLLM, SGLang), one per request otherwise (llama-cpp-python's server rejects lists).
``max_tokens`` is 1 and not 0: llama-cpp-python treats ``max_tokens<=0`` as "until the context
is full".

The prompt is sent as pcdlint's token ids (the OpenAI schema's ``prompt: [[ids]]``, which vLLM
and SGLang accept), so the server scores exactly PCD's cut. A server that refuses token prompts
(llama-cpp-python's takes only text) gets the text; it then tokenizes prompt + suffix + option as
one string, which differs from PCD's cut wherever the cut is not canonical (for SmolLM2 at the
seed boundary: the whole text has ``\n `` + `` "`` where PCD feeds ``\n`` | `` `` + `` "``). Every echo is
compared twice: with PCD's cut (equal: the server scored what PCD scores) and with pcdlint's
tokenization of the whole text (equal: the same tokenizer, a different cut, counted as
``cut_differences``); anything else is a tokenizer mismatch, a finding in itself.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auditor.decoder.errors import DecoderError

if TYPE_CHECKING:
    from auditor.decoder.http import HttpClient
    from auditor.decoder.model import LoadedModel
    from auditor.decoder.progress import Progress
    from auditor.decoder.prompt import PromptField
    from auditor.decoder.result import Ledger

PARITY_MODES = ("fast", "full", "off")


def model_identity(loaded: LoadedModel) -> dict:
    """What scores from a model run here depend on (the eval score cache's key, a decision
    report's identity): the one place a local model's identity is written."""
    return {
        "backend": "in-process",
        "model": loaded.name,
        "tokenizer": loaded.tokenizer_name,
        "device": loaded.device,
        "dtype": loaded.dtype,
    }


@dataclass
class ScoreRequest:
    prompt_text: str
    prompt_ids: list[int]
    plans: list  # PromptField per field
    letter_text: str | None = None
    letter_ids: list[int] | None = None
    letter_plans: list = field(default_factory=list)
    letter_heads: list[tuple[str, list[int]]] = field(default_factory=list)  # per letter plan
    letter_reversed_text: str | None = None  # the same legend with A = the last option
    letter_reversed_ids: list[int] | None = None
    parity: str = "fast"


@dataclass
class FieldScores:
    first_token_logprobs: list[float]
    sequence_logprobs: list[list[float]]
    letter_logprobs: list[float] | None = None
    letter_logprobs_reversed: list[float] | None = None  # per letter of the reversed legend
    parity_max_abs_diff: float | None = None
    mismatches: list[str] = field(default_factory=list)


class _NoProgress:
    def stage(self, name, total=None, unit="step"):
        from contextlib import nullcontext

        return nullcontext(lambda amount=1: None)


def _log_softmax_rows(torch, rows) -> list:
    return [torch.log_softmax(row.float(), dim=-1) for row in rows]


class InProcessBackend:
    """The model in this process (torch): one prefill, packed passes, cache-copy parity."""

    def __init__(
        self, loaded: LoadedModel, cache_budget_bytes: int | None = None, full_sequence_mode: str = "tree"
    ):
        from auditor.decoder.pcd import DEFAULT_CACHE_BUDGET_BYTES

        self.loaded = loaded
        self.name = loaded.name
        self.tokenizer = loaded.tokenizer
        self.linter_tokenizer = loaded.linter_tokenizer
        self.tokenizer_name = loaded.tokenizer_name
        self.device = loaded.device
        self.dtype = loaded.dtype
        self.load_seconds = loaded.load_seconds
        self.notes = list(loaded.notes)
        self.stats: dict = {}
        positions = getattr(getattr(loaded.model, "config", None), "max_position_embeddings", None)
        self.context_limit: int | None = positions if isinstance(positions, int) and positions > 0 else None
        self.cache_budget_bytes = cache_budget_bytes or DEFAULT_CACHE_BUDGET_BYTES
        self.full_sequence_mode = full_sequence_mode

    def identity(self) -> dict:
        return model_identity(self.loaded)

    def close(self) -> None:
        """Nothing to release: the model goes with the backend."""

    def _scorer(self, ledger):
        from auditor.decoder.pcd import Scorer

        return Scorer(self.loaded, ledger, self.cache_budget_bytes)

    def score(
        self, request: ScoreRequest, ledger: Ledger, progress: Progress | _NoProgress | None = None
    ) -> list[FieldScores]:
        import torch

        progress = progress or _NoProgress()
        scorer = self._scorer(ledger)
        plans, past = request.plans, len(request.prompt_ids)
        with ledger.stage("prefill"), progress.stage("prefill", past, "tok") as tick:
            cache = scorer.prefill(request.prompt_ids, "prefill", tick)
        with ledger.stage("suffix"), progress.stage("suffix pass"):
            suffix_logits = scorer.suffix_logits(cache, past, [plan.suffix_ids for plan in plans], "suffix")
        with ledger.stage("teacher_forced"), progress.stage("teacher forcing"):
            full = scorer.teacher_forced(cache, past, plans, "teacher_forced", mode=self.full_sequence_mode)
        parity = self._parity(scorer, request, cache, suffix_logits, ledger, progress)
        letters, reversed_letters = {}, {}
        if request.letter_plans:
            letters = self._letters(scorer, request, request.letter_ids, cache, ledger, progress)
            if request.letter_reversed_ids is not None:
                reversed_letters = self._letters(
                    scorer, request, request.letter_reversed_ids, cache, ledger, progress
                )
        del cache
        results = []
        for index, (plan, row, scored) in enumerate(
            zip(plans, _log_softmax_rows(torch, suffix_logits), full)
        ):
            results.append(
                FieldScores(
                    first_token_logprobs=row[torch.tensor(plan.scored_ids)].tolist(),
                    sequence_logprobs=scored.tokens,
                    letter_logprobs=letters.get(plan.name),
                    letter_logprobs_reversed=reversed_letters.get(plan.name),
                    parity_max_abs_diff=parity[index],
                )
            )
        return results

    def _parity(self, scorer, request, cache, suffix_logits, ledger, progress) -> list[float | None]:
        """Shared-cache packed logits against plain forwards.

        ``fast``: every field's suffix continued alone from a copy of the prompt cache, plus one
        fresh forward (no cache at all) of prompt + the longest suffix; ``full``: a fresh forward
        of prompt + suffix for every field; ``off``: nothing.
        """
        plans = request.plans
        if request.parity == "off":
            return [None] * len(plans)
        with ledger.stage("parity"):
            if request.parity == "full":
                with progress.stage("parity (fresh forwards)", len(plans), "field"):
                    fresh = scorer.fresh_last_logits(
                        [request.prompt_ids + p.suffix_ids for p in plans], "parity"
                    )
                return [float((a - b).abs().max()) for a, b in zip(suffix_logits, fresh)]
            with progress.stage("parity (cache-copy continuations)", len(plans) + 1, "field") as tick:
                continued = scorer.continuation_logits(
                    cache, [p.suffix_ids for p in plans], "parity_continuation", tick
                )
                diffs: list[float | None] = [
                    float((a - b).abs().max()) for a, b in zip(suffix_logits, continued)
                ]
                longest = max(range(len(plans)), key=lambda i: len(plans[i].suffix_ids))
                (fresh,) = scorer.fresh_last_logits(
                    [request.prompt_ids + plans[longest].suffix_ids], "parity_fresh"
                )
                diffs[longest] = max(
                    diffs[longest] or 0.0, float((suffix_logits[longest] - fresh).abs().max())
                )
                tick(1)
            return diffs

    def _letters(self, scorer, request, letter, cache, ledger, progress) -> dict[str, list[float]]:
        """Letter scores from the prompt cache cut where the letter prompt departs from it.

        The letter legend comes after the field catalog, so the letter prompt shares all of
        the main prompt up to it: only the legend and the heads are run, in one packed row.
        """
        import torch

        from auditor.decoder.tree import pack_tree

        main = request.prompt_ids
        shared = 0
        while shared < min(len(main), len(letter)) - 1 and main[shared] == letter[shared]:
            shared += 1
        with ledger.stage("letter"), progress.stage("letters", len(letter) - shared, "tok"):
            base = scorer.prefix_cache(cache, shared)
            tail = letter[shared:]
            tree = pack_tree(tail, [head_ids + [0] for _text, head_ids in request.letter_heads])
            nodes = [targets[-1][0] for targets in tree.targets]
            (hidden,) = scorer.run_trees(base, shared, [tree], "letter")
            logits = scorer.logits(hidden[torch.tensor(nodes)])
        result = {}
        for plan, row in zip(request.letter_plans, _log_softmax_rows(torch, logits)):
            result[plan.name] = row[torch.tensor(plan.letter_ids)].tolist()
        return result

    def first_token_logprobs(
        self, prompt_text: str, prompt_ids: list[int], plans: list[PromptField], stage: str, ledger: Ledger
    ) -> list[list[float]]:
        import torch

        scorer = self._scorer(ledger)
        cache = scorer.prefill(prompt_ids, f"{stage}_prefill")
        rows = scorer.suffix_logits(cache, len(prompt_ids), [p.suffix_ids for p in plans], f"{stage}_suffix")
        return [
            row[torch.tensor(p.scored_ids)].tolist() for p, row in zip(plans, _log_softmax_rows(torch, rows))
        ]


@dataclass
class _Job:
    """One scored text: the log-probs of the tokens in ``text[start:]``."""

    text: str
    start: int
    ids: list[int]  # PCD's cut: prompt ids + suffix ids + the scored ids
    expected: list[str]  # the same tokens, decoded one by one
    scored: int  # how many of them lie in text[start:]
    logprobs: list[float] | None = None
    mismatch: str | None = None
    cut_difference: str | None = None  # the server's tokens are the whole text's, not PCD's cut


class OpenAIBackend:
    """A model behind an OpenAI-compatible ``/v1/completions`` endpoint (vLLM, SGLang, llama-cpp-python).

    Every request goes through ``auditor.decoder.http.HttpClient`` (pass one as ``client``, or
    the options to build one); every answer is checked by ``auditor.decoder.answers`` first.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None,
        tokenizer: Any,
        tokenizer_name: str,
        *,
        api_key: str | None = None,
        concurrency: int = 4,
        timeout: float = 120.0,
        retries: int = 3,
        batch_size: int = 16,
        max_bytes: int | None = None,
        retry_after_cap: float | None = None,
        run_deadline: float | None = None,
        client: HttpClient | None = None,
    ):
        from auditor.decoder import http

        self.base_url = self.api_base(base_url)
        self.concurrency, self.batch_size = max(1, concurrency), max(1, batch_size)
        self.http = client or http.HttpClient(
            self.base_url,
            api_key=api_key,
            connect_timeout=min(timeout, http.DEFAULT_CONNECT_TIMEOUT),
            read_deadline=timeout,
            max_bytes=max_bytes or http.DEFAULT_MAX_BYTES,
            retries=retries,
            retry_after_cap=http.DEFAULT_RETRY_AFTER_CAP if retry_after_cap is None else retry_after_cap,
            run_deadline=run_deadline,
            max_connections=self.concurrency,
        )
        self.base_url = self.http.base_url
        from auditor.tokenizers import LoadedTokenizer

        self.tokenizer = tokenizer
        self.tokenizer_name = tokenizer_name
        self.linter_tokenizer = LoadedTokenizer(
            id=tokenizer_name,
            source=f"--tokenizer for the server ({tokenizer_name})",
            hf=tokenizer.backend_tokenizer,
        )
        self.device, self.dtype = "server", "server"
        self.notes: list[str] = []
        self.context_limit: int | None = None  # the served model's max_model_len, where /models gives it
        self.stats: dict[str, Any] = {
            "requests": 0,
            "prompts": 0,
            "prompt_tokens": 0,
            "retries": 0,
            "mismatches": 0,
            "cut_differences": 0,
            "prompt_kind": "token ids",
        }
        started = time.perf_counter()
        self.model = self._resolve_model(model)
        self.name = f"{self.model} at {self.base_url}"
        self.load_seconds = time.perf_counter() - started
        self.lists_ok: bool | None = None  # does the server take a list of prompts?
        self.token_prompts: bool | None = None  # does it take token ids as the prompt? (None: not asked yet)
        self._specials: set[str] | None = None

    def identity(self) -> dict:
        """Endpoint, served model and tokenizer: what its scores depend on (never the key)."""
        return {
            "backend": "openai",
            "endpoint": self.base_url,
            "model": self.model,
            "tokenizer": self.tokenizer_name,
            "device": "server",
            "dtype": "server",
        }

    def close(self) -> None:
        self.http.close()

    @staticmethod
    def api_base(base_url: str) -> str:
        """The API's root: ``base_url`` with ``/v1`` appended unless it ends so."""
        base = base_url.rstrip("/")
        return base if base.endswith("/v1") else base + "/v1"

    # -- HTTP ---------------------------------------------------------------
    def _resolve_model(self, model: str | None) -> str:
        from auditor.decoder.answers import AnswerError, model_ids
        from auditor.decoder.http import HttpError

        try:
            served, limits = model_ids(self.http.get_json("models"), f"GET {self.base_url}/models")
            served = [self.http.redact(name) for name in served]
            limits = {self.http.redact(name): value for name, value in limits.items()}
        except AnswerError as exc:
            raise AnswerError(self.http.redact(str(exc))) from None
        except HttpError as exc:
            if exc.status is None:
                raise
            raise DecoderError(f"{exc}; is --base-url an OpenAI-compatible endpoint?") from None
        if model is None and len(served) == 1:
            model = served[0]
        self.context_limit = limits.get(model) if model is not None else None
        if model is None:
            shown = ", ".join(repr(name[:60]) for name in served[:10]) + (", …" if len(served) > 10 else "")
            raise DecoderError(
                f"the server serves {len(served)} models ({shown or 'none'}): pass --model NAME"
            )
        if served and model not in served:
            shown = ", ".join(repr(name[:60]) for name in served[:10]) + (", …" if len(served) > 10 else "")
            self.notes.append(f"--model {model!r} is not in the server's /models list ({shown})")
        return model

    def _complete(self, prompts: list) -> list:
        from auditor.decoder.answers import AnswerError, completion_choices

        payload = {
            "model": self.model,
            "prompt": prompts if len(prompts) > 1 else prompts[0],
            "echo": True,
            "logprobs": 1,
            "max_tokens": 1,
            "temperature": 0.0,
        }
        # while the server's abilities are unknown, an HTTP 500 is an answer (llama-cpp-python
        # refuses token-id prompts with one), not a fault to retry
        probing = self.token_prompts is None or (len(prompts) > 1 and self.lists_ok is None)
        answer = self.http.post_json("completions", payload, retry_server_errors=not probing)
        self.stats["requests"] += 1
        self.stats["prompts"] += len(prompts)
        self.stats["retries"] = self.http.stats["retries"]
        try:
            choices = completion_choices(answer, len(prompts), f"POST {self.base_url}/completions")
        except AnswerError as exc:
            raise AnswerError(self.http.redact(str(exc))) from None
        if choices is None:
            raise _ListRefused()
        return choices

    def _send(self, jobs: list[_Job]) -> list:
        from auditor.decoder.http import HttpError

        prompts = [job.ids if self.token_prompts is not False else job.text for job in jobs]
        if len(prompts) > 1 and self.lists_ok is not False:
            try:
                choices = self._complete(prompts)
                self.lists_ok = True
                return choices
            except (_ListRefused, HttpError) as exc:
                if self.lists_ok or (isinstance(exc, HttpError) and exc.status is None):
                    raise
                self.lists_ok = False
        return [choice for prompt in prompts for choice in self._complete([prompt])]

    def _run_batch(self, jobs: list[_Job]) -> list:
        from auditor.decoder.http import HttpError

        try:
            try:
                choices = self._send(jobs)
            except HttpError as exc:
                if self.token_prompts is not None or exc.status is None or not 400 <= exc.status <= 500:
                    raise
                # token prompts refused: the server takes text only (llama-cpp-python answers a
                # validation error with HTTP 500); if text fails as well, that error is the one shown
                self.token_prompts, self.lists_ok = False, None
                self.stats["prompt_kind"] = "text"
                self.notes.append(
                    f"the server refuses token-id prompts (HTTP {exc.status}): prompts are sent as text, so the "
                    "server tokenizes prompt + suffix + option as one string, not in PCD's cut"
                )
                choices = self._send(jobs)
            if self.token_prompts is None:
                self.token_prompts = True
            if self.lists_ok is False and not any("one prompt per request" in note for note in self.notes):
                self.notes.append("the server does not take a list of prompts: one prompt per request")
            return choices
        except HttpError as exc:
            if exc.status is None:
                raise
            raise DecoderError(f"{exc}; the server needs /v1/completions with echo and logprobs") from None
        except _ListRefused:
            raise DecoderError(
                f"the server at {self.base_url} answered a prompt list with the wrong number "
                "of choices; try --batch-size 1"
            ) from None

    # -- scoring ------------------------------------------------------------
    def _job(self, context: str, ids_context: list[int], scored_text: str, scored_ids: list[int]) -> _Job:
        decode = self.linter_tokenizer.decode
        ids = ids_context + scored_ids
        return _Job(
            text=context + scored_text,
            start=len(context),
            ids=ids,
            expected=[decode([token]) for token in ids],
            scored=len(scored_ids),
        )

    def _text_tokens(self, tokens) -> list[str]:
        """Tokens as text, special tokens left out (servers echo them differently, or not at all)."""
        if self._specials is None:
            self._specials = set(getattr(self.tokenizer, "all_special_tokens", [])) | set(
                getattr(self.tokenizer, "get_added_vocab", dict)().keys()
            )
        return [token for token in tokens if token not in self._specials and token != ""]

    def _fill(self, job: _Job, choice) -> None:
        """Take the scored tokens' log-probs from the end of the echo, and check the tokenization.

        Servers render special tokens differently in the echo (llama-cpp-python writes them
        as empty strings and leaves out its BOS), so the scored tokens (plain text, never
        special) are found at the end: right before the one generated token, or last when
        the server stopped without one.
        """
        tokens, values = choice.tokens, choice.token_logprobs
        if not tokens or len(tokens) < job.scored:
            raise DecoderError(
                f"the server at {self.base_url} returned no prompt log-probs for echo=true "
                "(llama.cpp's own llama-server does not support echo; use llama-cpp-python's server, vLLM or SGLang)"
            )
        want = job.expected[-job.scored :]
        generated = len(choice.text) > len(job.text)
        ends = [len(tokens) - 1, len(tokens)] if generated else [len(tokens), len(tokens) - 1]
        end = next((e for e in ends if e >= job.scored and list(tokens[e - job.scored : e]) == want), ends[0])
        scored = values[end - job.scored : end]
        if any(value is None for value in scored):
            at = end - job.scored + next(i for i, value in enumerate(scored) if value is None)
            raise DecoderError(
                f"POST {self.base_url}/completions: logprobs.token_logprobs[{at}] is null for a "
                "scored token; expected a finite log-prob"
            )
        job.logprobs = [float(value) for value in scored if value is not None]
        theirs = self._text_tokens(tokens[:end])
        cut = self._text_tokens(job.expected)
        if theirs == cut:
            return
        decode = self.linter_tokenizer.decode
        whole = self._text_tokens([decode([token]) for token in self.linter_tokenizer.encode(job.text)])
        if theirs == whole and theirs[-len(want) :] == want:
            job.cut_difference = _first_difference("the server", theirs, "PCD's cut", cut)
            return
        job.mismatch = _first_difference(
            "the server", theirs, "pcdlint", whole if self.token_prompts is False else cut
        )

    def _score_jobs(self, jobs: list[_Job], stage: str, ledger, progress) -> None:
        batches = [jobs[i : i + self.batch_size] for i in range(0, len(jobs), self.batch_size)]
        with ledger.stage(stage), progress.stage(f"{stage} (server)", len(jobs), "prompt") as tick:

            def run(batch):
                choices = self._run_batch(batch)
                for job, choice in zip(batch, choices):
                    self._fill(job, choice)
                tick(len(batch))

            # the first batch alone: it finds out whether the server takes prompt lists
            run(batches[0])
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                list(pool.map(run, batches[1:]))
        self.stats["prompt_tokens"] += sum(len(job.expected) for job in jobs)
        ledger.count(stage, len(jobs))

    def score(
        self, request: ScoreRequest, ledger: Ledger, progress: Progress | _NoProgress | None = None
    ) -> list[FieldScores]:
        progress = progress or _NoProgress()
        jobs: list[tuple[int, int, _Job]] = []
        for number, plan in enumerate(request.plans):
            context = request.prompt_text + plan.suffix_text
            context_ids = request.prompt_ids + plan.suffix_ids
            for option, (text, sequence) in enumerate(zip(plan.option_texts, plan.sequences)):
                close = self.linter_tokenizer.decode(sequence[len(plan.option_ids[option]) :])
                jobs.append((number, option, self._job(context, context_ids, text + close, sequence)))
        letter_jobs: list[tuple[int, int, bool, _Job]] = []
        variants: list[tuple[bool, str, list[int]]] = []
        if request.letter_text is not None and request.letter_ids is not None:
            variants.append((False, request.letter_text, request.letter_ids))
        if request.letter_reversed_text is not None and request.letter_reversed_ids is not None:
            variants.append((True, request.letter_reversed_text, request.letter_reversed_ids))
        for reverse, text, ids in variants if request.letter_plans else []:
            for number, (plan, (head_text, head_ids)) in enumerate(
                zip(request.letter_plans, request.letter_heads)
            ):
                for option, letter in enumerate(plan.letter_ids or []):
                    letter_jobs.append(
                        (
                            number,
                            option,
                            reverse,
                            self._job(text + head_text, ids + head_ids, chr(ord("A") + option), [letter]),
                        )
                    )
        self._score_jobs([job for _, _, job in jobs], "teacher_forced", ledger, progress)
        if letter_jobs:
            self._score_jobs([job for *_, job in letter_jobs], "letter", ledger, progress)
        results = [
            FieldScores(
                first_token_logprobs=[0.0] * len(p.options), sequence_logprobs=[[] for _ in p.options]
            )
            for p in request.plans
        ]
        for number, option, job in jobs:
            scores = results[number]
            scores.sequence_logprobs[option] = job.logprobs or []
            scores.first_token_logprobs[option] = job.logprobs[0] if job.logprobs else float("-inf")
            if job.mismatch:
                scores.mismatches.append(f"option {request.plans[number].options[option]!r}: {job.mismatch}")
        by_name = {plan.name: number for number, plan in enumerate(request.plans)}
        for number, option, reverse, job in letter_jobs:
            scores = results[by_name[request.letter_plans[number].name]]
            attribute = "letter_logprobs_reversed" if reverse else "letter_logprobs"
            if getattr(scores, attribute) is None:
                setattr(scores, attribute, [0.0] * len(request.letter_plans[number].letter_ids))
            getattr(scores, attribute)[option] = job.logprobs[0] if job.logprobs else float("-inf")
            if job.mismatch:
                scores.mismatches.append(f"letter {chr(65 + option)}: {job.mismatch}")
        self.stats["mismatches"] = sum(len(s.mismatches) for s in results)
        differing = [job for _, _, job in jobs if job.cut_difference] + [
            job for *_, job in letter_jobs if job.cut_difference
        ]
        self.stats["cut_differences"] = len(differing)
        if differing:
            self.notes.append(
                f"{len(differing)} of {len(jobs) + len(letter_jobs)} scored texts reach the server in another cut than "
                f"PCD's (text prompts; same tokenizer): {differing[0].cut_difference}. The server's scores are for its "
                "own cut, so they can differ from what a PCD engine computes"
            )
        if request.parity != "off":
            self.notes.append("parity is an in-process check: not run against a server")
        for scores in results:  # built from the server's echoed tokens: a key it echoed is masked
            scores.mismatches = [self.http.redact(text) for text in scores.mismatches]
        self.notes = [self.http.redact(note) for note in self.notes]
        return results

    def first_token_logprobs(
        self, prompt_text: str, prompt_ids: list[int], plans: list[PromptField], stage: str, ledger: Ledger
    ) -> list[list[float]]:
        jobs = [
            (
                number,
                self._job(
                    prompt_text + plan.suffix_text,
                    prompt_ids + plan.suffix_ids,
                    self.linter_tokenizer.decode([token]),
                    [token],
                ),
            )
            for number, plan in enumerate(plans)
            for token in plan.scored_ids
        ]
        self._score_jobs([job for _, job in jobs], stage, ledger, _NoProgress())
        result: list[list[float]] = [[] for _ in plans]
        for number, job in jobs:
            result[number].append(job.logprobs[0] if job.logprobs else float("-inf"))
        return result


def _first_difference(left_name: str, left: list[str], right_name: str, right: list[str]) -> str:
    at = next((i for i, (a, b) in enumerate(zip(left, right)) if a != b), min(len(left), len(right)))
    return (
        f"{left_name} has {len(left)} text tokens where {right_name} has {len(right)}; first difference at text "
        f"token {at}: {left_name} {left[at : at + 3]!r}, {right_name} {right[at : at + 3]!r}"
    )


class _ListRefused(Exception):
    """The server answered a prompt list with fewer choices than prompts."""
