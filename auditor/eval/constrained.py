"""The constrained-decoding pick, from teacher-forced log-probs over the options' token trie.

A grammar-constrained decoder (outlines, xgrammar, llguidance) decoding an enum masks the
vocabulary to the tokens that continue some option and takes the argmax, step by step. Over
the options' canonical token sequences (remainder tokens plus the closing token) that is a
greedy walk down the trie; every log-prob it needs is one a teacher-forced pass already
computed, because options sharing a token prefix share the trie node and its logits.

Pure: no model. Built here because the decoder's own constrained pick (issue 15) was not on
main when eval was written; when it lands, eval should take the pick from it and keep only the
distribution (which calibration needs) here.
"""

from __future__ import annotations

import math


def _groups(members: list[int], sequences: list[list[int]], depth: int) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for option in members:
        groups.setdefault(sequences[option][depth], []).append(option)
    return groups


def constrained_pick(
    sequences: list[list[int]], token_logprobs: list[list[float]]
) -> tuple[int, list[float]]:
    """Greedy masked decoding over the trie, and the trie's locally normalised distribution.

    ``sequences[i]`` is option i's tokens (closing token last), ``token_logprobs[i][j]`` the
    full-vocabulary log-prob of token j of option i given its predecessors. Returns the pick
    (equal log-probs go to the lower token id, as argmax over masked logits does; the same rule
    as issue 15's ``auditor.decoder.constrained``) and, per option, the probability of
    decoding it when each step is a softmax over only the allowed tokens.
    """
    count = len(sequences)
    probs = [0.0] * count

    def walk(members: list[int], depth: int, mass: float) -> None:
        live = [m for m in members if depth < len(sequences[m])]
        if not live:  # one option (or identical duplicates: the first one is what comes back)
            probs[members[0]] += mass
            return
        groups = _groups(live, sequences, depth)
        logps = {token: token_logprobs[group[0]][depth] for token, group in groups.items()}
        top = max(logps.values())
        z = sum(math.exp(lp - top) for lp in logps.values())
        for token, group in groups.items():
            walk(group, depth + 1, mass * math.exp(logps[token] - top) / z)

    walk(list(range(count)), 0, 1.0)

    members, depth = list(range(count)), 0
    while any(depth < len(sequences[m]) for m in members):
        groups = _groups([m for m in members if depth < len(sequences[m])], sequences, depth)
        best = max(groups.items(), key=lambda item: (token_logprobs[item[1][0]][depth], -item[0]))
        members, depth = best[1], depth + 1
    return members[0], probs
