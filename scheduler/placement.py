"""Choose a node for a task: vectorised feasibility and scoring over every node (no sampling).

For each distinct (request, placement) the engine keeps two score arrays over all nodes:
``-inf`` where the task cannot go, its score where it can, once against idle resources
(→ Allocate) and once against future-idle resources (→ Pipeline). Choosing is an argmax.
Because plugin node hooks answer per row from that row's state only, after the session
changes some rows (``Session.changed_rows``) only those rows are recomputed: placing the
hundredth identical pod costs one row, not one full scan.

``place_many`` places a gang's identical pods in one step with the same result as calling
``place`` and allocating after each: only the ``count`` best rows can be chosen (an untouched
row is only picked once every better untouched row has been), so their scores after 0, 1, 2…
copies are computed in one vectorised call and the picks are a heap merge over them.
"""

from __future__ import annotations

import collections
import dataclasses
import heapq

import numpy as np
import numpy.typing as npt

from scheduler import podspec, resources, session, snapshot
from scheduler.plugins import tiers

__all__ = ["ALLOCATE", "PIPELINE", "Placer"]

ALLOCATE = "allocate"
PIPELINE = "pipeline"
NOT_READY = "node(s) were not ready"

Scores = npt.NDArray[np.float64]


@dataclasses.dataclass(slots=True)
class _Entry:
    on_idle: Scores
    on_future: Scores
    seen: int  # length of Session.changed_rows when last refreshed
    # (-score, row) of rows that fit on idle, for place_many's top-k, built on first use. Refreshed
    # rows are pushed again; an entry whose score no longer matches on_idle is stale and skipped.
    ranking: list[tuple[float, int]] | None = None


class Placer:
    def __init__(self, ssn: session.Session, plugins: tiers.Tiers) -> None:
        self.session = ssn
        self.plugins = plugins
        self.rows = np.arange(len(ssn.snapshot.nodes), dtype=np.intp)
        self.ready = np.array([n.ready for n in ssn.snapshot.nodes], dtype=bool)
        self._cache: dict[tuple[resources.Resource, podspec.Placement], _Entry] = {}

    def place(self, task: snapshot.Task, *, pipeline: bool = True) -> tuple[str, int] | None:
        """(ALLOCATE or PIPELINE, node row) for the best node, or None if none fits."""
        if not len(self.rows):
            return None
        entry = self._entry(task)
        row = int(entry.on_idle.argmax())
        if entry.on_idle[row] > -np.inf:
            return ALLOCATE, row
        if pipeline:
            row = int(entry.on_future.argmax())
            if entry.on_future[row] > -np.inf:
                return PIPELINE, row
        return None

    def place_many(self, task: snapshot.Task, count: int) -> list[int]:
        """Rows for up to ``count`` copies of ``task``, each allocated before the next is placed.

        Stops at the first copy no idle node can take (the caller goes one by one from there,
        pipelining included). Exactly ``place``'s choices: same scores, ties to the lower row.
        Pods with anti-affinity are not batched: each copy changes where the next may go.
        """
        if count <= 0 or not len(self.rows) or task.placement.anti_affinity:
            return []
        entry = self._entry(task)
        fits = self._best(entry, count)
        if not len(fits):
            return []
        scores = entry.on_idle
        ahead = _Lookahead(self, task, fits, max(1, min(count, 4 * count // len(fits) + 1)))
        heap = [(-float(s), int(r), i) for i, (s, r) in enumerate(zip(scores[fits], fits, strict=True))]
        heapq.heapify(heap)
        picks: list[int] = []
        while heap and len(picks) < count:
            _, row, i = heapq.heappop(heap)
            picks.append(row)
            nxt = ahead.after(i, count - len(picks))
            if nxt is not None:
                heapq.heappush(heap, (-nxt, row, i))
        return picks

    def _best(self, entry: _Entry, count: int) -> npt.NDArray[np.intp]:
        """The ``count`` best rows that fit on idle, by (score desc, row asc), in row order.

        A lazily cleaned heap rather than a partition over all nodes: between two gangs of one
        shape only a few rows change, so this costs O(count log n), not O(n) per gang.
        """
        scores = entry.on_idle
        if entry.ranking is None or len(entry.ranking) > 2 * len(scores) + 1024:
            fit = np.flatnonzero(scores > -np.inf)
            entry.ranking = list(zip((-scores[fit]).tolist(), fit.tolist(), strict=True))
            heapq.heapify(entry.ranking)
        ranking, seen = entry.ranking, set()
        best: list[tuple[float, int]] = []
        while ranking and len(best) < count:
            item = heapq.heappop(ranking)
            neg, row = item
            if row not in seen and scores[row] == -neg:
                seen.add(row)
                best.append(item)
        for item in best:  # still current: back in for the next gang of this shape
            heapq.heappush(ranking, item)
        return np.array(sorted(row for _, row in best), dtype=np.intp)

    def feasible(self, task: snapshot.Task) -> npt.NDArray[np.bool_]:
        """Rows that pass every predicate, ignoring resources (for preempt and reclaim)."""
        ok = self.ready.copy()
        for _, mask in self.plugins.predicate(task, self.rows):
            ok &= mask
        return ok

    def _entry(self, task: snapshot.Task) -> _Entry:
        key = (task.request, task.placement)
        changed = self.session.changed_rows
        entry = self._cache.get(key)
        if entry is None:
            size = len(self.rows)
            entry = self._cache[key] = _Entry(np.empty(size), np.empty(size), len(changed))
            self._refresh(task, entry, self.rows)
        elif entry.seen < len(changed):
            rows = np.unique(np.asarray(changed[entry.seen :], dtype=np.intp))
            entry.seen = len(changed)
            self._refresh(task, entry, rows if len(rows) * 8 < len(self.rows) else self.rows)
        return entry

    def _refresh(self, task: snapshot.Task, entry: _Entry, rows: npt.NDArray[np.intp]) -> None:
        ssn = self.session
        req = ssn.vector(task.request)
        asked = np.flatnonzero(req > 0)
        ok = self.ready[rows]
        for _, mask in self.plugins.predicate(task, rows):
            ok = ok & mask
        need = req[asked]
        on_idle = ok & (ssn.idle[rows][:, asked] >= need).all(axis=1)
        on_future = ok & (ssn.future[rows][:, asked] >= need).all(axis=1)
        # Scored when any row fits either way: a row can fit on idle but not on future idle (its
        # room is pipelined to another gang), and it must not score 0 then.
        score = self.plugins.node_score(task, rows) if on_future.any() or on_idle.any() else np.zeros(len(rows))
        entry.on_idle[rows] = np.where(on_idle, score, -np.inf)
        if entry.ranking is not None:
            if len(rows) == len(self.rows):
                entry.ranking = None  # rebuilt on next use
            else:
                fresh = entry.on_idle[rows]
                for neg, row in zip((-fresh).tolist(), rows.tolist(), strict=True):
                    if neg < np.inf:
                        heapq.heappush(entry.ranking, (neg, row))
        entry.on_future[rows] = np.where(on_future, score, -np.inf)

    def explain(self, task: snapshot.Task) -> str:
        """Why no node fits, kube-scheduler style: "0/3 nodes are available: 3 Insufficient cpu."."""
        ssn = self.session
        counts: collections.Counter[str] = collections.Counter()
        counts[NOT_READY] = int((~self.ready).sum())
        for reason, mask in self.plugins.predicate(task, self.rows):
            counts[reason] += int((~mask).sum())
        req = ssn.vector(task.request)
        for col in np.flatnonzero(req > 0):
            name = ssn.dims[col]
            label = "Too many pods" if name == resources.PODS else f"Insufficient {name}"
            counts[label] += int((ssn.future[:, col] < req[col]).sum())
        parts = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()) if n)
        return f"0/{len(self.rows)} nodes are available: {parts or 'no nodes'}."


class _Lookahead:
    """Scores of candidate rows after 1, 2, … more copies of one task, computed in chunks."""

    def __init__(self, placer: Placer, task: snapshot.Task, rows: npt.NDArray[np.intp], depth: int) -> None:
        self.placer, self.task = placer, task
        req = placer.session.vector(task.request)
        self.asked = np.flatnonzero(req > 0)
        self.need = req[self.asked]
        self.taken = [0] * len(rows)
        self.rows = rows
        self.scores: list[list[float | None]] = [[] for _ in rows]
        self._fill(np.arange(len(rows)), 1, depth)

    def after(self, i: int, wanted: int) -> float | None:
        """Row ``i`` took one more copy: its score for the next one, None if that does not fit."""
        self.taken[i] += 1
        taken = self.taken[i]
        if not wanted:
            return None
        if taken > len(self.scores[i]):
            # Past the look-ahead (big gangs on few rows): double it, for this row alone.
            self._fill(np.array([i]), taken, min(wanted, 2 * taken))
        return self.scores[i][taken - 1]

    def _fill(self, which: npt.NDArray[np.intp], start: int, depth: int) -> None:
        ssn = self.placer.session
        rows = np.repeat(self.rows[which], depth)
        extra = np.tile(np.arange(start, start + depth, dtype=np.float64), len(which))
        idle = ssn.idle[rows][:, self.asked] - extra[:, None] * self.need
        fits = (idle >= self.need).all(axis=1)
        # Plain floats, None where the copy does not fit: the merge loop then stays in Python.
        scores = np.where(fits, self.placer.plugins.node_score(self.task, rows, extra), np.nan).tolist()
        for n, i in enumerate(which.tolist()):
            self.scores[i] += [None if s != s else s for s in scores[n * depth : (n + 1) * depth]]
