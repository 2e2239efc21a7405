"""Volcano's Statement: a log of operations applied to the session, committed or discarded.

Each operation changes the session at once, so later decisions in the cycle see it.
``commit`` hands the operations to the plan (in order, in ``Session.committed``), and its
Allocates to ``committed.on_commit`` when one is set; ``discard`` rolls them back in reverse.
A statement that is neither committed nor discarded (a gang that is only pipelined) keeps its session effects,
reserving the resources for the rest of the cycle, but produces no operations: nothing is
bound until the gang can be made whole.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from scheduler.api import plan, snapshot
from scheduler.framework import session

__all__ = ["Statement"]


@dataclasses.dataclass(slots=True)
class _Entry:
    kind: str  # allocate | pipeline | evict
    task: str
    row: int
    undo: npt.NDArray[np.float64] | snapshot.TaskStatus | None
    reason: str = ""
    message: str = ""


@dataclasses.dataclass(slots=True)
class _Batch:
    """Allocations of one job's identical tasks, made (and undone) in one session step."""

    tasks: list[snapshot.Task]
    rows: list[int]


class Statement:
    def __init__(self, ssn: session.Session) -> None:
        self.session = ssn
        self._entries: list[_Entry | _Batch] = []

    def __bool__(self) -> bool:
        """Whether anything is staged (a batch never holds zero tasks)."""
        return bool(self._entries)

    def evictions(self) -> list[tuple[str, str]]:
        """(victim, message) of the evictions staged, in order."""
        return [(e.task, e.message) for e in self._entries if isinstance(e, _Entry) and e.kind == "evict"]

    def allocate(self, task: str, row: int) -> None:
        self._entries.append(_Entry("allocate", task, row, self.session.apply_allocate(task, row)))

    def allocate_many(self, tasks: list[snapshot.Task], rows: list[int]) -> None:
        """``allocate`` each task on its row, in order; one job, one request, no Spark hold."""
        if not tasks:
            return
        self.session.apply_allocate_many(tasks, rows)
        self._entries.append(_Batch(tasks, rows))

    def pipeline(self, task: str, row: int) -> None:
        self._entries.append(_Entry("pipeline", task, row, self.session.apply_pipeline(task, row)))

    def evict(self, task: str, *, reason: str, message: str) -> None:
        row = self.session.row[task]
        self._entries.append(_Entry("evict", task, row, self.session.apply_evict(task), reason, message))

    def discard(self) -> None:
        ssn = self.session
        for entry in reversed(self._entries):
            if isinstance(entry, _Batch):
                ssn.undo_allocate_many(entry.tasks, entry.rows)
            elif entry.kind == "allocate":
                assert not isinstance(entry.undo, snapshot.TaskStatus)
                ssn.undo_allocate(entry.task, entry.row, entry.undo)
            elif entry.kind == "pipeline":
                assert not isinstance(entry.undo, snapshot.TaskStatus)
                ssn.undo_pipeline(entry.task, entry.row, entry.undo)
            else:
                assert isinstance(entry.undo, snapshot.TaskStatus)
                ssn.undo_evict(entry.task, entry.undo)
        self._entries.clear()

    def commit(self) -> None:
        ssn = self.session
        done = ssn.committed
        ops, binds, pipelines = done.operations, done.binds, done.pipelines
        names = ssn.nodes.names
        tasks = ssn.snapshot.tasks
        first = len(ops)
        for entry in self._entries:
            if isinstance(entry, _Batch):
                nodes = [names[row] for row in entry.rows]
                ops += [plan.Allocate(t.key, t.uid, node) for t, node in zip(entry.tasks, nodes, strict=True)]
                binds.update(zip([t.key for t in entry.tasks], nodes, strict=True))
                done.binds_per_job[entry.tasks[0].job] += len(entry.tasks)
                continue
            task = tasks[entry.task]
            node = names[entry.row]
            if entry.kind == "allocate":
                ops.append(plan.Allocate(task.key, task.uid, node))
                binds[task.key] = node
                done.binds_per_job[task.job] += 1
            elif entry.kind == "pipeline":
                ops.append(plan.Pipeline(task.key, task.uid, node))
                pipelines.add(task.key)
                done.pipelines_per_job[task.job] += 1
            else:
                ops.append(plan.Evict(task.key, task.uid, node, entry.reason, entry.message))
        self._entries.clear()
        if done.on_commit is not None:
            allocates = [op for op in ops[first:] if isinstance(op, plan.Allocate)]
            if allocates:
                done.on_commit(allocates)
