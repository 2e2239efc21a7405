"""The tasks of a snapshot as columns (numpy arrays), so a cycle counts per job in bulk. Pure.

A session opens with per-job counts (ready, valid, pending, BestEffort) and per-job allocated
resources; closing it needs per-job counts by status. Counting pod by pod in Python costs
microseconds per pod per cycle; ``np.bincount`` over these columns costs nanoseconds. Built
once with the snapshot (``building.build``), read-only afterwards.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from scheduler.api import resources, snapshot

__all__ = ["PENDING", "STATUSES", "Bools", "Ints", "Matrix", "Tally", "codes", "counter", "of", "per_job"]

Ints = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]
Matrix = npt.NDArray[np.float64]
K = TypeVar("K", bound=Hashable)

STATUSES: tuple[snapshot.TaskStatus, ...] = tuple(snapshot.TaskStatus)
_CODE = {status: code for code, status in enumerate(STATUSES)}
PENDING = _CODE[snapshot.TaskStatus.PENDING]  # the code of Pending, the status read most


def codes(statuses: frozenset[snapshot.TaskStatus]) -> Ints:
    """The status codes of a set of statuses, for ``np.isin`` over ``Tally.status``."""
    return np.array(sorted(_CODE[s] for s in statuses), dtype=np.intp)


@dataclasses.dataclass(frozen=True, slots=True)
class Tally:
    """One entry per task, in ``Snapshot.tasks`` order."""

    jobs: tuple[str, ...]  # Snapshot.jobs order; ``job`` indexes it
    job: Ints
    status: Ints  # index into STATUSES
    groups: tuple[tuple[str, str], ...]  # distinct (job, task name); ``group`` indexes it
    group: Ints
    requests: tuple[resources.Resource, ...]  # distinct requests; ``request`` indexes it
    request: Ints
    best_effort: Bools
    shape: Ints  # distinct Task.shape, numbered here; ``shape_tasks`` indexes it
    shape_tasks: tuple[str, ...]  # one task key per distinct shape, the first seen
    statuses: Mapping[str, snapshot.TaskStatus]  # task key → status, for a session to copy
    rows: Mapping[str, int]  # task key → node row, for tasks on a known node
    constrained: tuple[str, ...]  # tasks with pod (anti-)affinity or topology spread (``Placement.pod_terms``)


def of(tasks: Mapping[str, snapshot.Task], jobs: Sequence[str], node_index: Mapping[str, int]) -> Tally:
    job_index = {key: i for i, key in enumerate(jobs)}
    groups: dict[tuple[str, str], int] = {}
    requests: dict[resources.Resource, int] = {}
    shapes: dict[int, int] = {}
    shape_tasks: list[str] = []
    job, status, group, request, best_effort, shape = [], [], [], [], [], []
    statuses: dict[str, snapshot.TaskStatus] = {}
    rows: dict[str, int] = {}
    constrained = []
    for key, task in tasks.items():
        if task.placement.pod_terms:
            constrained.append(key)
        job.append(job_index[task.job])
        status.append(_CODE[task.status])
        group.append(groups.setdefault((task.job, task.task_name), len(groups)))
        request.append(requests.setdefault(task.request, len(requests)))
        best_effort.append(task.best_effort)
        number = shapes.setdefault(task.shape, len(shapes))
        if number == len(shape_tasks):
            shape_tasks.append(key)
        shape.append(number)
        statuses[key] = task.status
        if task.node is not None and task.node in node_index:
            rows[key] = node_index[task.node]
    return Tally(
        jobs=tuple(jobs),
        job=np.array(job, dtype=np.intp),
        status=np.array(status, dtype=np.intp),
        groups=tuple(groups),
        group=np.array(group, dtype=np.intp),
        requests=tuple(requests),
        request=np.array(request, dtype=np.intp),
        best_effort=np.array(best_effort, dtype=bool),
        shape=np.array(shape, dtype=np.intp),
        shape_tasks=tuple(shape_tasks),
        statuses=statuses,
        rows=rows,
        constrained=tuple(constrained),
    )


def counter(names: Sequence[K], index: Ints, mask: Bools) -> collections.Counter[K]:
    """How many masked entries fall on each name (``names[index[i]]``); names counted 0 left out."""
    counts = np.bincount(index[mask], minlength=len(names))
    hit = np.flatnonzero(counts)
    return collections.Counter(dict(zip([names[i] for i in hit.tolist()], counts[hit].tolist(), strict=True)))


def per_job(tally: Tally, mask: Bools, vectors: Matrix) -> Matrix:
    """Σ of the masked tasks' request vectors per job: a ``jobs × dims`` matrix.

    ``vectors`` holds one row per distinct request. Amounts are whole numbers in float64, so the
    sums are exact whatever the order of addition.
    """
    out = np.zeros((len(tally.jobs), vectors.shape[1]), dtype=np.float64)
    jobs, requests = tally.job[mask], tally.request[mask]
    for col in range(vectors.shape[1]):
        out[:, col] = np.bincount(jobs, weights=vectors[requests, col], minlength=len(tally.jobs))
    return out
