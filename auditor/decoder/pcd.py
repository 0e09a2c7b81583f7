"""The PCD mechanism, run on a real model: one prefill, one batched suffix pass.

Scoring stages, each counted in the ledger (passes) and timed:

``prefill``         the shared prompt, once; its KV cache is broadcast, one row per field
``suffix``          one batched pass over every field's suffix: the first-token scores
``teacher_forced``  every option's full token sequence plus its closing token, packed
                    as token trees side by side in one row, for full-sequence scores
``letter_prefill``, ``letter_suffix``
                    the prompt again with an ``A = …`` legend for fields where a
                    letter remap is viable, and the letters scored
``parity``          a fresh full forward of prefix + suffix for every field, compared
                    with the shared-cache batched logits
``coupling_*``      re-prefills with one field's decided value written into the JSON

Row batches are split only when their broadcast cache copies would exceed
``cache_budget_bytes``; the split is counted as extra passes, never hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.decoder.result import Ledger
from auditor.decoder.tree import PackedTree, ancestor_mask, merge_trees, pack_forest, pack_tree

if TYPE_CHECKING:
    from auditor.decoder.model import LoadedModel
    from auditor.decoder.prompt import PromptField


DEFAULT_CACHE_BUDGET_BYTES = 2 << 30
PARITY_TOKEN_BUDGET = 8192
ROW_TOKENS = 4096  # packed-tree row length; its mask is ROW_TOKENS x (prompt + ROW_TOKENS)
HEAD_CHUNK = 512
PREFILL_CHUNK = 512


@dataclass
class Scored:
    """Per-option log-probs of a teacher-forced pass."""

    sums: list[float]
    means: list[float]
    tokens: list[list[float]]  # per option: the log-prob of each of its tokens, closing token last


class Scorer:
    """Runs forward passes of one model and records every one of them."""

    def __init__(
        self, loaded: LoadedModel, ledger: Ledger, cache_budget_bytes: int = DEFAULT_CACHE_BUDGET_BYTES
    ):
        import torch

        self.torch = torch
        self.model = loaded.model
        self.base = self.model.base_model
        self.head = self.model.get_output_embeddings()
        self.softcap = getattr(self.model.config, "final_logit_softcapping", None)
        self.device = next(self.model.parameters()).device
        self.dtype = next(self.model.parameters()).dtype
        self.ledger = ledger
        self.cache_budget_bytes = cache_budget_bytes

    # -- passes -------------------------------------------------------------
    def prefill(self, ids: list[int], stage: str, tick: Callable[..., object] | None = None) -> Any:
        """Run the shared prompt once, in ``PREFILL_CHUNK``-token chunks through the cache; return it.

        Chunking keeps the attention matrix small (a one-shot forward of 5,000 tokens is
        slower than the same forward in 512-token chunks on CPU); the result is the same cache.
        ``tick(tokens)`` is called after each chunk (progress).
        """
        from transformers import DynamicCache

        torch = self.torch
        cache = DynamicCache(config=self.model.config)
        with torch.inference_mode():
            for start in range(0, len(ids), PREFILL_CHUNK):
                chunk = ids[start : start + PREFILL_CHUNK]
                self.base(input_ids=torch.tensor([chunk], device=self.device), cache=cache, use_cache=True)
                if tick is not None:
                    tick(len(chunk))
        self.ledger.count(stage)
        return cache

    def _broadcast(self, cache, rows: int):
        """A cache with ``rows`` copies of the prompt's keys and values."""
        from transformers import DynamicCache

        data = [
            (keys.expand(rows, -1, -1, -1), values.expand(rows, -1, -1, -1)) for keys, values, *_ in cache
        ]
        return DynamicCache(ddp_cache_data=data, config=self.model.config)

    def prefix_cache(self, cache: Any, length: int) -> Any:
        """A cache of the first ``length`` prompt tokens (views of ``cache``, nothing copied)."""
        from transformers import DynamicCache

        data = [(keys[:, :, :length], values[:, :, :length]) for keys, values, *_ in cache]
        return DynamicCache(ddp_cache_data=data, config=self.model.config)

    def _row_cache_bytes(self, cache) -> int:
        return sum(keys.numel() * keys.element_size() * 2 for keys, _values, *_ in cache)

    def _chunks(self, cache, trees: list[PackedTree]) -> list[list[int]]:
        per_row = max(1, self._row_cache_bytes(cache))
        size = max(1, self.cache_budget_bytes // per_row)
        return [list(range(start, min(start + size, len(trees)))) for start in range(0, len(trees), size)]

    def run_trees(self, cache: Any, past: int, trees: list[PackedTree], stage: str) -> list:
        """Hidden states of each packed row after the cached prompt (one pass per chunk)."""
        hidden = []
        for chunk in self._chunks(cache, trees):
            hidden.extend(self._run_tree_batch(cache, past, [trees[i] for i in chunk]))
            self.ledger.count(stage)
        return hidden

    def _run_tree_batch(self, cache, past: int, trees: list[PackedTree]) -> list:
        torch = self.torch
        rows, width = len(trees), max(len(tree) for tree in trees)
        ids = torch.zeros(rows, width, dtype=torch.long)
        positions = torch.full((rows, width), past, dtype=torch.long)
        allowed = torch.ones(rows, 1, width, past + width, dtype=torch.bool)
        for row, tree in enumerate(trees):
            ids[row, : len(tree)] = torch.tensor(tree.ids)
            positions[row, : len(tree)] = past + torch.tensor(tree.positions)
            allowed[row, 0, :, past:] = ancestor_mask(tree, width)
        mask = torch.zeros(allowed.shape, dtype=self.dtype)
        mask.masked_fill_(~allowed, torch.finfo(self.dtype).min)
        with torch.inference_mode():
            out = self.base(
                input_ids=ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=positions.to(self.device),
                cache=self._broadcast(cache, rows),
                use_cache=True,
            )
        states = out.last_hidden_state
        return [states[row, : len(tree)] for row, tree in enumerate(trees)]

    def fresh_last_logits(self, sequences: list[list[int]], stage: str) -> list:
        """Full-vocabulary logits after each sequence, from plain forwards without any cache."""
        torch = self.torch
        results = []
        per_pass = max(1, PARITY_TOKEN_BUDGET // max(len(s) for s in sequences))
        for start in range(0, len(sequences), per_pass):
            batch = sequences[start : start + per_pass]
            width = max(len(s) for s in batch)
            ids = torch.zeros(len(batch), width, dtype=torch.long)
            for row, sequence in enumerate(batch):
                ids[row, : len(sequence)] = torch.tensor(sequence)
            with torch.inference_mode():
                states = self.base(input_ids=ids.to(self.device), use_cache=False).last_hidden_state
                last = torch.stack([states[row, len(s) - 1] for row, s in enumerate(batch)])
                results.extend(self.logits(last))
            self.ledger.count(stage)
        return results

    # -- logits -------------------------------------------------------------
    def logits(self, states: Any) -> Any:
        """Float32 logits for hidden states ``[n, hidden]``."""
        torch = self.torch
        with torch.inference_mode():
            logits = self.head(states).float()
            if self.softcap:
                logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    def suffix_logits(self, cache: Any, past: int, suffixes: list[list[int]], stage: str) -> list:
        """Logits after each suffix, all suffixes side by side in one packed row over the shared cache.

        One row (not one row per field) so the prompt cache is never copied per field.
        """
        return self.tree_logits(cache, past, [pack_tree(s, []) for s in suffixes], stage)

    def tree_logits(
        self, cache: Any, past: int, trees: list[PackedTree], stage: str, nodes: list[int] | None = None
    ) -> list:
        """Logits at one node of each tree (default: its last token), trees packed as forests."""
        nodes = [len(tree) - 1 for tree in trees] if nodes is None else nodes
        rows: list[list[PackedTree]] = []
        current: list[PackedTree] = []
        where: list[tuple[int, int]] = []
        for tree in trees:
            if current and sum(len(t) for t in current) + len(tree) > ROW_TOKENS:
                rows.append(current)
                current = []
            where.append((len(rows), sum(len(t) for t in current)))
            current.append(tree)
        if current:
            rows.append(current)
        hidden = self.run_trees(cache, past, [merge_trees(row) for row in rows], stage)
        states = [hidden[row][offset + node] for (row, offset), node in zip(where, nodes)]
        return list(self.logits(self.torch.stack(states)))

    def continuation_logits(
        self, cache: Any, suffixes: list[list[int]], stage: str, tick: Callable[..., object] | None = None
    ) -> list:
        """Logits after each suffix run alone as a plain sequence on a copy of the prompt cache."""
        torch = self.torch
        results = []
        with torch.inference_mode():
            for suffix in suffixes:
                out = self.base(
                    input_ids=torch.tensor([suffix], device=self.device),
                    cache=self._broadcast(cache, 1),
                    use_cache=True,
                )
                results.extend(self.logits(out.last_hidden_state[:, -1]))
                self.ledger.count(stage)
                if tick is not None:
                    tick(1)
        return results

    def teacher_forced(
        self, cache: Any, past: int, plans: list[PromptField], stage: str, mode: str = "tree"
    ) -> list[Scored]:
        """Sum and mean log-prob of every option's full sequence, per field.

        ``tree``: all fields' option tries packed as a forest into as few rows as
        ``ROW_TOKENS`` allows (usually one); ``rows``: one row per option, the layout
        a batched engine would use, split into passes by the cache budget.
        """
        units = [(plan.suffix_ids, plan.sequences) for plan in plans]
        if mode == "tree":
            rows = pack_forest(units, ROW_TOKENS)
        elif mode == "rows":
            rows, number = [], 0
            for suffix, sequences in units:
                for sequence in sequences:
                    rows.append((pack_tree(suffix, [sequence]), [number]))
                    number += 1
        else:
            raise ValueError(f"unknown teacher-forcing mode {mode!r}")
        hidden = self.run_trees(cache, past, [tree for tree, _ in rows], stage)
        values: dict[int, list[float]] = {}
        for (tree, owners), states in zip(rows, hidden):
            values.update(zip(owners, self._target_logprobs(tree, states)))
        scored, number = [], 0
        for plan in plans:
            per_option = [values[number + option] for option in range(len(plan.options))]
            number += len(plan.options)
            scored.append(
                Scored([sum(v) for v in per_option], [sum(v) / len(v) for v in per_option], per_option)
            )
        return scored

    def _target_logprobs(self, tree: PackedTree, states) -> list[list[float]]:
        torch = self.torch
        nodes = sorted({node for targets in tree.targets for node, _token in targets})
        where = {node: slot for slot, node in enumerate(nodes)}
        slots = torch.tensor([where[node] for targets in tree.targets for node, _ in targets])
        tokens = torch.tensor([token for targets in tree.targets for _, token in targets])
        flat = torch.empty(len(tokens))
        for start in range(0, len(nodes), HEAD_CHUNK):
            block = torch.log_softmax(self.logits(states[nodes[start : start + HEAD_CHUNK]]), dim=-1).cpu()
            inside = (slots >= start) & (slots < start + HEAD_CHUNK)
            flat[inside] = block[slots[inside] - start, tokens[inside]]
        values, offset = [], 0
        for targets in tree.targets:
            values.append(flat[offset : offset + len(targets)].tolist())
            offset += len(targets)
        return values
