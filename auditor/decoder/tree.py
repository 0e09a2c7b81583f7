"""Pack options as token trees, several fields side by side in one row.

A tree: the field's suffix tokens, then one node per distinct option-token
prefix (a trie). ``pack_forest`` lays trees of several fields in one row, each
blind to the others, so a whole schema is usually one row with no cache copies. A node attends to the shared prompt cache, the whole suffix and
its own ancestors, and sits at the position it would have in a plain sequence,
so its logits equal those of the option's own row. Each option's token ``j`` is
scored from the logits of the node holding token ``j - 1`` (the last suffix token
for ``j = 0``). The last token of a sequence (the closing token) is only scored,
never fed, so it needs no node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class PackedTree:
    ids: list[int]
    positions: list[int]  # offset from the first suffix token
    parents: list[int]  # index in ``ids`` of each token's predecessor, -1 for the first
    targets: list[list[tuple[int, int]]]  # per option: (index whose logits score it, token id)

    def __len__(self) -> int:
        return len(self.ids)


def pack_tree(suffix_ids: list[int], sequences: list[list[int]]) -> PackedTree:
    """Trie-pack ``sequences`` (each an option's tokens plus closing token) after a suffix."""
    ids = list(suffix_ids)
    positions = list(range(len(suffix_ids)))
    parents = [index - 1 for index in range(len(suffix_ids))]
    root = len(suffix_ids) - 1
    children: dict[tuple[int, int], int] = {}
    targets = []
    for sequence in sequences:
        node, scored = root, []
        for depth, token in enumerate(sequence):
            scored.append((node, token))
            if depth == len(sequence) - 1:
                break
            key = (node, token)
            if key not in children:
                children[key] = len(ids)
                ids.append(token)
                positions.append(positions[node] + 1)
                parents.append(node)
            node = children[key]
        targets.append(scored)
    return PackedTree(ids, positions, parents, targets)


def merge_trees(trees: list[PackedTree]) -> PackedTree:
    """Several trees side by side in one row: a forest, each tree blind to the others."""
    ids: list[int] = []
    positions: list[int] = []
    parents: list[int] = []
    targets: list[list[tuple[int, int]]] = []
    for tree in trees:
        offset = len(ids)
        ids.extend(tree.ids)
        positions.extend(tree.positions)
        parents.extend(parent + offset if parent >= 0 else -1 for parent in tree.parents)
        targets.extend([(node + offset, token) for node, token in scored] for scored in tree.targets)
    return PackedTree(ids, positions, parents, targets)


def pack_forest(
    units: list[tuple[list[int], list[list[int]]]], row_tokens: int
) -> list[tuple[PackedTree, list[int]]]:
    """Pack (suffix, sequences) units into as few rows of at most ``row_tokens`` as a greedy pass allows.

    Returns each row with, for each of its targets, the index of the sequence it scores
    (sequences numbered across all units in order). A unit too large for one row is
    split by options, each part repeating the suffix.
    """
    parts: list[tuple[PackedTree, list[int]]] = []
    number = 0
    for suffix, sequences in units:
        group: list[int] = []
        for index in range(len(sequences)):
            trial = group + [index]
            if group and len(pack_tree(suffix, [sequences[i] for i in trial])) > row_tokens:
                parts.append((pack_tree(suffix, [sequences[i] for i in group]), [number + i for i in group]))
                trial = [index]
            group = trial
        if group:
            parts.append((pack_tree(suffix, [sequences[i] for i in group]), [number + i for i in group]))
        number += len(sequences)
    rows: list[tuple[PackedTree, list[int]]] = []
    pending: list[tuple[PackedTree, list[int]]] = []
    for part in parts:
        if pending and sum(len(tree) for tree, _ in pending) + len(part[0]) > row_tokens:
            rows.append(
                (merge_trees([tree for tree, _ in pending]), [i for _, owners in pending for i in owners])
            )
            pending = []
        pending.append(part)
    if pending:
        rows.append(
            (merge_trees([tree for tree, _ in pending]), [i for _, owners in pending for i in owners])
        )
    return rows


def ancestor_mask(tree: PackedTree, width: int) -> Any:
    """Boolean [width, width] matrix: True where row ``i`` may attend to column ``j``.

    Padding rows (beyond the tree) attend only to themselves so softmax stays finite.
    """
    import torch

    allowed = torch.zeros(width, width, dtype=torch.bool)
    for index, parent in enumerate(tree.parents):
        if parent >= 0:
            allowed[index] = allowed[parent]
        allowed[index, index] = True
    for index in range(len(tree), width):
        allowed[index, index] = True
    return allowed
