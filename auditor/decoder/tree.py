"""Pack one field's options as a token tree in a single row.

Row layout: the field's suffix tokens, then one node per distinct option-token
prefix (a trie). A node attends to the shared prompt cache, the whole suffix and
its own ancestors, and sits at the position it would have in a plain sequence,
so its logits equal those of the option's own row. Each option's token ``j`` is
scored from the logits of the node holding token ``j - 1`` (the last suffix token
for ``j = 0``). The last token of a sequence (the closing token) is only scored,
never fed, so it needs no node.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def pack_rows(suffix_ids: list[int], sequences: list[list[int]]) -> list[PackedTree]:
    """One plain row per option (the baseline the tree is measured against)."""
    return [pack_tree(suffix_ids, [sequence]) for sequence in sequences]


def ancestor_mask(tree: PackedTree, width: int):
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
