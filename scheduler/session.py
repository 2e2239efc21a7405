"""The mutable state of one cycle, opened from a Snapshot and thrown away after it.

Node state is two ``nodes × dims`` arrays: ``idle`` (allocatable − used − allocated this cycle)
and ``future`` (idle + releasing − pipelined), Volcano's Idle and FutureIdle. Every change to
a node row is appended to ``changed_rows`` so placement caches can refresh only those rows.

Only :mod:`scheduler.statement` calls the ``apply_*``/``undo_*`` methods, so every change is
recorded and can be rolled back in reverse.
"""

from __future__ import annotations

import collections
import datetime

import numpy as np
import numpy.typing as npt

from scheduler import config, plan, resources, snapshot, spark

__all__ = ["Session"]

Vector = npt.NDArray[np.float64]
S = snapshot.TaskStatus


class Session:
    def __init__(self, snap: snapshot.Snapshot, conf: config.SchedulerConfig, now: datetime.datetime) -> None:
        self.snapshot = snap
        self.config = conf
        self.now = now
        self.dims = snap.dims
        self.node_index = snap.node_index
        self.idle: Vector = snap.allocatable - snap.used
        self.future: Vector = self.idle + snap.releasing
        self.free_total: Vector = np.maximum(self.idle, 0).sum(axis=0)
        self.changed_rows: list[int] = []
        self.added_on_row: dict[int, list[snapshot.Task]] = {}  # pods placed on each row this cycle
        self.operations: list[plan.Operation] = []  # committed statements, in order
        self.status: dict[str, S] = {}
        self.row: dict[str, int] = {}
        self.phase: dict[str, str] = {key: job.phase for key, job in snap.jobs.items()}
        self.ready: collections.Counter[str] = collections.Counter()
        self.pipelined: collections.Counter[str] = collections.Counter()
        self.task_ready: collections.Counter[tuple[str, str]] = collections.Counter()
        self.task_pipelined: collections.Counter[tuple[str, str]] = collections.Counter()
        self.valid: collections.Counter[tuple[str, str]] = collections.Counter()  # per task name
        self.valid_total: collections.Counter[str] = collections.Counter()
        self.pending_best_effort: collections.Counter[str] = collections.Counter()
        zero = np.zeros(len(self.dims))
        self.job_allocated: dict[str, Vector] = {key: zero.copy() for key in snap.jobs}
        self.queue_allocated: dict[str, Vector] = {}
        self.fit_errors: dict[str, str] = {}  # task → why it was not placed
        self.job_errors: dict[str, str] = {}  # job → why the gang was not placed
        self.invalid: dict[str, plan.Invalid] = {}  # job → gang's JobValid verdict
        self._vectors: dict[resources.Resource, Vector] = {}
        # Charged per (job, request) after the loop: one vector add per distinct pair instead of
        # one per running pod (whole numbers, so the sum is the same).
        charged: collections.Counter[tuple[str, resources.Resource]] = collections.Counter()
        for key, task in snap.tasks.items():
            self._open_task(key, task, charged)
        for (job, request), count in charged.items():
            self.job_allocated[job] += self.vector(request) * count
        self.holds: dict[str, Vector] = spark.holds(self)
        self.held_total: Vector = sum(self.holds.values(), zero.copy())

    def _open_task(
        self, key: str, task: snapshot.Task, charged: collections.Counter[tuple[str, resources.Resource]]
    ) -> None:
        self.status[key] = task.status
        if task.node is not None and task.node in self.node_index:
            self.row[key] = self.node_index[task.node]
        job = task.job
        if task.status in snapshot.READY:
            self.ready[job] += 1
            self.task_ready[(job, task.task_name)] += 1
        if task.status not in (S.FAILED, S.RELEASING):
            # Volcano's "valid" tasks: everything that may still run (not failed, not leaving).
            self.valid[(job, task.task_name)] += 1
            self.valid_total[job] += 1
        if task.status in snapshot.OCCUPYING and task.status is not S.RELEASING:
            charged[(job, task.request)] += 1
        if task.status is S.PENDING and task.best_effort:
            self.pending_best_effort[job] += 1

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
            vec = np.zeros(len(self.dims))
            for key, job in self.snapshot.jobs.items():
                if job.queue == queue:
                    vec += self.job_allocated[key]
            self.queue_allocated[queue] = vec
        return vec

    def pending_tasks(self, job: str) -> list[str]:
        """Pending tasks in Volcano's task order: higher priority first, then creation."""
        tasks = self.snapshot.tasks
        keys = [k for k in self.snapshot.jobs[job].tasks if self.status[k] is S.PENDING]
        return sorted(keys, key=lambda k: -tasks[k].priority)  # stable: creation order kept

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
        self._count(task, ready=1)
        self._charge(task, vec)
        self.added_on_row.setdefault(row, []).append(task)
        return self._consume_hold(task.job, vec)

    def apply_allocate_many(self, keys: list[str], rows: list[int]) -> None:
        """``apply_allocate`` for tasks of one job with one request, in one step per touched row.

        Only for jobs without a Spark hold (nothing to consume). Amounts are whole numbers in
        float64, so the sums equal the one-by-one ones exactly, whatever the order.
        """
        first = self.task(keys[0])
        vec = self.vector(first.request)
        touched, counts = np.unique(np.asarray(rows, dtype=np.intp), return_counts=True)
        delta = counts[:, None] * vec
        before = np.maximum(self.idle[touched], 0).sum(axis=0)
        self.idle[touched] -= delta
        self.free_total += np.maximum(self.idle[touched], 0).sum(axis=0) - before
        self.future[touched] -= delta
        self.changed_rows.extend(rows)
        status, placed, added, task_ready = self.status, self.row, self.added_on_row, self.task_ready
        for key, row in zip(keys, rows, strict=True):
            task = self.snapshot.tasks[key]
            status[key] = S.ALLOCATED
            placed[key] = row
            task_ready[(task.job, task.task_name)] += 1
            added.setdefault(row, []).append(task)
        self.ready[first.job] += len(keys)
        total = vec * len(keys)
        self.job_allocated[first.job] += total
        self.allocated_of_queue(self.job(first.job).queue)[:] += total

    def undo_allocate(self, key: str, row: int, hold_before: Vector | None) -> None:
        task = self.task(key)
        vec = self.vector(task.request)
        self._take(row, -vec, idle=True)
        self.status[key] = S.PENDING
        del self.row[key]
        self._count(task, ready=-1)
        self._charge(task, -vec)
        self._drop_label(row, task)
        self._restore_hold(task.job, hold_before)

    def apply_pipeline(self, key: str, row: int) -> Vector | None:
        task = self.task(key)
        vec = self.vector(task.request)
        self._take(row, vec, idle=False)
        self.status[key] = S.PIPELINED
        self.row[key] = row
        self._count(task, pipelined=1)
        self.added_on_row.setdefault(row, []).append(task)
        return self._consume_hold(task.job, vec)

    def undo_pipeline(self, key: str, row: int, hold_before: Vector | None) -> None:
        task = self.task(key)
        self._take(row, -self.vector(task.request), idle=False)
        self.status[key] = S.PENDING
        del self.row[key]
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
        if idle:
            old = np.maximum(self.idle[row], 0)
            self.idle[row] -= vec
            self.free_total += np.maximum(self.idle[row], 0) - old
        self.future[row] -= vec
        self.changed_rows.append(row)

    def _count(self, task: snapshot.Task, *, ready: int = 0, pipelined: int = 0) -> None:
        self.ready[task.job] += ready
        self.task_ready[(task.job, task.task_name)] += ready
        self.pipelined[task.job] += pipelined
        self.task_pipelined[(task.job, task.task_name)] += pipelined

    def _charge(self, task: snapshot.Task, vec: Vector) -> None:
        self.job_allocated[task.job] += vec
        self.allocated_of_queue(self.job(task.job).queue)[:] += vec

    def _drop_label(self, row: int, task: snapshot.Task) -> None:
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
