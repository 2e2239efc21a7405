"""Pods per node row and per topology domain, kept current as the cycle places pods. Session state.

Pod affinity, anti-affinity and topology spread ask how many pods of some kind sit in a node's
topology domain (the nodes sharing its value of a label such as ``topology.kubernetes.io/zone``).
Counting pods for that on every decision would cost a scan of every pod per node; instead:

- ``ids(key)``: each node row's domain of a topology key, as one integer array (rows without
  the label get ``size``, an extra domain whose count is always 0), computed once per key;
- a ``Count`` per pod selector some pod's terms name (``count``): matching pods per row, and
  per domain of each key asked for, kept up to date one pod at a time;
- a ``Count`` per term some pod holds (``held``): the pods holding it per row and domain, so
  an existing pod's anti-affinity (and, for scores, its affinity) can turn a newcomer away.

Counts start from the snapshot's pods on nodes (through an index by label value, built once)
and follow every pod the session allocates, pipelines, rolls back or evicts: ``Session``
calls ``add``, ``drop``, ``evict`` and ``unevict`` from its ``apply_*``/``undo_*``, so a
statement's earlier placements count for its later members and a discard takes them back.
Evicted pods are terminating: topology spread stops counting them, pod affinity does not (as
kube-scheduler). Everything is built at session open from the terms the snapshot's pods hold
(``Snapshot.placed_terms``) and the pending pods' own terms (``Tally.constrained``); a selector
asked for later (a placed pod's own, as a rule) is counted then, from the snapshot and this
cycle's placements. A key whose domains are the rows themselves (the hostname) reads the rows'
own counts (``Count.padded``): no second array to keep. ``active`` is false when no pod has any
such term: then every call returns at once and nothing is kept.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from scheduler.api import podspec, snapshot
from scheduler.framework import domains

__all__ = [
    "PREFERRED_AFFINITY",
    "PREFERRED_ANTI",
    "REQUIRED_AFFINITY",
    "REQUIRED_ANTI",
    "Array",
    "Count",
    "Selectors",
    "Topology",
]

Array = npt.NDArray[np.float64]
Selectors = tuple[podspec.PodSelector, ...]  # a pod counts when it matches every one

# The roles in which a placed pod holds a term (``Topology.held``).
REQUIRED_ANTI = "required-anti-affinity"
REQUIRED_AFFINITY = "required-affinity"
PREFERRED_AFFINITY = "preferred-affinity"
PREFERRED_ANTI = "preferred-anti-affinity"


_NO_HELD: Mapping[str, list[tuple[podspec.PodTerm, Count]]] = types.MappingProxyType({})
_NO_COUNTS: list[tuple[_Key, Count]] = []  # shared, never changed


@dataclasses.dataclass(slots=True)
class Count:
    """Pods per node row (``rows``) and per domain of each key in ``domains`` (arrays of size + 1).

    ``rows`` is a view of ``padded``, one entry longer and its last always 0: the domains of a
    key whose domains are the rows themselves (the hostname), kept with no copy to update."""

    padded: Array
    rows: Array
    domains: dict[str, Array] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class _Key:
    selectors: Selectors
    live: bool  # terminating pods left out (topology spread)


class Topology(domains.Domains):
    def __init__(self, snap: snapshot.Snapshot) -> None:
        super().__init__(snap.nodes)
        self.snapshot = snap
        cols = snap.columns
        self.active = bool(cols.constrained or snap.placed_terms)
        self._counts: dict[_Key, Count] = {}
        self._by_label: dict[tuple[str, str], list[tuple[_Key, Count]]] = {}
        self._unindexed: list[tuple[_Key, Count]] = []
        self._held: dict[tuple[str, podspec.PodTerm], Count] = {}
        self._held_by_label: dict[tuple[str, str], list[tuple[str, podspec.PodTerm]]] = {}
        self._held_unindexed: list[tuple[str, podspec.PodTerm]] = []
        self._held_rows: dict[tuple[str, podspec.PodTerm], list[int]] = {}  # holders not yet counted
        # What a task matches depends on its namespace and labels only: memos by those, so a
        # gang's pods (labelled alike) look up once.
        self._memo: dict[tuple[object, ...], list[tuple[_Key, Count]]] = {}  # → the counts it is in
        self._own: dict[int, list[Count]] = {}  # Task.shape → the held counts of its own terms
        self._held_memo: dict[tuple[object, ...], Mapping[str, list[tuple[podspec.PodTerm, Count]]]] = {}
        # This cycle's placements and their rollbacks, in order (rows, tasks alike in labels, +1 or
        # -1): what a count registered late replays. A list, not a map of placed tasks: one append
        # per gang, and the replay nets each rolled-back placement out.
        self._moves: list[tuple[list[int], list[snapshot.Task], int]] = []
        self._evicted: set[str] = set()
        self._zeros: Array = np.zeros(len(snap.nodes) + 1)  # padded: see ``Count``
        self._zeros.flags.writeable = False
        self._pods_by_label: dict[tuple[str, str], list[int]] = {}
        self._indexed: set[str] = set()  # label keys ``_pods_by_label`` covers
        if not self.active:
            return
        tasks = snap.tasks
        # Rows of the pods holding each placement's terms, by placement object (alike pods share one).
        holders: dict[int, tuple[podspec.Placement, list[int]]] = {}
        for row, placement in snap.placed_terms:
            holders.setdefault(id(placement), (placement, []))[1].append(row)
        shapes: set[int] = set()  # equal shape, equal placement: registered once (a gang's pods alike)
        for key in cols.constrained:
            task = tasks[key]
            if task.shape in shapes or task.status is not snapshot.TaskStatus.PENDING:
                continue  # a placed pod's own counts are read only if it is placed again: counted then
            shapes.add(task.shape)
            self._register_own(task.placement)
            holders.setdefault(id(task.placement), (task.placement, []))  # pending: holds its terms once placed
        for placement, rows in holders.values():
            for role, term in _held_terms(placement):
                self._held_count(role, term)  # registered; counted on first read (most never are)
                if rows:
                    self._held_rows.setdefault((role, term), []).extend(rows)

    # --- domain sums (the domains themselves: ``domains.Domains``) --------------------
    def domain(self, count: Count, key: str) -> Array:
        """``count`` per domain of ``key`` (size + 1 entries, the last always 0); kept up to date."""
        sums = count.domains.get(key)
        if sums is None:
            ids, size = self.ids(key)
            if key in self._identity:  # a domain per row, in row order: the rows' own counts
                self._writable(count)  # its own array now: the one returned stays current
                return count.padded
            sums = np.zeros(size + 1)  # all there is when nothing was counted yet (a gang's own pods)
            if count.padded is not self._zeros:
                sums[:] = np.bincount(ids, weights=count.rows, minlength=size + 1)
                sums[size] = 0
            count.domains[key] = sums
        return sums

    # --- counts -------------------------------------------------------------------------
    def count(self, selectors: Selectors, *, live: bool = False) -> Count:
        """Pods matching every selector (not terminating ones when ``live``), per row and domain."""
        key = _Key(selectors, live)
        found = self._counts.get(key)
        if found is None:
            found = self._new_count(key)
            for rows, tasks, delta in self._moves:  # registered late: this cycle's pods too
                if not _matches(key, tasks[0]):  # tasks of a move are labelled alike
                    continue
                for task, row in zip(tasks, rows, strict=True):
                    if not (live and task.key in self._evicted):
                        self._writable(found)[row] += delta
            self._memo.clear()
        return found

    def held(self, task: snapshot.Task) -> Mapping[str, list[tuple[podspec.PodTerm, Count]]]:
        """Role → the terms some pod holds in that role that match ``task``, with their holders."""
        if not (self._held_unindexed or _indexed(task, self._held_by_label)):
            return _NO_HELD  # no term any pod holds is indexed under one of its labels: none matches
        memo = (task.namespace, *task.labels.items())
        found = self._held_memo.get(memo)
        if found is None:
            matched: dict[str, list[tuple[podspec.PodTerm, Count]]] = {}
            if self.active:
                by_label = self._held_by_label
                candidates = [hit for label in task.labels.items() for hit in by_label.get(label, ())]
                candidates += self._held_unindexed
                for role, term in dict.fromkeys(candidates):
                    if term.pods.matches(task.namespace, task.labels):
                        matched.setdefault(role, []).append((term, self._held_count(role, term)))
            # Shared when empty: most tasks match no term, and keeping nothing for them spares the GC.
            found = self._held_memo[memo] = matched or _NO_HELD
        return found

    # --- changes, from Session.apply_*/undo_* ------------------------------------------
    def add(self, row: int, task: snapshot.Task, delta: int = 1) -> None:
        if not self.active:
            return
        self._moves.append(([row], [task], delta))
        for _, count in self._of(task):
            self._bump(count, row, delta)
        if task.placement.pod_terms:
            for count in self._own_counts(task):
                self._bump(count, row, delta)

    def add_many(self, rows: list[int], tasks: list[snapshot.Task], delta: int = 1) -> None:
        """``add`` (``delta`` -1: ``drop``) for tasks of one placement, each on its row (repeats
        allowed), one ``np.add.at`` per count. Counts are whole numbers in float64: the same sums
        as one by one, in any order."""
        if not self.active:
            return
        first = tasks[0]
        namespace, labels = first.namespace, first.labels
        if any(not (t.labels is labels or t.labels == labels) or t.namespace != namespace for t in tasks):
            for task, row in zip(tasks, rows, strict=True):  # labelled apart: each matches its own counts
                self.add(row, task, delta)
            return
        self._moves.append((rows, tasks, delta))
        counts = [count for _, count in self._of(first)]
        if first.placement.pod_terms:
            counts += self._own_counts(first)
        if not counts:
            return
        at = np.array(rows, dtype=np.intp)
        for count in counts:
            np.add.at(self._writable(count), at, delta)
            for key, sums in count.domains.items():
                ids, size = self._ids[key]
                np.add.at(sums, ids[at], delta)
                sums[size] = 0  # rows without the key: their domain's count stays 0

    def drop(self, row: int, task: snapshot.Task) -> None:
        self.add(row, task, -1)

    def evict(self, row: int, task: snapshot.Task, delta: int = -1) -> None:
        """``task`` on ``row`` is now terminating (``delta`` +1: no longer): spread counts follow."""
        if not self.active:
            return
        if delta < 0:
            self._evicted.add(task.key)
        else:
            self._evicted.discard(task.key)
        for key, count in self._of(task):
            if key.live:
                self._bump(count, row, delta)

    def unevict(self, row: int, task: snapshot.Task) -> None:
        self.evict(row, task, 1)

    # --- internals ----------------------------------------------------------------------
    def _register_own(self, placement: podspec.Placement) -> None:
        """The counts a pending pod's own terms read, counted before any placement."""
        if placement.affinity:
            self.count(tuple(t.pods for t in placement.affinity))
        for term in (*placement.anti_affinity, *placement.preferred_affinity, *placement.preferred_anti_affinity):
            self.count((term.pods,))
        for spread in placement.spread:
            self.count((spread.pods,), live=True)

    def _new_count(self, key: _Key) -> Count:
        count = self._new()
        self._counts[key] = count
        labels = _index_labels(key.selectors[0])
        if labels is None:
            self._unindexed.append((key, count))
            candidates: Iterable[int] = range(len(self.snapshot.placed_labels))
        else:
            for label in labels:
                self._by_label.setdefault(label, []).append((key, count))
            index = self._pod_index(label[0] for label in labels)
            candidates = sorted({i for label in labels for i in index.get(label, ())})
        placed = self.snapshot.placed_labels
        for i in candidates:
            row, namespace, pod_labels, deleting = placed[i]
            if not (key.live and deleting) and all(s.matches(namespace, pod_labels) for s in key.selectors):
                self._writable(count)[row] += 1
        return count

    def _pod_index(self, keys: Iterable[str]) -> dict[tuple[str, str], list[int]]:
        """Pods on nodes by (label, value), for the label keys asked for so far."""
        index = self._pods_by_label
        missing = set(keys) - self._indexed
        if missing:
            self._indexed |= missing
            for i, (_, _, labels, _) in enumerate(self.snapshot.placed_labels):
                for k in missing:
                    value = labels.get(k)
                    if value is not None:
                        index.setdefault((k, value), []).append(i)
        return index

    def _held_count(self, role: str, term: podspec.PodTerm) -> Count:
        """Pods holding ``term`` in ``role``: registered on first sight, counted on first read."""
        count = self._held.get((role, term))
        if count is None:
            count = self._held[(role, term)] = self._new()
            labels = _index_labels(term.pods)
            if labels is None:
                self._held_unindexed.append((role, term))
            else:
                for label in labels:
                    self._held_by_label.setdefault(label, []).append((role, term))
            self._held_memo.clear()
        rows = self._held_rows.pop((role, term), None) if self._held_rows else None
        if rows:
            np.add.at(self._writable(count), np.array(rows, dtype=np.intp), 1)
        return count

    def _of(self, task: snapshot.Task) -> list[tuple[_Key, Count]]:
        if not (self._unindexed or _indexed(task, self._by_label)):
            return _NO_COUNTS  # no count is indexed under one of its labels: it is in none
        memo = (task.namespace, *task.labels.items())
        found = self._memo.get(memo)
        if found is None:
            by_label = self._by_label
            candidates = [hit for label in task.labels.items() for hit in by_label.get(label, ())]
            candidates += self._unindexed
            found = [(k, c) for k, c in dict(candidates).items() if _matches(k, task)] if candidates else _NO_COUNTS
            self._memo[memo] = found or _NO_COUNTS
        return found

    def _own_counts(self, task: snapshot.Task) -> list[Count]:
        """The held counts of the task's own terms (one per shape: the terms are part of it)."""
        own = self._own.get(task.shape)
        if own is None:
            own = self._own[task.shape] = [self._held_count(role, term) for role, term in _held_terms(task.placement)]
        return own

    def _new(self) -> Count:
        return Count(self._zeros, self._zeros[:-1])

    def _writable(self, count: Count) -> Array:
        """``count.rows``, an array of its own from its first change on (every count starts on
        one shared read-only array of zeros: most never change, and a write to it would raise)."""
        if count.padded is self._zeros:
            count.padded = np.zeros(len(self._zeros))
            count.rows = count.padded[:-1]
        return count.rows

    def _bump(self, count: Count, row: int, delta: int) -> None:
        self._writable(count)[row] += delta
        for key, sums in count.domains.items():
            ids, size = self._ids[key]
            domain = ids[row]
            if domain != size:
                sums[domain] += delta


def _indexed(task: snapshot.Task, by_label: Mapping[tuple[str, str], object]) -> bool:
    """Whether some label of the task is a key of ``by_label`` (a selector index)."""
    return any(label in by_label for label in task.labels.items())


def _matches(key: _Key, task: snapshot.Task) -> bool:
    return all(s.matches(task.namespace, task.labels) for s in key.selectors)


def _index_labels(pods: podspec.PodSelector) -> list[tuple[str, str]] | None:
    """(label, value) pairs one of which every pod the selector matches has, or None if there are none."""
    if pods.selector is None:
        return []  # selects nothing: indexed under no label, so never a candidate
    for req in pods.selector.requirements:
        if req.operator == "In" and req.values:
            return [(req.key, value) for value in req.values]
    return None


def _held_terms(placement: podspec.Placement) -> list[tuple[str, podspec.PodTerm]]:
    return [
        *((REQUIRED_ANTI, t) for t in placement.anti_affinity),
        *((REQUIRED_AFFINITY, t) for t in placement.affinity),
        *((PREFERRED_AFFINITY, t) for t in placement.preferred_affinity),
        *((PREFERRED_ANTI, t) for t in placement.preferred_anti_affinity),
    ]
