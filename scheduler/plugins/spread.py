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
from scheduler.framework import counted, scored, session, topology

__all__ = ["MAX_COUNT", "MISSING", "SKEW", "Ids", "Mask", "Scores", "Spreading"]

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
    count: int  # how many are
    eligible: Mask  # per row


class Spreading:
    """The constraints' static parts are cached by what they depend on (topology keys, the
    pod's node selection and tolerations), not by placement: every gang has a selector of its
    own, but few differ in these."""

    def __init__(self, ssn: session.Session) -> None:
        self.topo = ssn.topology
        self.nodes = ssn.snapshot.nodes
        self._domains: dict[tuple[object, ...], _Domains] = {}
        self._keyed: dict[tuple[str, ...], tuple[Mask, bool]] = {}
        self._selected: dict[tuple[object, ...], Mask] = {}
        self._tolerated: dict[tuple[podspec.Toleration, ...], Mask] = {}

    def topological(self, task: snapshot.Task, *, hard: bool) -> bool:
        return self.topo.active and any(c.hard is hard for c in task.placement.spread)

    def keyed(self, placement: podspec.Placement, *, hard: bool) -> Mask:
        """Rows with every topology key of the placement's hard (or soft) constraints."""
        return self._keyed_every(placement, hard=hard)[0]

    def _keyed_every(self, placement: podspec.Placement, *, hard: bool) -> tuple[Mask, bool]:
        """``keyed``, and whether that is every row (as a rule: then there is nothing to mask)."""
        keys = tuple(sorted({c.topology_key for c in placement.spread if c.hard is hard}))
        found = self._keyed.get(keys)
        if found is None:
            mask = np.ones(len(self.nodes), dtype=bool)
            for key in keys:
                ids, size = self.topo.ids(key)
                mask &= ids != size
            found = self._keyed[keys] = (mask, bool(mask.all()))
        return found

    def checks(self, task: snapshot.Task) -> list[tuple[str, Mask]]:
        placement = task.placement
        ok: Mask | None = None
        for c in placement.spread:
            if not c.hard:
                continue
            domains = self._eligible(placement, c)
            ids, size = self.topo.ids(c.topology_key)
            own = c.pods.matches(task.namespace, task.labels)
            allowed = _allowed(c, domains, self._sums(c, domains, ids, size), size, own)
            here = self.topo.per_row(allowed, c.topology_key)
            ok = here if ok is None else ok & here
        return [(SKEW, np.ones(len(self.nodes), dtype=bool) if ok is None else ok)]

    def rule(self, task: snapshot.Task) -> _Rule | None:
        """``checks`` replayed copy by copy (``framework.counted``) when the task's one constraint
        is ``DoNotSchedule``, counts the task itself, and its key has few domains, wider than a node."""
        if len(task.placement.spread) != 1:
            return None
        (c,) = task.placement.spread
        if not (c.hard and _counts(c) and c.pods.matches(task.namespace, task.labels)):
            return None
        ids, size = self.topo.ids(c.topology_key)
        if size > counted.MAX_DOMAINS or self.topo.identity(c.topology_key):
            return None
        domains = self._eligible(task.placement, c)
        return _Rule(c, domains, self._sums(c, domains, ids, size).copy(), ids, size)

    def score(self, task: snapshot.Task, feasible: Mask, weight: float) -> Scores | None:
        placement = task.placement
        constraints = [c for c in placement.spread if not c.hard]
        if not constraints:
            return None
        keyed, every = self._keyed_every(placement, hard=False)
        scored = feasible if every else feasible & keyed
        if not scored.any():
            return np.zeros(len(self.nodes))
        (c, *others) = constraints
        if not others and c.topology_key == podspec.HOSTNAME and _counts(c):
            out = self._host_only(c, scored, weight)  # weighted on its few distinct values
        else:
            out = self._scaled(self._raw(placement, constraints, scored), scored)
            if weight != 1:
                out *= weight
        if not every:  # × 1 or × 0 after × weight: the same values as before it
            out *= keyed  # nodes without every key are not scored (0)
        return out

    def _raw(self, placement: podspec.Placement, constraints: list[podspec.Spread], scored: Mask) -> Scores:
        """Each row's summed, rounded score before scaling (a fresh array)."""
        total: Scores | None = None  # a fresh array: changed in place below
        for c in constraints:
            if c.topology_key == podspec.HOSTNAME:  # the node's own count; the feasible nodes as domains
                counts = self._count(c).rows if _counts(c) else np.zeros(len(self.nodes))
                part = _on_hosts(counts, int(np.count_nonzero(scored)), c)
            else:
                ids, size = self.topo.ids(c.topology_key)
                found = int(np.count_nonzero(np.bincount(ids[scored], minlength=size + 1)[:size]))
                sums = self._sums(c, self._eligible(placement, c), ids, size)
                part = self.topo.per_row(sums * math.log(found + 2), c.topology_key)
                part += c.max_skew - 1
            total = part if total is None else np.add(total, part, out=total)
        assert total is not None
        return _rounded(total)

    @staticmethod
    def _scaled(raw: Scores, scored: Mask) -> Scores:
        """NormalizeScore over the scored rows, in place."""
        low = float(np.where(scored, raw, np.inf).min())  # ``min(where=…)`` costs several times more
        high = max(float(np.where(scored, raw, 0.0).max()), 0.0)
        if not high:
            return np.full(len(raw), 100.0)
        raw *= -100.0  # 100 × (max + min − s) / max in Go's int64 division: exact here, whole numbers
        raw += 100.0 * (high + low)
        raw /= high
        return np.floor(raw, out=raw)

    def split(self, task: snapshot.Task, weight: float) -> scored.Part | None:
        """``score`` for copies of ``task`` placed one after another (``framework.scored``), when
        it is one constraint on the hostname, every row has, that counts pods; else None."""
        constraints = [c for c in task.placement.spread if not c.hard]
        if len(constraints) != 1 or not self._keyed_every(task.placement, hard=False)[1]:
            return None
        (c,) = constraints
        return _HostSplit(c, self._count(c), weight) if c.topology_key == podspec.HOSTNAME and _counts(c) else None

    def _host_only(self, c: podspec.Spread, scored: Mask, weight: float) -> Scores:
        """``_scaled(_raw(...)) × weight`` for one constraint on the hostname, worked out on the
        rows with a counted pod plus one standing for all the others (their raw scores are
        alike), then spread over the rows: the same operations on the same values."""
        counts = self._count(c).rows
        busy = (counts != 0).nonzero()[0]  # faster than flatnonzero on floats
        scaled = self._on_busy(c, counts.take(busy), int(np.count_nonzero(scored)), scored[busy], weight)
        out = np.full(len(counts), scaled[0])
        out[busy] = scaled[1:]
        return out

    def _on_busy(self, c: podspec.Spread, counts: Scores, domains: int, busy_scored: Mask, weight: float) -> Scores:
        """``_host_only``'s values: for the rows without a counted pod, then for those with
        (``counts``, ``busy_scored``), ``domains`` rows scored."""
        raw = _rounded(_on_hosts(np.concatenate(([0.0], counts)), domains, c))
        idle_scored = domains > int(np.count_nonzero(busy_scored))  # some scored row has no counted pod
        scaled = self._scaled(raw, np.concatenate(([idle_scored], busy_scored)))
        if weight != 1:
            scaled *= weight
        return scaled

    def _count(self, c: podspec.Spread) -> topology.Count:
        return self.topo.count((c.pods,), live=True)

    def _sums(self, c: podspec.Spread, domains: _Domains, ids: Ids, size: int) -> Scores:
        """Matching pods per domain (size + 1 entries, the last 0), over eligible rows only."""
        if not _counts(c):
            return np.zeros(size + 1)
        count = self._count(c)
        if domains.all_keyed:
            return self.topo.domain(count, c.topology_key)
        weights = count.rows.take(domains.rows)
        sums: Scores = np.bincount(domains.ids, weights=weights, minlength=size + 1).astype(np.float64)
        sums[size] = 0
        return sums

    def _eligible(self, placement: podspec.Placement, c: podspec.Spread) -> _Domains:
        keys = tuple(sorted({o.topology_key for o in placement.spread if o.hard is c.hard}))
        selection = (placement.node_selector, placement.node_affinity) if c.honor_affinity else None
        tolerations = placement.tolerations if c.honor_taints else None
        cache = (c.hard, keys, c.topology_key, selection, tolerations)
        found = self._domains.get(cache)
        if found is None:
            eligible = self.keyed(placement, hard=c.hard).copy()
            if selection is not None and (placement.node_selector or placement.node_affinity):
                selected = self._selected.get(selection)
                if selected is None:
                    selected = np.array([placement.selects(n.labels) for n in self.nodes], dtype=bool)
                    self._selected[selection] = selected
                eligible &= selected
            if tolerations is not None:
                tolerated = self._tolerated.get(tolerations)
                if tolerated is None:
                    tolerated = np.array([placement.tolerates(n.taints) for n in self.nodes], dtype=bool)
                    self._tolerated[tolerations] = tolerated
                eligible &= tolerated
            ids, size = self.topo.ids(c.topology_key)
            rows = np.flatnonzero(eligible)
            present = np.bincount(ids[rows], minlength=size + 1)[:size] > 0
            all_keyed = bool(np.array_equal(eligible, ids != size))
            found = _Domains(rows, ids[rows], all_keyed, present, int(present.sum()), eligible)
            self._domains[cache] = found
        return found


class _Rule:
    """One ``DoNotSchedule`` constraint's check for a run's next copy (``counted.Rule``), from the
    counts when the run starts plus one per copy placed on an eligible row (the run matches it)."""

    def __init__(self, c: podspec.Spread, domains: _Domains, sums: Scores, ids: Ids, size: int) -> None:
        self.key = c.topology_key
        self._c, self._domains, self._sums, self._ids, self._size = c, domains, sums, ids, size

    def allowed(self) -> Mask:
        return _allowed(self._c, self._domains, self._sums, self._size, own=True)

    def add(self, row: int) -> None:
        if self._domains.eligible[row]:
            self._sums[self._ids[row]] += 1


class _HostSplit:
    """``Spreading.score`` for one hostname constraint every row has, at some rows
    (``scored.Part``): the rows with a counted pod are the special ones."""

    key = None

    def __init__(self, c: podspec.Spread, count: topology.Count, weight: float) -> None:
        self._c, self._count, self._weight = c, count, weight
        self._busy: list[int] = []  # rows with a counted pod, from ``special`` on

    def special(self) -> list[int]:
        self._busy = (self._count.rows != 0).nonzero()[0].tolist()
        return self._busy

    def values(self, view: scored.View) -> scored.Value:
        if not view.total:
            return scored.Value(None, 0.0, {})
        busy = self._busy
        counts = self._count.rows.take(busy).tolist() if busy else []
        flat, *each = _on_busy_values(self._c, counts, view.total, [view.fits(row) for row in busy], self._weight)
        return scored.Value(None, flat, dict(zip(busy, each, strict=True)))

    def add(self, row: int) -> None:
        if self._count.rows[row] != 0 and row not in self._busy:
            self._busy.append(row)


def _allowed(c: podspec.Spread, domains: _Domains, sums: Scores, size: int, own: bool) -> Mask:
    """Per domain (``sums``: its matching pods, size + 1 entries): whether one more pod there (one
    the selector matches when ``own``) keeps the skew within ``maxSkew``."""
    low = float(sums[:size][domains.present].min()) if domains.count else MAX_COUNT
    if domains.count < c.min_domains:
        low = 0.0
    allowed: Mask = sums <= c.max_skew + low - (1 if own else 0)
    allowed[size] = True  # no key: refused statically, not counted twice
    return allowed


def _counts(c: podspec.Spread) -> bool:
    """Whether the constraint counts any pod: kube-scheduler counts none for an empty or null selector."""
    return c.pods.selector is not None and bool(c.pods.selector.requirements)


def _on_hosts(counts: Scores, domains: int, c: podspec.Spread) -> Scores:
    """A hostname constraint's part of the raw score, from each row's own count (a fresh array)."""
    part = counts * math.log(domains + 2)
    part += c.max_skew - 1
    return part


def _on_busy_values(
    c: podspec.Spread, counts: list[float], domains: int, busy_scored: list[bool], weight: float
) -> list[float]:
    """``Spreading._on_busy`` one value at a time, for a few rows: the same operations in its
    order (``_on_hosts``, ``_rounded``, ``Spreading._scaled``), so the same floats."""
    log, skew = math.log(domains + 2), c.max_skew - 1
    raw = [float(math.floor(count * log + skew + 0.5)) for count in (0.0, *counts)]
    scored_ = [domains > sum(busy_scored), *busy_scored]
    low = min((value for value, s in zip(raw, scored_, strict=True) if s), default=math.inf)
    high = max((value for value, s in zip(raw, scored_, strict=True) if s), default=0.0)
    if high <= 0.0:
        scaled = [100.0] * len(raw)
    else:
        top = 100.0 * (high + low)
        scaled = [float(math.floor((value * -100.0 + top) / high)) for value in raw]
    return scaled if weight == 1 else [value * weight for value in scaled]


def _rounded(total: Scores) -> Scores:
    """Go's math.Round, in place: these are never negative."""
    total += 0.5
    return np.floor(total, out=total)
