"""``vbridge queue list``'s tree: each level of the queue tree with what it holds and deserves.

``render(queues, nodes)`` takes the Queues and Nodes as the apiserver lists them. The tree is
the scheduler's own (``scheduler.api.queuetree``: ``spec.parent`` or the ``volcano.sh/hierarchy``
annotations), and so are the figures (``scheduler.plugins.levels``, the capacity plugin's with
its hierarchy): a level holds the sum of its leaves' ``status.allocated`` (which the scheduler
writes), and deserves what capacity gives it. Queues with no place in the tree follow, with why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scheduler.api import building, queuetree, resources
from scheduler.plugins import levels

__all__ = ["is_tree", "render"]


def is_tree(queues: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any queue sits below another than root (else the flat table says it all)."""
    snap = building.build(nodes=[], pods=[], podgroups=[], queues=queues)
    return any(q.parent not in (None, queuetree.ROOT) or q.hierarchy for q in snap.queues.values())


def render(queues: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]]) -> str:
    snap = building.build(nodes=nodes, pods=[], podgroups=[], queues=queues)
    tree = queuetree.build(snap.queues)
    dims = snap.dims
    figures = levels.levels(tree, snap.queues, snap.allocatable.sum(axis=0), dims)
    held = {
        str((q.get("metadata") or {}).get("name", "")): resources.vector(
            resources.parse((q.get("status") or {}).get("allocated")), dims
        )
        for q in queues
    }
    zero = np.zeros(len(dims))
    rows = [["QUEUE", "STATE", "ALLOCATED", "DESERVED", "CAPABILITY"]]
    order, todo = [], [queuetree.ROOT]
    while todo:  # depth first, so each level's children follow it
        order.append(todo.pop())
        todo.extend(reversed(tree.children.get(order[-1], ())))
    for node in order:
        depth = len(tree.path(node)) - 1
        allocated = sum((held.get(leaf, zero) for leaf in tree.leaves_under(node)), zero)
        level = figures[node]
        real = np.where(np.isfinite(level.real), level.real, 0)
        info = snap.queues.get(node) if node not in tree.virtual else None
        rows.append(
            [
                "  " * depth + ("- " if depth else "") + tree.label(node),
                info.state if info is not None else "",
                resources.from_vector(allocated, dims).human(),
                resources.from_vector(level.deserved, dims).human(),
                resources.from_vector(real, dims).human() if np.isfinite(level.real).any() else "unlimited",
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += [f"not in the tree: {name}: {why}" for name, why in sorted(tree.broken.items())]
    return "\n".join(lines)
