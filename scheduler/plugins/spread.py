"""Topology spread constraints, as kube-scheduler's PodTopologySpread plugin: filter and score. Pure.

Not a plugin of its own (Volcano has none): ``predicates`` asks ``Spreading.checks`` for the
``DoNotSchedule`` constraints and ``nodeorder`` asks ``Spreading.score`` for the
``ScheduleAnyway`` ones, over every node row, from the session's ``topology`` counts (pods
placed this cycle included). Counted are the pods of the pod's namespace that the constraint's
selector matches (an empty selector counts none), not terminating, on *eligible* nodes: nodes
with every constraint's topology key that pass the pod's nodeSelector and required node
affinity (``nodeAffinityPolicy: Honor``, the default) and, with ``nodeTaintsPolicy: Honor``,
have no taint it does not tolerate. The domains of a key are its values on eligible nodes.

Filter: a node without a constraint's key is refused (a static check, ``MISSING``); otherwise
the count in its domain, plus one if the pod matches its own selector, minus the smallest
count over the domains (0 when there are fewer domains than ``minDomains``) must not exceed
``maxSkew``.

Score: nodes without every key score 0; per constraint, count × log(domains among the
feasible nodes + 2) + maxSkew − 1 (for ``kubernetes.io/hostname`` the count on the node
itself, and the feasible nodes as domains), summed and rounded; then scaled as NormalizeScore
does (100 × (max + min − s) / max, 100 everywhere when max is 0) and multiplied by
nodeorder's ``podtopologyspread.weight``. System default constraints (kube-scheduler's, from
the Services and ReplicaSets a pod belongs to) are not applied.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt

from scheduler.api import podspec, snapshot
from scheduler.framework import session, topology

__all__ = ["MISSING", "SKEW", "Spreading"]

SKEW = "node(s) didn't match pod topology spread constraints"
MISSING = SKEW + " (missing required label)"
MAX_COUNT = float(2**31 - 1)  # kube-scheduler's "no domain" minimum: nothing is skewed against it

Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float64]
Ids = npt.NDArray[np.intp]


@dataclasses.dataclass(frozen=True, slots=True)
class _Domains:
    """One constraint's eligible rows and their domains (static for a placement)."""

    rows: Ids
    ids: Ids
    all_keyed: bool  # every row with the key is eligible: the session's own domain sums apply
    present: Mask  # per domain: some eligible row is in it


class Spreading:
    def __init__(self, ssn: session.Session) -> None:
        self.topo = ssn.topology
        self.nodes = ssn.snapshot.nodes
        self._domains: dict[tuple[podspec.Placement, bool], list[_Domains]] = {}
        self._keyed: dict[tuple[podspec.Placement, bool], Mask] = {}

    def topological(self, task: snapshot.Task, *, hard: bool) -> bool:
        return self.topo.active and any(c.hard is hard for c in task.placement.spread)

    def keyed(self, placement: podspec.Placement, *, hard: bool) -> Mask:
        """Rows with every topology key of the placement's hard (or soft) constraints."""
        found = self._keyed.get((placement, hard))
        if found is None:
            found = np.ones(len(self.nodes), dtype=bool)
            for c in placement.spread:
                if c.hard is hard:
                    ids, size = self.topo.ids(c.topology_key)
                    found &= ids != size
            self._keyed[(placement, hard)] = found
        return found

    def checks(self, task: snapshot.Task) -> list[tuple[str, Mask]]:
        placement = task.placement
        constraints = [c for c in placement.spread if c.hard]
        ok = np.ones(len(self.nodes), dtype=bool)
        for c, domains in zip(constraints, self._eligible(placement, hard=True), strict=True):
            ids, size = self.topo.ids(c.topology_key)
            sums = self._sums(c, domains, ids, size)
            present = domains.present
            low = float(sums[:size][present].min()) if present.any() else MAX_COUNT
            if int(present.sum()) < c.min_domains:
                low = 0.0
            own = 1 if c.pods.matches(task.namespace, task.labels) else 0
            ok &= (sums.take(ids) + own - low <= c.max_skew) | (ids == size)  # no key: refused statically
        return [(SKEW, ok)]

    def score(self, task: snapshot.Task, feasible: Mask, weight: float) -> Scores | None:
        placement = task.placement
        constraints = [c for c in placement.spread if not c.hard]
        if not constraints:
            return None
        scored = feasible & self.keyed(placement, hard=False)
        out = np.zeros(len(self.nodes))
        if not scored.any():
            return out
        total = np.zeros(len(self.nodes))
        for c, domains in zip(constraints, self._eligible(placement, hard=False), strict=True):
            ids, size = self.topo.ids(c.topology_key)
            if c.topology_key == podspec.HOSTNAME:
                counts = self._count(c).rows if _counts(c) else np.zeros(len(self.nodes))
                found = int(scored.sum())
            else:
                counts = self._sums(c, domains, ids, size).take(ids)
                found = int(np.count_nonzero(np.bincount(ids[scored], minlength=size + 1)[:size]))
            total += counts * math.log(found + 2) + (c.max_skew - 1)
        raw = np.floor(total + 0.5)  # Go's math.Round: these are never negative
        low, high = float(raw[scored].min()), max(float(raw[scored].max()), 0.0)
        if high == 0:
            out[scored] = 100.0
        else:
            out[scored] = np.floor(100.0 * (high + low - raw[scored]) / high)
        return out if weight == 1 else weight * out

    def _count(self, c: podspec.Spread) -> topology.Count:
        return self.topo.count((c.pods,), live=True)

    def _sums(self, c: podspec.Spread, domains: _Domains, ids: Ids, size: int) -> Scores:
        """Matching pods per domain (size + 1 entries, the last 0), over eligible rows only."""
        if not _counts(c):
            return np.zeros(size + 1)
        count = self._count(c)
        if domains.all_keyed:
            return self.topo.domain(count, c.topology_key)
        sums: Scores = np.bincount(domains.ids, weights=count.rows.take(domains.rows), minlength=size + 1).astype(
            np.float64
        )
        sums[size] = 0
        return sums

    def _eligible(self, placement: podspec.Placement, *, hard: bool) -> list[_Domains]:
        found = self._domains.get((placement, hard))
        if found is None:
            keyed = self.keyed(placement, hard=hard)
            selected = np.array([placement.selects(n.labels) for n in self.nodes], dtype=bool)
            tolerated = np.array([placement.tolerates(n.taints) for n in self.nodes], dtype=bool)
            found = []
            for c in placement.spread:
                if c.hard is not hard:
                    continue
                ids, size = self.topo.ids(c.topology_key)
                eligible = keyed.copy()
                if c.honor_affinity:
                    eligible &= selected
                if c.honor_taints:
                    eligible &= tolerated
                rows = np.flatnonzero(eligible)
                present = np.bincount(ids[rows], minlength=size + 1)[:size] > 0
                all_keyed = bool(np.array_equal(eligible, ids != size))
                found.append(_Domains(rows, ids[rows], all_keyed, present))
            self._domains[(placement, hard)] = found
        return found


def _counts(c: podspec.Spread) -> bool:
    """Whether the constraint counts any pod: kube-scheduler counts none for an empty or null selector."""
    return c.pods.selector is not None and bool(c.pods.selector.requirements)
