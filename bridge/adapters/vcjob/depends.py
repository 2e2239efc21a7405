"""Task dependencies (``tasks[].dependsOn``) in the PodGroup: the first gang. Pure.

Which tasks may have pods made now, from the pods observed, is the controller's decision
(``bridge.vcjobcontrol.starting``); here is what the dependencies mean for the group.

Volcano's PodGroup counts every task (minMember = the job's minAvailable,
minTaskMember per task), yet a dependent task's pods cannot exist until the tasks before it run:
when those first pods alone cannot satisfy the group, Volcano's gang never forms (its own
webhook leaves ``mpi``'s automatic dependsOn off for that reason). :func:`gang` keeps Volcano's
group whenever the tasks without ``dependsOn`` can satisfy it, and otherwise gangs what can
start first: minMember at most their replicas, minTaskMember for those tasks only. The job's
own ``minAvailable`` (its Running phase, ``status.minAvailable``) is unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from bridge.adapters.vcjob import spec

__all__ = ["Gang", "gang"]


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
