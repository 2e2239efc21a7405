"""The PodGroup of a Volcano Job, as Volcano's job controller makes it. Pure.

One difference, for task dependencies only: when the pods made first (of the tasks without
``dependsOn``) could never satisfy Volcano's group, the group gangs those instead
(``bridge.adapters.vcjob.depends.gang``), and minResources counts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import podgroups, podresources
from bridge.adapters.vcjob import depends, names, spec

__all__ = ["build", "min_resources"]


def min_resources(job: Mapping[str, Any], priorities: Mapping[str, int]) -> dict[str, str]:
    """Requests of the first minAvailable pods, tasks ordered by PriorityClass value (ties: spec order).

    This is what the enqueue step reserves, so a gang is only admitted when all of it can fit.
    """
    gang = depends.gang(job)
    tasks = [t for t in spec.tasks(job) if not gang.reduced or t.name in gang.first]
    ranked = sorted(
        range(len(tasks)),
        key=lambda i: (-priorities.get(str((tasks[i].template.get("spec") or {}).get("priorityClassName", "")), 0), i),
    )
    left = gang.min_member
    parts = []
    for i in ranked:
        n = min(left, tasks[i].replicas)
        if n:
            pod_spec = tasks[i].template.get("spec") or {}
            parts.append(podresources.scale(podresources.pod_requests(pod_spec, what=f"task {tasks[i].name}"), n))
        left -= n
    return podresources.total(parts)


def build(job: Mapping[str, Any], priorities: Mapping[str, int]) -> dict[str, Any]:
    """``<job>-<uid>``: minMember = minAvailable, minTaskMember per task (both as ``depends.gang``
    says), the job's queue and priority.

    No ownerReference here: the controller adds it (it needs the live uid, which ``job`` has).
    """
    meta, job_spec = job["metadata"], job["spec"]
    gang = depends.gang(job)
    group = podgroups.build(
        name=names.podgroup(job),
        namespace=meta["namespace"],
        min_member=gang.min_member,
        queue=job_spec.get("queue") or "default",
        min_resources=min_resources(job, priorities) or None,
        min_task_member=gang.min_task_member,
        priority_class=job_spec.get("priorityClassName"),
        labels={names.JOB_NAME: meta["name"], names.JOB_NAMESPACE: meta["namespace"]},
    )
    return group
