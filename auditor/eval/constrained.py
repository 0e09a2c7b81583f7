"""The constrained decoder's distribution over an enum's options, for calibration.

A grammar-constrained decoder (outlines, xgrammar, llguidance) decoding an enum masks the
vocabulary to the tokens that continue some option and, step by step, samples from (or takes
the argmax of) the softmax over only those tokens. Over the options' canonical token sequences
(remainder tokens plus the closing token) that is a walk down the trie; every log-prob it needs
is one a teacher-forced pass already computed, because options sharing a token prefix share the
trie node and its logits.

The greedy pick itself is the decoder's (``auditor.decoder.constrained.constrained_pick``);
only the distribution, which calibration needs, is computed here. Pure: no model.
"""

from __future__ import annotations

from auditor.softmax import softmax


def _groups(members: list[int], sequences: list[list[int]], depth: int) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for option in members:
        groups.setdefault(sequences[option][depth], []).append(option)
    return groups


def constrained_distribution(sequences: list[list[int]], token_logprobs: list[list[float]]) -> list[float]:
    """Per option, the probability of decoding it when each step is a softmax over only the
    allowed tokens (the trie's locally normalised distribution).

    ``sequences[i]`` is option i's tokens (closing token last), ``token_logprobs[i][j]`` the
    full-vocabulary log-prob of token j of option i given its predecessors. Identical
    duplicates: the first one holds the mass, as the decoder's pick returns the first.
    """
    probs = [0.0] * len(sequences)

    def walk(members: list[int], depth: int, mass: float) -> None:
        live = [m for m in members if depth < len(sequences[m])]
        if not live:
            probs[members[0]] += mass
            return
        groups = _groups(live, sequences, depth)
        local = softmax([token_logprobs[group[0]][depth] for group in groups.values()])
        for group, share in zip(groups.values(), local, strict=True):
            walk(group, depth + 1, mass * share)

    if sequences:
        walk(list(range(len(sequences))), 0, 1.0)
    return probs
