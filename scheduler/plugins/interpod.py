"""Pod affinity and anti-affinity, as kube-scheduler's InterPodAffinity plugin: filter and score. Pure.

Not a plugin of its own (Volcano has none): ``predicates`` asks ``InterPod.checks`` and
``nodeorder`` asks ``InterPod.score``, over every node row, from the session's ``topology`` counts (pods placed this
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

import math

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot
from scheduler.framework import scored, session, topology

__all__ = [
    "AFFINITY",
    "ANTI_AFFINITY",
    "EXISTING_ANTI_AFFINITY",
    "HARD_WEIGHT",
    "Counted",
    "InterPod",
    "Mask",
    "Scores",
]

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_WEIGHT = 1  # kube-scheduler's hardPodAffinityWeight default

Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float64]
Counted = list[tuple[str, topology.Count, float]]  # (topology key, count, weight)
_PREFERRED = (topology.PREFERRED_AFFINITY, topology.PREFERRED_ANTI)


class InterPod:
    """The filter and the score over one session; the counts a task's own terms read are
    looked up once per task shape (the terms are part of it), held terms once per task."""

    def __init__(self, ssn: session.Session) -> None:
        self.topo = ssn.topology
        self.rows = len(ssn.snapshot.nodes)
        self._own: dict[tuple[int, str], Counted] = {}
        self._zeros = np.zeros(self.rows)  # no score anywhere: shared, never written
        self._zeros.flags.writeable = False

    def topological(self, task: snapshot.Task, *, scores: bool) -> bool:
        """Whether ``checks`` (``scores`` false) or ``score`` (true) has anything to say on ``task``."""
        if not self.topo.active:
            return False
        placement, held = task.placement, self.topo.held(task)
        if scores:
            own = placement.preferred_affinity or placement.preferred_anti_affinity
            return bool(own) or any(r in held for r in (topology.REQUIRED_AFFINITY, *_PREFERRED))
        return bool(placement.affinity or placement.anti_affinity) or topology.REQUIRED_ANTI in held

    def checks(self, task: snapshot.Task) -> list[tuple[str, Mask]]:
        placement = task.placement
        out = []
        if placement.affinity:
            out.append((AFFINITY, self._affinity(task)))
        if placement.anti_affinity:
            out.append((ANTI_AFFINITY, self._none_near(self._counted(task, "anti"))))
        held = self.topo.held(task).get(topology.REQUIRED_ANTI)
        if held:
            out.append((EXISTING_ANTI_AFFINITY, self._none_near([(t.topology_key, c, 1.0) for t, c in held])))
        return out

    def score(self, task: snapshot.Task, feasible: Mask, weight: float) -> Scores | None:
        by_key = self._by_key(self._scoring(task))
        if not by_key:
            return None
        if len(by_key) == 1:
            ((key, sums),) = by_key.items()
            if not self.topo.identity(key):
                # One key with domains wider than a node: each row's raw score is its domain's,
                # so the extremes over the feasible rows are those over the domains they are in,
                # and the scaling is done per domain, then spread over the rows (same values).
                # Every domain alike (nothing counted yet, as a rule): no extremes to look for.
                alike = sums.max() <= sums.min()
                scaled = None if alike else _scaled(sums, sums[self.topo.present(key, feasible)], weight)
                return self._zeros if scaled is None else self.topo.per_row(scaled, key)
        raw = self._weighted(by_key)
        scaled = _scaled(raw, raw[feasible], weight)
        return self._zeros if scaled is None else scaled

    def split(self, task: snapshot.Task, weight: float) -> scored.Part | None:
        """``score`` for copies of ``task`` placed one after another (``framework.scored``), when
        every term it reads, the copies' own included, is on one key wider than a node; else None."""
        p = task.placement
        terms = (*p.affinity, *p.anti_affinity, *p.preferred_affinity, *p.preferred_anti_affinity)
        keys = {t.topology_key for t in terms}
        held = self.topo.held(task)
        keys |= {t.topology_key for role in (topology.REQUIRED_AFFINITY, *_PREFERRED) for t, _ in held.get(role, ())}
        if len(keys) != 1 or self.topo.identity(next(iter(keys))):
            return None
        return _Split(self, task, keys.pop(), weight)

    def _scoring(self, task: snapshot.Task) -> Counted:
        """What ``score`` sums: the task's preferred terms, and the terms placed pods hold that match it."""
        held = self.topo.held(task)
        parts = list(self._counted(task, "preferred"))
        parts += [(t.topology_key, c, float(HARD_WEIGHT)) for t, c in held.get(topology.REQUIRED_AFFINITY, ())]
        parts += [(t.topology_key, c, float(t.weight)) for t, c in held.get(topology.PREFERRED_AFFINITY, ())]
        parts += [(t.topology_key, c, -float(t.weight)) for t, c in held.get(topology.PREFERRED_ANTI, ())]
        return parts

    def _counted(self, task: snapshot.Task, which: str) -> Counted:
        found = self._own.get((task.shape, which))
        if found is None:
            placement, topo = task.placement, self.topo
            if which == "anti":
                found = [(t.topology_key, topo.count((t.pods,)), 1.0) for t in placement.anti_affinity]
            elif which == "affinity":
                count = topo.count(tuple(t.pods for t in placement.affinity))
                found = [(key, count, 1.0) for key in dict.fromkeys(t.topology_key for t in placement.affinity)]
            else:
                found = [(t.topology_key, topo.count((t.pods,)), float(t.weight)) for t in placement.preferred_affinity]
                found += [
                    (t.topology_key, topo.count((t.pods,)), -float(t.weight)) for t in placement.preferred_anti_affinity
                ]
            self._own[(task.shape, which)] = found
        return found

    def _by_key(self, parts: Counted) -> dict[str, Scores]:
        """Σ weight × count per domain, for each topology key."""
        sums: dict[str, Scores] = {}
        for key, count, weight in parts:
            if weight:
                part = self.topo.domain(count, key)
                part = part if weight == 1 else weight * part
                sums[key] = part if key not in sums else sums[key] + part
        return sums

    def _none_near(self, parts: Counted) -> Mask:
        """Rows in whose domain (of each key) no counted pod is."""
        ok: Mask | None = None
        for key, sums in self._by_key(parts).items():
            clear = self.topo.per_row(sums == 0, key)
            ok = clear if ok is None else ok & clear
        return np.ones(self.rows, dtype=bool) if ok is None else ok

    def _weighted(self, by_key: dict[str, Scores]) -> Scores:
        """Σ over the keys of each row's domain sum (``by_key`` not empty)."""
        raw: Scores | None = None
        for key, sums in by_key.items():
            part = self.topo.per_row(sums, key)
            raw = part if raw is None else raw + part
        assert raw is not None
        return raw

    def _affinity(self, task: snapshot.Task) -> Mask:
        """In every term's domain a pod matching all terms, or none anywhere and the pod matches
        them itself (nodes without the keys are refused statically, so they pass here)."""
        parts = self._counted(task, "affinity")
        count = parts[0][1]
        nowhere = not any(self.topo.domain(count, key).any() for key, _, _ in parts)
        if nowhere and all(t.pods.matches(task.namespace, task.labels) for t in task.placement.affinity):
            return np.ones(self.rows, dtype=bool)
        ok: Mask | None = None
        for key, _, _ in parts:
            sums = self.topo.domain(count, key)
            near = sums > 0
            near[-1] = True  # no key: refused statically, not counted twice
            here = self.topo.per_row(near, key)
            ok = here if ok is None else ok & here
        assert ok is not None
        return ok


class _Split:
    """``InterPod.score`` on one key wider than a node, at some rows (``scored.Part``): the same
    per-domain sums and scaling, the extremes over the domains the view says hold a feasible row."""

    def __init__(self, interpod: InterPod, task: snapshot.Task, key: str, weight: float) -> None:
        self.key = key
        self._interpod, self._task, self._weight = interpod, task, weight

    def special(self) -> list[int]:
        return []

    def values(self, view: scored.View) -> scored.Value:
        sums = self._interpod._by_key(self._interpod._scoring(self._task)).get(self.key)
        if sums is None:
            return scored.Value(None, 0.0, {})
        raw = sums.tolist()
        feasible = [value for value, here in zip(raw, view.present(), strict=True) if here]
        return scored.Value(_scaled_values(raw, feasible, self._weight), 0.0, {})

    def add(self, row: int) -> None:
        pass  # the session's counts have the copy


def _scaled_values(raw: list[float], feasible: list[float], weight: float) -> list[float] | None:
    """``_scaled`` one value at a time, for a few domains: the same operations in its order (so
    the same floats, but for the sign of a zero)."""
    if not feasible:
        return None
    low, high = min(feasible), max(feasible)
    if high <= low:
        return None
    span = high - low
    scaled = [float(math.trunc((value - low) / span * 100.0)) for value in raw]
    return scaled if weight == 1 else [value * weight for value in scaled]


def _scaled(raw: Scores, feasible: Scores, weight: float) -> Scores | None:
    """100 × ((s − min) / (max − min)) over ``raw``, min and max over the ``feasible`` values, as
    Go: truncated, times ``weight``; None when max ≤ min (every feasible score 0). A new array."""
    if not len(feasible):
        return None
    low, high = float(feasible.min()), float(feasible.max())
    if high <= low:
        return None
    scaled: Scores = np.subtract(raw, low)  # then in place
    scaled /= high - low
    scaled *= 100.0
    np.trunc(scaled, out=scaled)
    if weight != 1:
        scaled *= weight
    return scaled
