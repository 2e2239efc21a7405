"""The mutable state of one cycle, opened from a Snapshot and thrown away after it.

Node state is two ``nodes × dims`` arrays: ``idle`` (allocatable − used − allocated this cycle)
and ``future`` (idle + releasing − pipelined), Volcano's Idle and FutureIdle. Every change to
a node row is appended to ``changed_rows`` so placement caches can refresh only those rows.

Only :mod:`scheduler.framework.statement` calls the ``apply_*``/``undo_*`` methods, so every change is
recorded and can be rolled back in reverse.

Opening counts per job and per task name (ready, valid, pending, BestEffort) and sums what
each job holds from the snapshot's task columns (:mod:`scheduler.api.tally`) in bulk: a cycle
over a hundred thousand pods does not touch each pod in Python just to begin.
"""

from __future__ import annotations

import collections
import datetime
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from scheduler.api import plan, resources, snapshot, tally
from scheduler.framework import config

__all__ = ["Session"]

Vector = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float64]
S = snapshot.TaskStatus
_READY = tally.codes(snapshot.READY)
_INVALID = tally.codes(frozenset({S.FAILED, S.RELEASING}))
_CHARGED = tally.codes(snapshot.OCCUPYING - {S.RELEASING})


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
        self.node_index = snap.node_index
        self.node_names = [node.name for node in snap.nodes]
        self.idle: Vector = snap.allocatable - snap.used
        self.future: Vector = self.idle + snap.releasing
        self.free_total: Vector = np.maximum(self.idle, 0).sum(axis=0)  # kept only while holds exist
        self.changed_rows: list[int] = []
        # Pods placed on each row this cycle, for pod anti-affinity: kept only if some pod has it.
        self.added_on_row: dict[int, list[snapshot.Task]] = {}
        self.track_labels = snap.columns.anti_affinity
        self.operations: list[plan.Operation] = []  # committed statements, in order
        # Told each committed statement's Allocates at once (they are final: no later step of the
        # cycle withdraws one), so binds can go out while the cycle goes on, as Volcano's do.
        self.on_commit = on_commit
        # The same, indexed for closing: pod → node of each Allocate, pods of each Pipeline, and
        # how many of each a job got (a pod is never both: each leaves Pending for good).
        self.committed_binds: dict[str, str] = {}
        self.committed_pipelines: set[str] = set()
        self.binds_per_job: collections.Counter[str] = collections.Counter()
        self.pipelines_per_job: collections.Counter[str] = collections.Counter()
        cols = snap.columns
        self.status: dict[str, S] = dict(cols.statuses)
        self.row: dict[str, int] = dict(cols.rows)
        self.phase: dict[str, str] = {key: job.phase for key, job in snap.jobs.items()}
        jobs, groups = cols.jobs, cols.groups
        ready = np.isin(cols.status, _READY)
        valid = ~np.isin(cols.status, _INVALID)  # Volcano's "valid": may still run (not failed, not leaving)
        pending = cols.status == tally.PENDING
        best_effort = pending & cols.best_effort
        self.ready = tally.counter(jobs, cols.job, ready)
        self.task_ready = tally.counter(groups, cols.group, ready)
        self.pipelined: collections.Counter[str] = collections.Counter()
        self.task_pipelined: collections.Counter[tuple[str, str]] = collections.Counter()
        self.valid = tally.counter(groups, cols.group, valid)  # per task name
        self.valid_total = tally.counter(jobs, cols.job, valid)
        self.pending = tally.counter(jobs, cols.job, pending)  # tasks still Pending, BestEffort too
        self.pending_best_effort = tally.counter(jobs, cols.job, best_effort)
        self.task_pending_best_effort = tally.counter(groups, cols.group, best_effort)
        self.fit_errors: dict[str, str] = {}  # task → why it was not placed
        self.job_errors: dict[str, str] = {}  # job → why the gang was not placed
        self.invalid: dict[str, plan.Invalid] = {}  # job → gang's JobValid verdict
        self._vectors: dict[resources.Resource, Vector] = {}
        # One row per distinct request (``cols.request`` indexes it), for sums per job in bulk.
        vectors = [self.vector(r) for r in cols.requests]
        self.request_vectors: Matrix = np.array(vectors, dtype=np.float64).reshape(-1, len(self.dims))
        # Rows of one matrix: ``job_allocated[key] += v`` updates it in place.
        self._job_matrix = tally.per_job(cols, np.isin(cols.status, _CHARGED), self.request_vectors)
        self.job_allocated: dict[str, Vector] = dict(zip(jobs, self._job_matrix, strict=True))
        self.queue_allocated: dict[str, Vector] = {}
        self.queue_jobs: dict[str, list[int]] = {}  # queue name → its jobs' indices in ``cols.jobs``
        for i, job in enumerate(snap.jobs.values()):
            self.queue_jobs.setdefault(job.queue, []).append(i)
        self.holds: dict[str, Vector] = {}  # set by ``hold`` (the Spark hold plugin), before any action
        self.held_total: Vector = np.zeros(len(self.dims))

    def hold(self, owed: dict[str, Vector]) -> None:
        """Set-up: hold ``owed[job]`` for each job's own pods (see ``plugins.spark``)."""
        self.holds = owed
        self.held_total = sum(owed.values(), np.zeros(len(self.dims)))

    # --- read helpers -------------------------------------------------------------------
    def vector(self, request: resources.Resource) -> Vector:
        vec = self._vectors.get(request)
        if vec is None:
            vec = self._vectors[request] = resources.vector(request, self.dims)
        return vec

    def task(self, key: str) -> snapshot.Task:
        return self.snapshot.tasks[key]

    def job(self, key: str) -> snapshot.Job:
        return self.snapshot.jobs[key]

    def allocated_of_queue(self, queue: str) -> Vector:
        vec = self.queue_allocated.get(queue)
        if vec is None:
            members = self.queue_jobs.get(queue, [])
            vec = self.queue_allocated[queue] = self._job_matrix[members].sum(axis=0)
        return vec

    def pending_tasks(self, job: str) -> list[str]:
        """Pending tasks in Volcano's task order: higher priority first, then creation."""
        return [task.key for task in self.pending_of(job)]

    def pending_of(self, job: str) -> list[snapshot.Task]:
        """``pending_tasks`` as Task objects."""
        ordered = self.snapshot.jobs[job].by_priority
        if self.pending[job] == len(ordered):  # all of them: no need to look each one up
            return list(ordered)
        status, pending = self.status, S.PENDING
        return [task for task in ordered if status[task.key] is pending]

    def held_against(self, job: str) -> Vector:
        """Capacity held for other groups (Spark executors) that ``job`` must leave free."""
        own = self.holds.get(job)
        return self.held_total - own if own is not None else self.held_total

    # --- state changes, called only by statement.Statement -------------------------------
    def apply_allocate(self, key: str, row: int) -> Vector | None:
        task = self.task(key)
        vec = self.vector(task.request)
        self._take(row, vec, idle=True)
        self.status[key] = S.ALLOCATED
        self.row[key] = row
        self.pending[task.job] -= 1
        self._count(task, ready=1)
        if task.best_effort:  # gang counted it as ready while pending; now it is allocated
            self._pending_best_effort(task, -1)
        self._charge(task, vec)
        if self.track_labels:
            self.added_on_row.setdefault(row, []).append(task)
        return self._consume_hold(task.job, vec)

    def apply_allocate_many(self, batch: list[snapshot.Task], rows: list[int]) -> None:
        """``apply_allocate`` for tasks of one job with one request, in one step per touched row.

        Only for jobs without a Spark hold (nothing to consume). Amounts are whole numbers in
        float64, so the sums equal the one-by-one ones exactly, whatever the order.
        """
        keys = [task.key for task in batch]
        first = batch[0]
        vec = self.vector(first.request)
        self._take_many(rows, vec)
        self.status.update(dict.fromkeys(keys, S.ALLOCATED))
        self.row.update(zip(keys, rows, strict=True))
        names = [task.task_name for task in batch]
        if names.count(names[0]) == len(names):  # one task name, as is usual
            self.task_ready[(first.job, names[0])] += len(keys)
        else:
            for name in names:
                self.task_ready[(first.job, name)] += 1
        if self.track_labels:
            added = self.added_on_row
            for task, row in zip(batch, rows, strict=True):
                added.setdefault(row, []).append(task)
        self.ready[first.job] += len(keys)
        self.pending[first.job] -= len(keys)
        self._charge(first, vec * len(keys))

    def undo_allocate_many(self, batch: list[snapshot.Task], rows: list[int]) -> None:
        """Roll back ``apply_allocate_many(batch, rows)``."""
        first = batch[0]
        vec = self.vector(first.request)
        self._take_many(rows, -vec)
        status, placed, task_ready = self.status, self.row, self.task_ready
        for task, row in zip(reversed(batch), reversed(rows), strict=True):
            status[task.key] = S.PENDING
            del placed[task.key]
            task_ready[(task.job, task.task_name)] -= 1
            self._drop_label(row, task)
        self.ready[first.job] -= len(batch)
        self.pending[first.job] += len(batch)
        self._charge(first, vec * -len(batch))

    def _take_many(self, rows: list[int], vec: Vector) -> None:
        """``_take(row, vec, idle=True)`` for each of ``rows`` (repeats allowed), in one step."""
        delta: Vector
        if len(set(rows)) == len(rows):  # one copy per row (a spread gang): 1 × vec is vec
            touched, delta = np.array(rows, dtype=np.intp), vec
        else:
            per_row = collections.Counter(rows)
            touched = np.fromiter(per_row, dtype=np.intp, count=len(per_row))
            delta = np.fromiter(per_row.values(), dtype=np.float64, count=len(per_row))[:, None] * vec
        # take, subtract, put back: cheaper than ``idle[touched] -= delta`` (rows are distinct)
        idle = self.idle.take(touched, axis=0)
        if self.holds:  # free_total is only read while Spark capacity is held
            self.free_total -= np.maximum(idle, 0).sum(axis=0)
            idle -= delta
            self.free_total += np.maximum(idle, 0).sum(axis=0)
        else:
            idle -= delta
        self.idle[touched] = idle
        future = self.future.take(touched, axis=0)
        future -= delta
        self.future[touched] = future
        self.changed_rows.extend(rows)

    def undo_allocate(self, key: str, row: int, hold_before: Vector | None) -> None:
        task = self.task(key)
        vec = self.vector(task.request)
        self._take(row, -vec, idle=True)
        self.status[key] = S.PENDING
        del self.row[key]
        self.pending[task.job] += 1
        self._count(task, ready=-1)
        if task.best_effort:
            self._pending_best_effort(task, +1)
        self._charge(task, -vec)
        self._drop_label(row, task)
        self._restore_hold(task.job, hold_before)

    def apply_pipeline(self, key: str, row: int) -> Vector | None:
        task = self.task(key)
        vec = self.vector(task.request)
        self._take(row, vec, idle=False)
        self.status[key] = S.PIPELINED
        self.row[key] = row
        self.pending[task.job] -= 1
        self._count(task, pipelined=1)
        if self.track_labels:
            self.added_on_row.setdefault(row, []).append(task)
        return self._consume_hold(task.job, vec)

    def undo_pipeline(self, key: str, row: int, hold_before: Vector | None) -> None:
        task = self.task(key)
        self._take(row, -self.vector(task.request), idle=False)
        self.status[key] = S.PENDING
        del self.row[key]
        self.pending[task.job] += 1
        self._count(task, pipelined=-1)
        self._drop_label(row, task)
        self._restore_hold(task.job, hold_before)

    def apply_evict(self, key: str) -> S:
        task = self.task(key)
        before = self.status[key]
        vec = self.vector(task.request)
        row = self.row[key]
        self.future[row] += vec  # its resources become releasing
        self.changed_rows.append(row)
        self.status[key] = S.RELEASING
        if before in snapshot.READY:
            self._count(task, ready=-1)
        self._charge(task, -vec)
        return before

    def undo_evict(self, key: str, before: S) -> None:
        task = self.task(key)
        vec = self.vector(task.request)
        row = self.row[key]
        self.future[row] -= vec
        self.changed_rows.append(row)
        self.status[key] = before
        if before in snapshot.READY:
            self._count(task, ready=1)
        self._charge(task, vec)

    def _take(self, row: int, vec: Vector, *, idle: bool) -> None:
        if idle and self.holds:  # free_total is only read while Spark capacity is held
            old = np.maximum(self.idle[row], 0)
            self.idle[row] -= vec
            self.free_total += np.maximum(self.idle[row], 0) - old
        elif idle:
            self.idle[row] -= vec
        self.future[row] -= vec
        self.changed_rows.append(row)

    def _count(self, task: snapshot.Task, *, ready: int = 0, pipelined: int = 0) -> None:
        self.ready[task.job] += ready
        self.task_ready[(task.job, task.task_name)] += ready
        self.pipelined[task.job] += pipelined
        self.task_pipelined[(task.job, task.task_name)] += pipelined

    def _pending_best_effort(self, task: snapshot.Task, delta: int) -> None:
        self.pending_best_effort[task.job] += delta
        self.task_pending_best_effort[(task.job, task.task_name)] += delta

    def _charge(self, task: snapshot.Task, vec: Vector) -> None:
        self.job_allocated[task.job] += vec
        self.allocated_of_queue(self.job(task.job).queue)[:] += vec

    def _drop_label(self, row: int, task: snapshot.Task) -> None:
        if self.track_labels:
            self.added_on_row[row].remove(task)

    def _consume_hold(self, job: str, vec: Vector) -> Vector | None:
        held = self.holds.get(job)
        if held is None:
            return None
        before = held.copy()
        taken = np.minimum(held, vec)
        held -= taken
        self.held_total -= taken
        return before

    def _restore_hold(self, job: str, before: Vector | None) -> None:
        if before is not None:
            held = self.holds[job]
            self.held_total += before - held
            held[:] = before
