"""Buckets: the options that share a scored first token.

A gather over first tokens gives every option of a bucket the same score, so only the bucket's
first option (in schema order) can win; a bucket of two or more is a first-token collision.
The linter's scoring (`SiteTokens`), the engine profiles (`FieldPlan`) and the decoder's
prompt plan all group options this one way.
"""

from __future__ import annotations

from collections.abc import Iterable


def first_token_buckets(first_tokens: Iterable[int]) -> dict[int, list[int]]:
    """token id → the indexes of the options scored by it, in option order (first: tie winner)."""
    groups: dict[int, list[int]] = {}
    for index, token in enumerate(first_tokens):
        members = groups.get(token)
        if members is None:  # (no empty list made for every option, as setdefault would)
            groups[token] = [index]
        else:
            members.append(index)
    return groups


def collision_groups(first_tokens: Iterable[int]) -> list[list[int]]:
    """The buckets of two or more options, in the order their tokens first appear."""
    return [members for members in first_token_buckets(first_tokens).values() if len(members) > 1]
