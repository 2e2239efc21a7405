"""The queue tree as ``vbridge queue list`` shows it: each level, depth first, with what it holds,
deserves and may use. Pure.

``of(queues, nodes)`` takes the Queues and Nodes as the apiserver lists them. The tree is the
scheduler's own (``api.queuetree``: ``spec.parent`` or the ``volcano.sh/hierarchy``
annotations), and so are the figures (``plugins.levels``, the capacity plugin's with its
hierarchy): a level holds the sum of its leaves' ``status.allocated`` (which the scheduler
writes), and deserves what capacity gives it. ``Table.broken``: the queues with no place in the
tree, with why. The command's text is ``vbridge.commands.queuetree``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scheduler.api import building, queuetree, resources
from scheduler.plugins import levels

__all__ = ["Level", "Table", "is_tree", "of"]


@dataclasses.dataclass(frozen=True, slots=True)
class Level:
    label: str
    depth: int  # 0 for root
    state: str  # "" for a level no Queue object stands for
    allocated: resources.Resource
    deserved: resources.Resource
    capability: resources.Resource | None  # None: unlimited


@dataclasses.dataclass(frozen=True, slots=True)
class Table:
    levels: tuple[Level, ...]
    broken: Mapping[str, str]  # queue -> why it has no place in the tree


def is_tree(queues: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any queue sits below another than root (else a flat table says it all)."""
    snap = building.build(nodes=[], pods=[], podgroups=[], queues=queues)
    return any(q.parent not in (None, queuetree.ROOT) or q.hierarchy for q in snap.queues.values())


def of(queues: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]]) -> Table:
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
    order, todo = [], [queuetree.ROOT]
    while todo:  # depth first, so each level's children follow it
        order.append(todo.pop())
        todo.extend(reversed(tree.children.get(order[-1], ())))
    rows = []
    for node in order:
        level = figures[node]
        limited = np.isfinite(level.real)
        info = snap.queues.get(node) if node not in tree.virtual else None
        rows.append(
            Level(
                label=tree.label(node),
                depth=len(tree.path(node)) - 1,
                state=info.state if info is not None else "",
                allocated=resources.from_vector(
                    sum((held.get(leaf, zero) for leaf in tree.leaves_under(node)), zero), dims
                ),
                deserved=resources.from_vector(level.deserved, dims),
                capability=resources.from_vector(np.where(limited, level.real, 0), dims) if limited.any() else None,
            )
        )
    return Table(levels=tuple(rows), broken=dict(tree.broken))
