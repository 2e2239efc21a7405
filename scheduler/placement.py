"""Choose a node for a task: vectorised feasibility and scoring over every node (no sampling).

For each distinct (request, placement) the engine keeps two score arrays over all nodes:
``-inf`` where the task cannot go, its score where it can, once against idle resources
(→ Allocate) and once against future-idle resources (→ Pipeline). Choosing is an argmax.
Because plugin node hooks answer per row from that row's state only, after the session
changes some rows (``Session.changed_rows``) only those rows are recomputed: placing the
hundredth identical pod costs one row, not one full scan.
"""

from __future__ import annotations

import collections
import dataclasses

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
        score = self.plugins.node_score(task, rows) if on_future.any() else np.zeros(len(rows))
        entry.on_idle[rows] = np.where(on_idle, score, -np.inf)
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
