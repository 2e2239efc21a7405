"""The queue tree: where each Queue sits under ``root``, from ``spec.parent`` or Volcano's older annotations. Pure.

``build(queues)`` returns a :class:`Tree` of nodes. A node is a Queue (by name) or, for a level
of an annotation path that no Queue stands for, the path itself (``"root/eng"``: a ``/`` is
never in a Queue's name, so the two cannot collide). ``root`` is always the top node, whether or
not a Queue of that name exists.

A queue's place, first that applies:

- ``spec.parent``: that queue is its parent (``root`` when it names ``root``);
- ``volcano.sh/hierarchy: "root/eng/prod"`` with ``volcano.sh/hierarchy-weights: "1/2/8"``
  (Volcano's hdrf form): the queue is the path's last level, the levels before it are nodes
  ``root/eng`` …, each with the weight written for it (the queue itself gets the last one). A
  path that does not start with ``root`` gets ``root/`` and a weight ``1/`` in front, as
  Volcano's queue webhook writes them. Where two queues give a shared level different weights,
  the queue first by name decides;
- neither: directly under ``root`` (Volcano's default parent).

A queue whose place cannot be had (its parent does not exist, the parents go round in a cycle,
the annotations do not parse or differ in length, a weight is not a positive number), and every
queue under it, is left out of the tree and listed in ``broken`` with the reason: jobs in it are
refused with that message, while the rest of the tree schedules (Volcano stops the whole session).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from bridge import defaults, keys
from scheduler.api import snapshot

__all__ = ["ROOT", "Tree", "build"]

ROOT = defaults.ROOT_QUEUE


@dataclasses.dataclass(frozen=True, slots=True)
class Tree:
    parent: Mapping[str, str]  # node → its parent; every node but root
    children: Mapping[str, tuple[str, ...]]  # node → its children, by name; leaves absent
    weights: Mapping[str, float]  # nodes placed by the annotations → their hierarchy weight
    broken: Mapping[str, str]  # queue → why it has no place in the tree
    virtual: frozenset[str]  # nodes that are no Queue: annotation levels, and root when no Queue is

    @property
    def nodes(self) -> tuple[str, ...]:
        """Every node, parents before their children (root first), siblings by name."""
        out = [ROOT]
        for node in out:
            out.extend(self.children.get(node, ()))
        return tuple(out)

    def path(self, node: str) -> tuple[str, ...]:
        """The nodes from root down to ``node``, both included."""
        out = [node]
        while out[-1] in self.parent:
            out.append(self.parent[out[-1]])
        return tuple(reversed(out))

    def is_leaf(self, node: str) -> bool:
        return not self.children.get(node)

    def leaves_under(self, node: str) -> tuple[str, ...]:
        """The leaf nodes in ``node``'s subtree (``node`` itself when it is a leaf)."""
        out, todo = [], [node]
        while todo:
            current = todo.pop()
            below = self.children.get(current, ())
            if not below:
                out.append(current)
            todo.extend(below)
        return tuple(sorted(out))

    def label(self, node: str) -> str:
        """How a person names the node: the Queue's name, or an annotation level's own name."""
        return node.rsplit("/", 1)[-1] if node in self.virtual else node


def _annotation_path(queue: snapshot.Queue) -> tuple[list[str], list[float]] | str:
    """The annotation form's (path, weights) with root in front, or why it does not parse."""
    path = [p.strip() for p in (queue.hierarchy or "").split("/")]
    raw = [w.strip() for w in (queue.hierarchy_weights or "").split("/")] if queue.hierarchy_weights else []
    if any(not p for p in path):
        return f"its annotation {keys.HIERARCHY}={queue.hierarchy!r} has an empty level"
    if not raw:
        raw = ["1"] * len(path)
    if len(raw) != len(path):
        return (
            f"its annotations {keys.HIERARCHY}={queue.hierarchy!r} and "
            f"{keys.HIERARCHY_WEIGHTS}={queue.hierarchy_weights!r} differ in length"
        )
    try:
        weights = [float(w) for w in raw]
    except ValueError:
        weights = []
    if not weights or any(not w > 0 for w in weights):
        return f"its annotation {keys.HIERARCHY_WEIGHTS}={queue.hierarchy_weights!r} is not positive numbers"
    if path[0] != ROOT:
        path, weights = [ROOT, *path], [1.0, *weights]
    if len(path) < 2:
        return f"its annotation {keys.HIERARCHY}={queue.hierarchy!r} names no level below root"
    return path, weights


def build(queues: Mapping[str, snapshot.Queue]) -> Tree:
    parent: dict[str, str] = {}
    weights: dict[str, float] = {}
    broken: dict[str, str] = {}
    virtual: set[str] = set() if ROOT in queues else {ROOT}
    for name in sorted(queues):
        queue = queues[name]
        if name == ROOT:
            continue
        if queue.parent:
            if queue.parent != ROOT and queue.parent not in queues:
                broken[name] = f"its parent queue {queue.parent!r} does not exist"
            else:
                parent[name] = queue.parent
            continue
        if not queue.hierarchy:
            parent[name] = ROOT
            continue
        parsed = _annotation_path(queue)
        if isinstance(parsed, str):
            broken[name] = parsed
            continue
        path, path_weights = parsed
        above = ROOT
        for depth in range(1, len(path) - 1):
            level = "/".join(path[: depth + 1])
            virtual.add(level)
            parent.setdefault(level, above)
            weights.setdefault(level, path_weights[depth])
            above = level
        parent[name] = above
        weights[name] = path_weights[-1]
    _break_cycles(parent, broken)
    children: dict[str, list[str]] = {}
    for node, up in parent.items():
        children.setdefault(up, []).append(node)
    return Tree(
        parent=parent,
        children={node: tuple(sorted(below)) for node, below in children.items()},
        weights=weights,
        broken=broken,
        virtual=frozenset(virtual),
    )


def _break_cycles(parent: dict[str, str], broken: dict[str, str]) -> None:
    """Move every node that does not reach root (a cycle, or under a broken queue) to ``broken``."""
    origin: dict[str, str | None] = {ROOT: None}  # node → the broken queue that cuts it off (None: reaches root)
    for start in sorted(parent):
        trail: list[str] = []
        node = start
        while node not in origin and node in parent and node not in trail:
            trail.append(node)
            node = parent[node]
        if node in trail:  # a cycle: name it from where it closes
            ring = trail[trail.index(node) :]
            for member in ring:
                broken[member] = f"its parents go round in a cycle: {' -> '.join([*ring, node])}"
                origin[member] = member
        cut = origin.get(node, node)  # a node outside ``parent`` is a broken queue itself
        for member in reversed(trail):
            if member in origin:
                continue
            origin[member] = cut
            if cut is not None:
                broken[member] = f"its ancestor queue {cut!r} has no place in the tree: {broken.get(cut, 'missing')}"
    for node, cut in origin.items():
        if cut is not None:
            parent.pop(node, None)
