"""The parts of one cycle's session state, each with its own contract; ``session.Session`` composes them.

- ``NodeState``: per node row, what is idle now and in the future, and which rows changed;
- ``Counts``: per job and per (job, task name), how many tasks are ready, pipelined, valid, pending;
- ``Allocations``: what each job and each queue holds, as resource vectors;
- ``Holds``: capacity held for Spark executors, per job;
- ``Committed``: what committed statements produced, in order (the plan's operations);
- ``Diagnostics``: why tasks and jobs were not placed (the plan's messages).

Only ``session.Session``'s ``apply_*``/``undo_*`` (called by ``statement.Statement``) and the
actions' diagnostics change these; plugins only read them. Counts and sums are opened in bulk
from the snapshot's task columns (:mod:`scheduler.api.tally`): a cycle over a hundred thousand
pods does not touch each pod in Python just to begin.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from scheduler.api import plan, resources, snapshot, tally

__all__ = ["Allocations", "Committed", "Counts", "Diagnostics", "Holds", "Matrix", "NodeState", "S", "Vector"]

Vector = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float64]
S = snapshot.TaskStatus
_READY = tally.codes(snapshot.READY)
_INVALID = tally.codes(frozenset({S.FAILED, S.RELEASING}))
_CHARGED = tally.codes(snapshot.OCCUPYING - {S.RELEASING})


class NodeState:
    """Node rows (``nodes × dims`` arrays): ``idle`` = allocatable − used − allocated this cycle,
    ``future`` = idle + releasing − pipelined (Volcano's Idle and FutureIdle).

    Every change to a row is appended to ``changed_rows``, so placement caches refresh only
    those rows. ``free_total`` (Σ max(idle, 0) per dimension) is kept up to date only while
    ``track_free`` (Spark capacity is held: only then is it read). Pods per topology domain are
    ``topology.Topology``'s.
    """

    __slots__ = ("changed_rows", "free_total", "future", "idle", "names", "track_free")

    def __init__(self, snap: snapshot.Snapshot) -> None:
        self.names = [node.name for node in snap.nodes]
        self.idle: Matrix = snap.allocatable - snap.used
        self.future: Matrix = self.idle + snap.releasing
        self.free_total: Vector = np.maximum(self.idle, 0).sum(axis=0)
        self.track_free = False
        self.changed_rows: list[int] = []

    def take(self, row: int, vec: Vector, *, idle: bool) -> None:
        """``vec`` more taken from the row's future, and from its idle too when ``idle``."""
        if idle and self.track_free:
            old = np.maximum(self.idle[row], 0)
            self.idle[row] -= vec
            self.free_total += np.maximum(self.idle[row], 0) - old
        elif idle:
            self.idle[row] -= vec
        self.future[row] -= vec
        self.changed_rows.append(row)

    def take_many(self, rows: list[int], vec: Vector) -> None:
        """``take(row, vec, idle=True)`` for each of ``rows`` (repeats allowed), in one step."""
        delta: Vector
        if len(set(rows)) == len(rows):  # one copy per row (a spread gang): 1 × vec is vec
            touched, delta = np.array(rows, dtype=np.intp), vec
        else:
            per_row = collections.Counter(rows)
            touched = np.fromiter(per_row, dtype=np.intp, count=len(per_row))
            delta = np.fromiter(per_row.values(), dtype=np.float64, count=len(per_row))[:, None] * vec
        # take, subtract, put back: cheaper than ``idle[touched] -= delta`` (rows are distinct)
        idle = self.idle.take(touched, axis=0)
        if self.track_free:
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

    def release(self, row: int, vec: Vector) -> None:
        """``vec`` on the row becomes releasing (an eviction): future idle grows; negative undoes."""
        self.future[row] += vec
        self.changed_rows.append(row)


class Counts:
    """Task counts per job (``Counter[job]``) and per task name (``Counter[(job, task name)]``).

    ``ready``/``task_ready``: Volcano's ready (allocated, bound, running, succeeded);
    ``pipelined``/``task_pipelined``: pipelined this cycle; ``valid``/``valid_total``: may
    still run (not failed, not leaving); ``pending``: still Pending, BestEffort included;
    ``pending_best_effort``/``task_pending_best_effort``: the Pending BestEffort ones.
    """

    __slots__ = (
        "pending",
        "pending_best_effort",
        "pipelined",
        "ready",
        "task_pending_best_effort",
        "task_pipelined",
        "task_ready",
        "valid",
        "valid_total",
    )

    def __init__(self, cols: tally.Tally) -> None:
        jobs, groups = cols.jobs, cols.groups
        ready = np.isin(cols.status, _READY)
        valid = ~np.isin(cols.status, _INVALID)
        pending = cols.status == tally.PENDING
        best_effort = pending & cols.best_effort
        self.ready = tally.counter(jobs, cols.job, ready)
        self.task_ready = tally.counter(groups, cols.group, ready)
        self.pipelined: collections.Counter[str] = collections.Counter()
        self.task_pipelined: collections.Counter[tuple[str, str]] = collections.Counter()
        self.valid = tally.counter(groups, cols.group, valid)
        self.valid_total = tally.counter(jobs, cols.job, valid)
        self.pending = tally.counter(jobs, cols.job, pending)
        self.pending_best_effort = tally.counter(jobs, cols.job, best_effort)
        self.task_pending_best_effort = tally.counter(groups, cols.group, best_effort)

    def count(self, task: snapshot.Task, *, ready: int = 0, pipelined: int = 0) -> None:
        self.ready[task.job] += ready
        self.task_ready[(task.job, task.task_name)] += ready
        self.pipelined[task.job] += pipelined
        self.task_pipelined[(task.job, task.task_name)] += pipelined

    def best_effort(self, task: snapshot.Task, delta: int) -> None:
        self.pending_best_effort[task.job] += delta
        self.task_pending_best_effort[(task.job, task.task_name)] += delta


class Allocations:
    """What each job and queue holds (tasks that occupy resources, but releasing ones).

    ``job[key]`` is a row of one matrix (``+=`` updates it in place); ``of_queue(name)`` sums a
    queue's jobs on first use and is kept up to date after. ``request_vectors`` has one row per
    distinct request (``cols.request`` indexes it), for sums per job in bulk; ``queue_jobs``
    gives each queue's jobs' indices in ``cols.jobs``.
    """

    __slots__ = ("_matrix", "job", "queue", "queue_jobs", "request_vectors")

    def __init__(self, snap: snapshot.Snapshot, vector: Callable[[resources.Resource], Vector]) -> None:
        cols = snap.columns
        vectors = [vector(r) for r in cols.requests]
        self.request_vectors: Matrix = np.array(vectors, dtype=np.float64).reshape(-1, len(snap.dims))
        self._matrix = tally.per_job(cols, np.isin(cols.status, _CHARGED), self.request_vectors)
        self.job: dict[str, Vector] = dict(zip(cols.jobs, self._matrix, strict=True))
        self.queue: dict[str, Vector] = {}
        self.queue_jobs: dict[str, list[int]] = {}
        for i, info in enumerate(snap.jobs.values()):
            self.queue_jobs.setdefault(info.queue, []).append(i)

    @property
    def matrix(self) -> Matrix:
        """One row per job, in ``snapshot.columns.jobs`` order: the rows ``job`` maps to."""
        return self._matrix

    def of_queue(self, queue: str) -> Vector:
        vec = self.queue.get(queue)
        if vec is None:
            vec = self.queue[queue] = self._matrix[self.queue_jobs.get(queue, [])].sum(axis=0)
        return vec

    def charge(self, job: str, queue: str, vec: Vector) -> None:
        self.job[job] += vec
        self.of_queue(queue)[:] += vec


class Holds:
    """Capacity held for Spark executors: ``owed[job]`` per job, ``total`` over all of them.

    Empty until ``Session.hold`` sets it up (the Spark hold plugin, before any action); its
    jobs never change after, only what each is owed, as its own pods consume it.
    """

    __slots__ = ("owed", "total")

    def __init__(self, dims: int) -> None:
        self.owed: dict[str, Vector] = {}
        self.total: Vector = np.zeros(dims)

    def against(self, job: str) -> Vector:
        """Capacity held for other groups that ``job`` must leave free."""
        own = self.owed.get(job)
        return self.total - own if own is not None else self.total

    def consume(self, job: str, vec: Vector) -> Vector | None:
        """``job``'s own pod took ``vec``: its hold shrinks by as much; the hold before, to undo."""
        held = self.owed.get(job)
        if held is None:
            return None
        before = held.copy()
        taken = np.minimum(held, vec)
        held -= taken
        self.total -= taken
        return before

    def restore(self, job: str, before: Vector | None) -> None:
        if before is not None:
            held = self.owed[job]
            self.total += before - held
            held[:] = before


class Committed:
    """What committed statements produced: ``operations`` in order (the plan's), and indexed for
    closing: ``binds`` pod → node of each Allocate, ``pipelines`` the pods of each Pipeline, and
    how many of each a job got (a pod is never both: each leaves Pending for good).

    ``on_commit``, when set, is told each committed statement's Allocates at once (they are
    final: no later step of the cycle withdraws one), so binds can go out while the cycle goes on.
    ``requeued``: groups a committed reclaim evicted whole on the native backend, sent back to
    admission (their verdict is Pending, so pods that replace theirs wait at the queue gate).
    """

    __slots__ = ("binds", "binds_per_job", "on_commit", "operations", "pipelines", "pipelines_per_job", "requeued")

    def __init__(self, on_commit: Callable[[list[plan.Allocate]], None] | None) -> None:
        self.operations: list[plan.Operation] = []
        self.on_commit = on_commit
        self.binds: dict[str, str] = {}
        self.pipelines: set[str] = set()
        self.binds_per_job: collections.Counter[str] = collections.Counter()
        self.pipelines_per_job: collections.Counter[str] = collections.Counter()
        self.requeued: set[str] = set()


class Diagnostics:
    """Why things were not placed, for the plan's conditions and pod events: ``fit_errors`` task
    → reason, ``job_errors`` job → why the gang was not placed, ``invalid`` job → JobValid verdict,
    ``refusals`` job → who kept it Pending (enqueue's ``never`` or a plugin's name),
    ``evictions`` preemptor job → (victim pod, why) of the evictions committed for it."""

    __slots__ = ("evictions", "fit_errors", "invalid", "job_errors", "refusals")

    def __init__(self) -> None:
        self.fit_errors: dict[str, str] = {}
        self.job_errors: dict[str, str] = {}
        self.invalid: dict[str, plan.Invalid] = {}
        self.refusals: dict[str, str] = {}
        self.evictions: dict[str, list[tuple[str, str]]] = {}
