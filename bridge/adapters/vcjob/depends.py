"""Task dependencies (``tasks[].dependsOn``): which tasks may have pods made, and the first gang. Pure.

Volcano's job controller (``syncJob`` with ``waitDependsOnTaskMeetCondition`` and
``isDependsOnPodsReady``) makes a task's missing pods only once the tasks it depends on are
ready; :func:`startable` is that decision, from the job and its observed pods:

- a task is ready (:func:`ready`) when at least its ``minAvailable`` pods are Succeeded, or
  Running with every container ready (a pod being deleted does not count: it is going away);
- ``iteration: any`` with more than one name: any one of them ready is enough; otherwise
  (``all``, unset, or a single name) every one of them must be;
- a task without ``dependsOn`` may always have its pods made.

The check is made again on every sync (each pod change of the job causes one), so a
dependent task's pods follow as soon as what it waits for runs.

The gang. Volcano's PodGroup counts every task (minMember = the job's minAvailable,
minTaskMember per task), yet a dependent task's pods cannot exist until the tasks before it run:
when those first pods alone cannot satisfy the group, Volcano's gang never forms (its own
webhook leaves ``mpi``'s automatic dependsOn off for that reason). :func:`gang` keeps Volcano's
group whenever the tasks without ``dependsOn`` can satisfy it, and otherwise gangs what can
start first: minMember at most their replicas, minTaskMember for those tasks only. The job's
own ``minAvailable`` (its Running phase, ``status.minAvailable``) is unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.adapters.vcjob import names, spec

__all__ = ["Gang", "gang", "ready", "startable", "waiting_for"]

Pod = Mapping[str, Any]


def _serving(pod: Pod) -> bool:
    """Succeeded, or Running with all containers ready (Volcano's isDependsOnPodsReady)."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    phase = status.get("phase")
    if phase == "Succeeded":
        return True
    return phase == "Running" and all(c.get("ready") for c in status.get("containerStatuses") or [])


def ready(job: Mapping[str, Any], task: spec.Task, observed: Sequence[Pod]) -> bool:
    """At least ``task.min_available`` of the task's pods ``<job>-<task>-<i>`` serve."""
    wanted = {names.pod(job["metadata"]["name"], task.name, i) for i in range(task.replicas)}
    serving = sum(1 for p in observed if (p.get("metadata") or {}).get("name") in wanted and _serving(p))
    return serving >= task.min_available


def _met(task: spec.Task, done: Mapping[str, bool]) -> bool:
    if not task.depends_on:
        return True
    if task.iteration == "any" and len(task.depends_on) > 1:
        return any(done[d] for d in task.depends_on)
    return all(done[d] for d in task.depends_on)


def startable(job: Mapping[str, Any], observed: Sequence[Pod]) -> frozenset[str]:
    """The tasks whose missing pods may be created now."""
    tasks = spec.tasks(job)
    done = {t.name: ready(job, t, observed) for t in tasks}
    return frozenset(t.name for t in tasks if _met(t, done))


def waiting_for(job: Mapping[str, Any], observed: Sequence[Pod]) -> dict[str, tuple[str, ...]]:
    """Per task that may not start yet, the tasks it waits for that are not ready."""
    tasks = spec.tasks(job)
    done = {t.name: ready(job, t, observed) for t in tasks}
    return {t.name: tuple(d for d in t.depends_on if not done[d]) for t in tasks if not _met(t, done)}


@dataclasses.dataclass(frozen=True)
class Gang:
    min_member: int
    min_task_member: Mapping[str, int]
    first: tuple[str, ...]  # the tasks whose pods are made first (every task when none waits)
    reduced: bool  # the gang is smaller than Volcano's group, which could never form


def _formable(min_member: int, min_task: Mapping[str, int], first: set[str], replicas: Mapping[str, int]) -> bool:
    """Whether the first tasks' pods alone satisfy the group, by Volcano's gang rules (the
    per-task minimums count only when minMember is at least their sum)."""
    if min_member > sum(replicas[t] for t in first):
        return False
    if min_member < sum(min_task.values()):
        return True
    return all(n == 0 for t, n in min_task.items() if t not in first)


def gang(job: Mapping[str, Any]) -> Gang:
    """The PodGroup's minMember and minTaskMember for a defaulted job (see the module docstring).

    minTaskMember is left out when minMember is below its sum: Volcano's scheduler then checks
    the job's count only (``CheckTaskValid``, ``CheckTaskReady``), ours checks what it is given.
    """
    tasks = spec.tasks(job)
    min_member = int(job["spec"].get("minAvailable") or 0)
    min_task = {t.name: t.min_available for t in tasks}
    first = {t.name for t in tasks if not t.depends_on}
    replicas = {t.name: t.replicas for t in tasks}
    order = tuple(t.name for t in tasks if t.name in first)
    reduced = len(first) < len(tasks) and not _formable(min_member, min_task, first, replicas)
    if reduced:
        min_member = min(min_member, sum(replicas[t] for t in first))
        min_task = {t: n for t, n in min_task.items() if t in first}
    if min_member < sum(min_task.values()):
        min_task = {}
    return Gang(min_member=min_member, min_task_member=min_task, first=order, reduced=reduced)
