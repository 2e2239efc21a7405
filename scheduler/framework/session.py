"""The mutable state of one cycle, opened from a Snapshot and thrown away after it.

A ``Session`` is the snapshot and the conf, where each task stands (``status``, ``row``) and
each job's phase, plus the named parts of :mod:`scheduler.framework.state`:

- ``nodes`` (``NodeState``): idle and future-idle per node row, which rows changed;
- ``topology`` (``topology.Topology``): pods per row and topology domain that pod affinity,
  anti-affinity and topology spread count;
- ``counts`` (``Counts``): ready, pipelined, valid, pending tasks per job and task name;
- ``allocated`` (``Allocations``): what each job and queue holds;
- ``holds`` (``Holds``): capacity held for Spark executors;
- ``committed`` (``Committed``): what committed statements produced, for the plan;
- ``diagnostics`` (``Diagnostics``): why tasks and jobs were not placed;
- ``never``: job → why it can never run here (``framework.feasibility``), empty until set up;
- ``touched``: jobs whose allocation or pipelined tasks changed this cycle (a plugin that
  computes per-job values once at open recomputes only these).

Set-up after the constructor (the session is complete by then): ``hold``, called by the
Spark hold plugin's ``on_session_open`` before any action; ``never_fits``, called by
``cycle.open_session`` once the plugins are open. Then only
:mod:`scheduler.framework.statement` calls the ``apply_*``/``undo_*`` methods, which keep the
parts in step, so every change is recorded and can be rolled back in reverse.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from scheduler.api import plan, resources, snapshot
from scheduler.framework import config, state, topology

__all__ = ["S", "Session", "Vector"]

Vector = npt.NDArray[np.float64]
S = snapshot.TaskStatus


class Session:
    def __init__(
        self,
        snap: snapshot.Snapshot,
        conf: config.SchedulerConfig,
        now: datetime.datetime,
        on_commit: Callable[[list[plan.Allocate]], None] | None = None,
    ) -> None:
        self.snapshot = snap
        self.config = conf
        self.now = now
        self.dims = snap.dims
        cols = snap.columns
        self.status: dict[str, S] = dict(cols.statuses)
        self.row: dict[str, int] = dict(cols.rows)
        self.phase: dict[str, str] = {key: job.phase for key, job in snap.jobs.items()}
        self._vectors: dict[resources.Resource, Vector] = {}
        self.nodes = state.NodeState(snap)
        self.topology = topology.Topology(snap)
        self.counts = state.Counts(cols)
        self.allocated = state.Allocations(snap, self.vector)
        self.holds = state.Holds(len(self.dims))
        self.committed = state.Committed(on_commit)
        self.diagnostics = state.Diagnostics()
        self.never: dict[str, str] = {}
        self.touched: set[str] = set()

    def hold(self, owed: dict[str, Vector]) -> None:
        """Set-up: hold ``owed[job]`` for each job's own pods (see ``plugins.spark``)."""
        self.holds.owed = owed
        self.holds.total = sum(owed.values(), np.zeros(len(self.dims)))
        self.nodes.track_free = bool(owed)

    def never_fits(self, reasons: dict[str, str]) -> None:
        """Set-up: these jobs can never run here (job → why). One admitted earlier (Inqueue, or
        Running/Unknown whose pods are all gone or pending again) with nothing scheduled goes back
        to Pending, so it reserves nothing (see ``plugins.overcommit``)."""
        self.never = reasons
        idle = (S.PENDING, S.RELEASING)
        for key in reasons:
            if self.phase[key] in ("Inqueue", "Running", "Unknown") and all(
                t.status in idle for t in self.snapshot.jobs[key].by_priority
            ):
                self.phase[key] = "Pending"

    # --- read helpers -------------------------------------------------------------------
    def vector(self, request: resources.Resource) -> Vector:
        vec = self._vectors.get(request)
        if vec is None:
            vec = self._vectors[request] = resources.vector(request, self.dims)
        return vec

    def task(self, key: str) -> snapshot.Task:
        return self.snapshot.tasks[key]

    def parked(self, key: str) -> bool:
        """Whether job ``key`` is left alone this cycle: the shell parked it
        (``SchedulerConfig.parked``) and its phase is still the snapshot's (one enqueue admitted
        just now is new, and placed as any other)."""
        return key in self.config.parked and self.phase[key] == self.snapshot.jobs[key].phase

    def job(self, key: str) -> snapshot.Job:
        return self.snapshot.jobs[key]

    def pending_tasks(self, job: str) -> list[str]:
        """Pending tasks in Volcano's task order: higher priority first, then creation."""
        return [task.key for task in self.pending_of(job)]

    def pending_of(self, job: str) -> list[snapshot.Task]:
        """``pending_tasks`` as Task objects."""
        ordered = self.snapshot.jobs[job].by_priority
        if self.counts.pending[job] == len(ordered):  # all of them: no need to look each one up
            return list(ordered)
        status, pending = self.status, S.PENDING
        return [task for task in ordered if status[task.key] is pending]

    # --- state changes, called only by statement.Statement -------------------------------
    def apply_allocate(self, key: str, row: int) -> Vector | None:
        task = self.snapshot.tasks[key]
        vec = self.vector(task.request)
        self.nodes.take(row, vec, idle=True)
        self.status[key] = S.ALLOCATED
        self.row[key] = row
        counts = self.counts
        counts.pending[task.job] -= 1
        counts.count(task, ready=1)
        if task.best_effort:  # gang counted it as ready while pending; now it is allocated
            counts.best_effort(task, -1)
        self._charge(task, vec)
        self.topology.add(row, task)
        return self.holds.consume(task.job, vec)

    def apply_allocate_many(self, batch: list[snapshot.Task], rows: list[int]) -> None:
        """``apply_allocate`` for tasks of one job with one request, in one step per touched row.

        Only for jobs without a Spark hold (nothing to consume). Amounts are whole numbers in
        float64, so the sums equal the one-by-one ones exactly, whatever the order.
        """
        keys = [task.key for task in batch]
        first = batch[0]
        vec = self.vector(first.request)
        nodes, counts = self.nodes, self.counts
        nodes.take_many(rows, vec)
        self.status.update(dict.fromkeys(keys, S.ALLOCATED))
        self.row.update(zip(keys, rows, strict=True))
        names = [task.task_name for task in batch]
        if names.count(names[0]) == len(names):  # one task name, as is usual
            counts.task_ready[(first.job, names[0])] += len(keys)
        else:
            for name in names:
                counts.task_ready[(first.job, name)] += 1
        self.topology.add_many(rows, batch)
        counts.ready[first.job] += len(keys)
        counts.pending[first.job] -= len(keys)
        self._charge(first, vec * len(keys))

    def undo_allocate_many(self, batch: list[snapshot.Task], rows: list[int]) -> None:
        """Roll back ``apply_allocate_many(batch, rows)``."""
        first = batch[0]
        vec = self.vector(first.request)
        nodes, counts = self.nodes, self.counts
        nodes.take_many(rows, -vec)
        status, placed, task_ready = self.status, self.row, counts.task_ready
        for task in batch:
            status[task.key] = S.PENDING
            del placed[task.key]
            task_ready[(task.job, task.task_name)] -= 1
        self.topology.add_many(rows, batch, -1)
        counts.ready[first.job] -= len(batch)
        counts.pending[first.job] += len(batch)
        self._charge(first, vec * -len(batch))

    def undo_allocate(self, key: str, row: int, hold_before: Vector | None) -> None:
        task = self.snapshot.tasks[key]
        vec = self.vector(task.request)
        self.nodes.take(row, -vec, idle=True)
        self.status[key] = S.PENDING
        del self.row[key]
        counts = self.counts
        counts.pending[task.job] += 1
        counts.count(task, ready=-1)
        if task.best_effort:
            counts.best_effort(task, +1)
        self._charge(task, -vec)
        self.topology.drop(row, task)
        self.holds.restore(task.job, hold_before)

    def apply_pipeline(self, key: str, row: int) -> Vector | None:
        task = self.snapshot.tasks[key]
        vec = self.vector(task.request)
        self.nodes.take(row, vec, idle=False)
        self.status[key] = S.PIPELINED
        self.row[key] = row
        self.touched.add(task.job)
        self.counts.pending[task.job] -= 1
        self.counts.count(task, pipelined=1)
        self.topology.add(row, task)
        return self.holds.consume(task.job, vec)

    def undo_pipeline(self, key: str, row: int, hold_before: Vector | None) -> None:
        task = self.snapshot.tasks[key]
        self.nodes.take(row, -self.vector(task.request), idle=False)
        self.status[key] = S.PENDING
        del self.row[key]
        self.counts.pending[task.job] += 1
        self.counts.count(task, pipelined=-1)
        self.topology.drop(row, task)
        self.holds.restore(task.job, hold_before)

    def apply_evict(self, key: str) -> S:
        task = self.snapshot.tasks[key]
        before = self.status[key]
        vec = self.vector(task.request)
        self.nodes.release(self.row[key], vec)  # its resources become releasing
        self.topology.evict(self.row[key], task)
        self.status[key] = S.RELEASING
        if before in snapshot.READY:
            self.counts.count(task, ready=-1)
        self._charge(task, -vec)
        return before

    def undo_evict(self, key: str, before: S) -> None:
        task = self.snapshot.tasks[key]
        vec = self.vector(task.request)
        self.nodes.release(self.row[key], -vec)
        self.topology.unevict(self.row[key], task)
        self.status[key] = before
        if before in snapshot.READY:
            self.counts.count(task, ready=1)
        self._charge(task, vec)

    def _charge(self, task: snapshot.Task, vec: Vector) -> None:
        self.touched.add(task.job)
        self.allocated.charge(task.job, self.snapshot.jobs[task.job].queue, vec)
