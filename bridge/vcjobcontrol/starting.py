"""Task dependencies (``tasks[].dependsOn``) at run time: which tasks may have pods made now. Pure.

Volcano's job controller (``syncJob`` with ``waitDependsOnTaskMeetCondition`` and
``isDependsOnPodsReady``) makes a task's missing pods only once the tasks it depends on are
ready; :func:`startable` is that decision, from the job and its observed pods:

- a task is ready (:func:`ready`) when at least its ``minAvailable`` pods are Succeeded, or
  Running with every container ready (a pod being deleted does not count: it is going away);
- ``iteration: any`` with more than one name: any one of them ready is enough; otherwise
  (``all``, unset, or a single name) every one of them must be;
- a task without ``dependsOn`` may always have its pods made.

The check is made again on every sync (each pod change of the job causes one), so a
dependent task's pods follow as soon as what it waits for runs. What the dependencies mean for
the PodGroup (the first gang) is translation: ``bridge.adapters.vcjob.depends``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bridge.adapters.vcjob import names, spec

__all__ = ["Pod", "ready", "startable", "waiting_for"]

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
