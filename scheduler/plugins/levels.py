"""The capacity plugin's figures for each node of the queue tree, from the Queues' specs. Pure.

``levels(tree, queues, total, dims, flat=...)`` gives each node a :class:`Level`, as Volcano's
``capacity`` plugin builds its queue attributes (``pkg/scheduler/plugins/capacity``):

- ``capability``: ``spec.capability``, a dimension it does not list is unlimited (Volcano copies
  the parent's, which bounds nothing more, since a child's real capability is within its
  parent's); annotation levels have none;
- ``guarantee``: ``spec.guarantee.resource``; root's is the sum of its children's;
- ``deserved``: ``spec.deserved`` (a dimension it does not list is 0), at least ``guarantee``;
  root's is the sum of its children's. A node placed by Volcano's older annotations and without
  its own ``spec.deserved`` deserves its weight's part of what its parent deserves (root: the
  cluster), after the siblings that state their own: ``volcano.sh/hierarchy-weights`` are hdrf's
  weights, and this is how the capacity plugin gives them their shares;
- ``real``: the real capability: root's is its capability (unlimited when it has none: the
  cluster's nodes are the limit); a child's is ``(parent's real − Σ its siblings' and its own
  guarantees)⁺ + its own guarantee``, within its capability.

``flat=True`` is the plugin without ``enableHierarchy``: every queue directly under a root whose
real capability is the cluster (``total``), each queue's deserved within its real capability;
nothing else differs.

``admission_bounds(tree, figures, request, total)`` is the native backend's hold on shares (no allocate
runs there to keep a queue to its deserved, so admission does): root may hold the cluster
(``total``, within its capability); a node below it the larger of its deserved and what its parent may hold beyond what
its siblings claim (each the smaller of its deserved and its request: allocated + pending),
within its own real capability. A node alone under its parent so takes what it asks, as
proportion's water-filling gives a lone queue, and what nobody deserves goes to whoever asks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from scheduler.api import queuetree, resources, snapshot

__all__ = ["Level", "Vector", "admission_bounds", "levels"]

Vector = npt.NDArray[np.float64]


@dataclasses.dataclass(frozen=True, slots=True)
class Level:
    capability: Vector  # inf where unlimited
    real: Vector  # the real capability
    guarantee: Vector
    deserved: Vector
    stated: bool  # it deserves something (else best-effort: its share counts as 1)


def _limits(queue: snapshot.Queue | None, dims: tuple[str, ...]) -> Vector:
    cap = np.full(len(dims), np.inf)
    if queue is not None and queue.capability is not None:
        for i, name in enumerate(dims):
            if name in queue.capability.names():
                cap[i] = queue.capability.get(name)
    return cap


def levels(
    tree: queuetree.Tree,
    queues: Mapping[str, snapshot.Queue],
    total: Vector,
    dims: tuple[str, ...],
    *,
    flat: bool = False,
) -> dict[str, Level]:
    zero = np.zeros(len(dims))
    order = tree.nodes
    spec = {node: queues.get(node) if node not in tree.virtual else None for node in order}
    guarantee = {n: resources.vector(q.guarantee, dims) if q is not None else zero for n, q in spec.items()}
    stated = {n: q is not None and q.deserved is not None for n, q in spec.items()}
    deserved = {
        n: resources.vector(q.deserved, dims) if q is not None and q.deserved is not None else zero
        for n, q in spec.items()
    }
    pool: dict[str, Vector] = {queuetree.ROOT: total}
    countable = np.array([d != resources.PODS for d in dims], dtype=bool)
    for node in order:  # parents first: a weighted child's part comes from its parent's pool
        below = tree.children.get(node, ())
        weighted = [c for c in below if c in tree.weights and not stated[c]] if not flat else []
        left = np.maximum(pool[node] - sum((deserved[c] for c in below if stated[c]), zero), 0)
        weight = sum(tree.weights[c] for c in weighted)
        for child in weighted:  # pods are no share of anything: a weight gives resources only
            deserved[child] = np.where(countable, left * (tree.weights[child] / weight), 0)
            stated[child] = True
        for child in below:
            pool[child] = deserved[child] if stated[child] else pool[node]
    for node in reversed(order):  # children first: root's sums
        below = tree.children.get(node, ())
        for child in below:
            deserved[child] = np.maximum(deserved[child], guarantee[child])
        if node == queuetree.ROOT:
            guarantee[node] = sum((guarantee[c] for c in below), zero)
            deserved[node] = sum((deserved[c] for c in below), zero)
    capability = {n: _limits(q, dims) for n, q in spec.items()}
    if flat:
        capability[queuetree.ROOT] = total.copy()
    real = {queuetree.ROOT: capability[queuetree.ROOT]}
    for node in order:
        below = tree.children.get(node, ())
        guaranteed = sum((guarantee[c] for c in below), zero)
        for child in below:
            real[child] = np.minimum(np.maximum(real[node] - guaranteed, 0) + guarantee[child], capability[child])
            if flat:
                deserved[child] = np.maximum(np.minimum(deserved[child], real[child]), guarantee[child])
    return {
        node: Level(
            capability=capability[node],
            real=real[node],
            guarantee=guarantee[node],
            deserved=deserved[node],
            stated=bool(np.any(deserved[node] > 0)),
        )
        for node in order
    }


def admission_bounds(
    tree: queuetree.Tree, figures: Mapping[str, Level], request: Mapping[str, Vector], total: Vector
) -> dict[str, Vector]:
    """What each node may hold plus have admitted on the native backend (module docstring)."""
    out = {queuetree.ROOT: np.minimum(figures[queuetree.ROOT].real, total)}
    for node in tree.nodes:  # parents first
        below = [c for c in tree.children.get(node, ()) if c in figures]
        claims = {c: np.minimum(figures[c].deserved, request.get(c, np.zeros_like(out[node]))) for c in below}
        claimed = sum(claims.values(), np.zeros_like(out[node]))
        for child in below:
            room = np.maximum(out[node] - (claimed - claims[child]), 0)
            out[child] = np.minimum(np.maximum(figures[child].deserved, room), figures[child].real)
    return out
