"""Pod affinity and anti-affinity, as kube-scheduler's InterPodAffinity plugin: filter and score. Pure.

Not a plugin of its own (Volcano has none): ``predicates`` asks ``checks`` and ``nodeorder``
asks ``score``, over every node row, from the session's ``topology`` counts (pods placed this
cycle included, so a gang's earlier members count for its later ones).

Filter, for a pod P on a node N (each check a reason of its own, in kube-scheduler's order):

- P's required affinity: N has every term's topology key, and in N's domain of each there is a
  pod matching *all* of P's terms; unless no such pod exists anywhere and P matches its own
  terms (the first pod of a group that attracts itself);
- P's required anti-affinity: in N's domain of each term's key no pod matches the term (a node
  without the key is fine);
- existing pods' required anti-affinity (symmetry): no pod in N's domain holds a term that
  matches P.

Score (preferred terms), as PreScore, Score and NormalizeScore: per domain, + weight for each
pod matching one of P's preferred affinity terms, - weight per match of a preferred
anti-affinity term; symmetrically, + weight (hard weight 1, kube-scheduler's default, for a
required term) for each placed pod whose affinity term matches P, - weight for its preferred
anti-affinity. A node sums its domains' values; scores are scaled to 0-100 over the feasible
nodes ((s - min) / (max - min), truncated) and multiplied by nodeorder's ``podaffinity.weight``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.api import podspec, snapshot
from scheduler.framework import topology

__all__ = ["AFFINITY", "ANTI_AFFINITY", "EXISTING_ANTI_AFFINITY", "checks", "score", "topological"]

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_WEIGHT = 1  # kube-scheduler's hardPodAffinityWeight default

Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float64]


def topological(topo: topology.Topology, task: snapshot.Task, *, scores: bool) -> bool:
    """Whether ``checks`` (``scores`` false) or ``score`` (true) has anything to say on ``task``."""
    if not topo.active:
        return False
    placement, held = task.placement, topo.held(task)
    if scores:
        own = placement.preferred_affinity or placement.preferred_anti_affinity
        return bool(own) or any(r in held for r in (topology.REQUIRED_AFFINITY, *_PREFERRED))
    return bool(placement.affinity or placement.anti_affinity) or topology.REQUIRED_ANTI in held


_PREFERRED = (topology.PREFERRED_AFFINITY, topology.PREFERRED_ANTI)


def checks(topo: topology.Topology, task: snapshot.Task) -> list[tuple[str, Mask]]:
    placement = task.placement
    out = []
    if placement.affinity:
        out.append((AFFINITY, _affinity(topo, task)))
    if placement.anti_affinity:
        ok = np.ones(len(topo.snapshot.nodes), dtype=bool)
        for term in placement.anti_affinity:
            ok &= _per_row(topo, topo.count((term.pods,)), term.topology_key) == 0
        out.append((ANTI_AFFINITY, ok))
    held = topo.held(task).get(topology.REQUIRED_ANTI)
    if held:
        ok = np.ones(len(topo.snapshot.nodes), dtype=bool)
        for term, holders in held:
            ok &= _per_row(topo, holders, term.topology_key) == 0
        out.append((EXISTING_ANTI_AFFINITY, ok))
    return out


def _affinity(topo: topology.Topology, task: snapshot.Task) -> Mask:
    terms = task.placement.affinity
    count = topo.count(tuple(t.pods for t in terms))
    ok = np.ones(len(topo.snapshot.nodes), dtype=bool)
    anywhere = False
    for term in terms:
        per_row = _per_row(topo, count, term.topology_key)
        ok &= per_row > 0
        anywhere = anywhere or bool(topo.domain(count, term.topology_key).any())
    if not anywhere and all(t.pods.matches(task.namespace, task.labels) for t in terms):
        ok[:] = True  # the first of its kind (nodes without the keys are refused statically)
    else:
        ok |= ~_all_keys(topo, terms)  # refused statically, not counted twice
    return ok


def _all_keys(topo: topology.Topology, terms: tuple[podspec.PodTerm, ...]) -> Mask:
    ok = np.ones(len(topo.snapshot.nodes), dtype=bool)
    for term in terms:
        ids, size = topo.ids(term.topology_key)
        ok &= ids != size
    return ok


def score(topo: topology.Topology, task: snapshot.Task, feasible: Mask, weight: float) -> Scores | None:
    placement, held = task.placement, topo.held(task)
    raw: Scores | None = None
    parts: list[tuple[podspec.PodTerm, topology.Count, float]] = []
    parts += [(t, topo.count((t.pods,)), float(t.weight)) for t in placement.preferred_affinity]
    parts += [(t, topo.count((t.pods,)), -float(t.weight)) for t in placement.preferred_anti_affinity]
    parts += [(t, c, float(HARD_WEIGHT)) for t, c in held.get(topology.REQUIRED_AFFINITY, ())]
    parts += [(t, c, float(t.weight)) for t, c in held.get(topology.PREFERRED_AFFINITY, ())]
    parts += [(t, c, -float(t.weight)) for t, c in held.get(topology.PREFERRED_ANTI, ())]
    for term, count, sign in parts:
        if not sign:
            continue
        part = sign * _per_row(topo, count, term.topology_key)
        raw = part if raw is None else raw + part
    if raw is None:
        return None
    chosen = raw[feasible]
    low, high = float(chosen.min()), float(chosen.max())
    if high <= low:
        return np.zeros(len(raw))
    scaled: Scores = np.trunc(100.0 * ((raw - low) / (high - low)))
    return scaled if weight == 1 else weight * scaled


def _per_row(topo: topology.Topology, count: topology.Count, key: str) -> Scores:
    """``count`` in each row's domain of ``key`` (0 for rows without the label)."""
    ids, _ = topo.ids(key)
    per_row: Scores = topo.domain(count, key).take(ids)
    return per_row
