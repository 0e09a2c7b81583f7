"""The constrained-decoding pick: greedy token-masked decoding over an enum's token trie.

This is what outlines, xgrammar or llguidance return for an enum when they decode greedily:
at every step the logits are masked to the tokens that keep the output inside the allowed
values, and the best allowed token is taken. Over the options' canonical token sequences
(each option's tokens plus its closing token) the allowed tokens after a prefix are exactly
the children of that prefix's trie node, and the log-prob of each child is the one the
teacher-forced pass already computed for every option going through that node. So the pick
needs no extra forward pass: walk the trie from the root, at each node keep the child with
the highest log-prob (ties to the lower token id, as ``argmax`` over masked logits does),
until a closing token is taken.

Difference from a grammar engine, measured by tests/decoder/test_constrained.py: a grammar
also allows non-canonical spellings (``"DE" + "LIVER"`` where the tokenizer writes
``"DELIVER"``); this pick follows canonical tokens only, as PCD's own scoring does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ConstrainedPick:
    option: int  # index of the option decoded
    steps: int  # tokens decoded, the closing token included
    branch_points: int  # steps where more than one token was allowed


def constrained_pick(sequences: list[list[int]], token_logprobs: list[list[float]]) -> ConstrainedPick:
    """Greedy masked decoding over ``sequences`` (options' tokens + closing token).

    ``token_logprobs[i][j]`` is the log-prob of ``sequences[i][j]`` after ``sequences[i][:j]``
    (the teacher-forced value); options sharing a prefix share those values.
    """
    if not sequences:
        raise ValueError("no options to decode")
    alive = list(range(len(sequences)))
    depth, branches = 0, 0
    while True:
        children: dict[int, float] = {}
        for index in alive:
            token = sequences[index][depth]
            children.setdefault(token, token_logprobs[index][depth])
        if len(children) > 1:
            branches += 1
        chosen = min(children, key=lambda token: (-children[token], token))
        alive = [index for index in alive if sequences[index][depth] == chosen]
        depth += 1
        finished = [index for index in alive if len(sequences[index]) == depth]
        if finished:
            return ConstrainedPick(finished[0], depth, branches)
