"""Work that can never run here: gangs whose pending tasks no node could ever hold. Pure.

A task can never run here when, over every node (ready or not, cordoned or not: those pass),
no node both has the allocatable (not the free) capacity for its request in every dimension
and passes the plugins' static predicates (``Plugin.static_predicate``: nodeSelector and
required node affinity, untolerated taints). A gang is then unrunnable when its ready tasks
plus the pending tasks that could run fall short of minMember (or of a task's minTaskMember):
waiting would never make it ready, so the enqueue action does not admit it (it reserves
nothing) and its PodGroup says why (``verdicts``: reason ``NeverFits``).

Computed once per cycle, from the snapshot, when the session opens (``cycle.open_session``):
one check per distinct pending task shape (most clusters have a handful); only the jobs that
have a task of a refused shape are looked at one by one. A cluster without nodes is left
alone: nodes joining is what it waits for.
"""

from __future__ import annotations

import collections

import numpy as np
import numpy.typing as npt

from scheduler.api import resources, snapshot, tally
from scheduler.framework import session, tiers

__all__ = ["NOT_READY", "Mask", "S", "fit_error", "shortage", "task_never", "unrunnable"]

NOT_READY = "node(s) were not ready"

Mask = npt.NDArray[np.bool_]
S = snapshot.TaskStatus


def unrunnable(ssn: session.Session, plugins: tiers.Tiers) -> dict[str, str]:
    """Job key → why it can never run here, for the jobs that cannot."""
    snap = ssn.snapshot
    if not snap.nodes:
        return {}
    cols = snap.columns
    pending = cols.status == tally.PENDING
    refused: dict[int, str] = {}  # Task.shape → why
    numbers = []  # the same shapes, as tally numbers them
    present = np.bincount(cols.shape[pending], minlength=len(cols.shape_tasks))
    for number in np.flatnonzero(present).tolist():
        task = snap.tasks[cols.shape_tasks[number]]
        why = task_never(ssn, plugins, task)
        if why is not None:
            refused[task.shape] = why
            numbers.append(number)
    if not refused:
        return {}
    touched = np.bincount(cols.job[pending & np.isin(cols.shape, numbers)], minlength=len(cols.jobs))
    out = {}
    for index in np.flatnonzero(touched).tolist():
        key = cols.jobs[index]
        why = _gang(ssn, snap.jobs[key], refused)
        if why is not None:
            out[key] = why
    return out


def _gang(ssn: session.Session, job: snapshot.Job, refused: dict[int, str]) -> str | None:
    pending = [t for t in job.by_priority if t.status is S.PENDING]
    blocked = [t for t in pending if t.shape in refused]
    first = refused[blocked[0].shape]
    can = ssn.counts.ready[job.key] + len(pending) - len(blocked)
    if can < job.min_member:
        return first if len(blocked) == 1 else f"{first} ({len(blocked)} pods can never run here)"
    runnable = collections.Counter(t.task_name for t in pending if t.shape not in refused)
    for name, minimum in sorted(job.min_task_member.items()):
        if ssn.counts.task_ready[(job.key, name)] + runnable[name] < minimum:
            why = next((refused[t.shape] for t in blocked if t.task_name == name), first)
            return f"{why} (minTaskMember {name}={minimum} cannot be met)"
    return None


def task_never(ssn: session.Session, plugins: tiers.Tiers, task: snapshot.Task) -> str | None:
    """Why ``task`` can never run on any node of this cluster, or None when some node could."""
    snap = ssn.snapshot
    req = ssn.vector(task.request)
    asked = np.flatnonzero(req > 0)
    alloc = snap.allocatable
    fits: Mask = np.all(alloc[:, asked] >= req[asked], axis=1) if len(asked) else np.ones(len(alloc), dtype=bool)
    checks = plugins.static_predicate(task)
    passes = np.ones(len(alloc), dtype=bool)
    for _, mask in checks:
        passes &= mask
    if (fits & passes).any():
        return None
    who = f"task {task.task_name or task.name}"
    if not fits.any():
        return f"{who} {_short(ssn, req, asked, np.ones(len(alloc), dtype=bool), 'node')}"
    failing = [phrase for phrase, mask in checks if not mask.any()]
    if failing:
        return f"{who}: no node {failing[0]}"
    phrases = [phrase for phrase, _ in checks]
    if not passes.any():
        return f"{who}: no node {' and '.join(phrases)}"
    return f"{who} {_short(ssn, req, asked, passes, 'node that ' + ' and '.join(phrases))}"


def _short(
    ssn: session.Session, req: npt.NDArray[np.float64], asked: npt.NDArray[np.intp], rows: Mask, what: str
) -> str:
    """ "needs cpu 40 but the largest node has 32", over the nodes of ``rows``."""
    alloc = ssn.snapshot.allocatable[rows]
    dims = ssn.dims
    for col in asked.tolist():
        most = float(alloc[:, col].max())
        if most < req[col]:
            need = resources.human(dims[col], req[col])
            if most <= 0:
                return f"needs {dims[col]} {need} but no {what} has any"
            return f"needs {dims[col]} {need} but the largest {what} has {resources.human(dims[col], most)}"
    wanted = ", ".join(f"{dims[c]} {resources.human(dims[c], req[c])}" for c in asked.tolist())
    return f"needs {wanted} but no {what} has all of it at once"


def fit_error(ssn: session.Session, ready: Mask, checks: list[tuple[str, Mask]], task: snapshot.Task) -> str:
    """Why no node fits ``task`` (``checks``: every predicate's reason and passes), kube-scheduler
    style: "0/3 nodes are available: 3 Insufficient cpu."."""
    counts: collections.Counter[str] = collections.Counter()
    counts[NOT_READY] = int((~ready).sum())
    for reason, mask in checks:
        counts[reason] += int((~mask).sum())
    req = ssn.vector(task.request)
    for col in np.flatnonzero(req > 0):
        counts[shortage(ssn.dims[col])] += int((ssn.nodes.future[:, col] < req[col]).sum())
    parts = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()) if n)
    return f"0/{len(ready)} nodes are available: {parts or 'no nodes'}."


def shortage(name: str) -> str:
    """kube-scheduler's reason for a node short of resource ``name``."""
    return "Too many pods" if name == resources.PODS else f"Insufficient {name}"
