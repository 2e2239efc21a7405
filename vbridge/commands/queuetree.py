"""``vbridge queue list``'s tree: each level of the queue tree with what it holds and deserves.

``render(queues, nodes)`` takes the Queues and Nodes as the apiserver lists them and writes the
table of ``scheduler.tools.queuelevels`` (the scheduler's own tree and figures: ``spec.parent``
or the ``volcano.sh/hierarchy`` annotations; capacity's hierarchy); ``is_tree`` is whether any
queue sits below another than root. Queues with no place in the tree follow, with why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.tools import queuelevels

__all__ = ["is_tree", "render"]


def is_tree(queues: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any queue sits below another than root (else the flat table says it all)."""
    return queuelevels.is_tree(queues)


def render(queues: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]]) -> str:
    table = queuelevels.of(queues, nodes)
    rows = [["QUEUE", "STATE", "ALLOCATED", "DESERVED", "CAPABILITY"]]
    for level in table.levels:
        rows.append(
            [
                "  " * level.depth + ("- " if level.depth else "") + level.label,
                level.state,
                level.allocated.human(),
                level.deserved.human(),
                level.capability.human() if level.capability is not None else "unlimited",
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += [f"not in the tree: {name}: {why}" for name, why in sorted(table.broken.items())]
    return "\n".join(lines)
