"""gang: all-or-nothing by ``minMember`` and per-task ``minTaskMember``.

Task names come from the pod annotation ``volcano.sh/task-spec``. Ready counts Bound,
Running, Allocated and Succeeded tasks plus pending BestEffort tasks (backfill places those),
per job and per task name, as Volcano's ``IsReady`` and ``CheckTaskReady``;
pipelined counts Pipelined too. A job gives up victims only above its ``minMember``, so an
eviction never leaves a running gang short; for the gang-level actions (gangpreempt,
gangreclaim) every candidate is permitted, as in Volcano, because those choose victims per job
(``actions.bundles``: surplus replicas, or the whole job).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

from scheduler.api import snapshot
from scheduler.framework import plugin

__all__ = ["Gang"]


class Gang(plugin.Plugin):
    name = "gang"

    def job_valid(self, job: str) -> plugin.Invalid | None:
        ssn, info = self.session, self.session.job(job)
        for task_name, minimum in sorted(info.min_task_member.items()):
            have = ssn.counts.valid[(job, task_name)]
            if have < minimum:
                return plugin.Invalid(
                    "NotEnoughPodsOfTask", f"task {task_name} has {have} valid pods, minTaskMember is {minimum}"
                )
        total = ssn.counts.valid_total[job]
        if total < info.min_member:
            return plugin.Invalid("NotEnoughTasks", f"{total} valid pods, minMember is {info.min_member}")
        return None

    def _enough(self, job: str, *, pipelined: bool) -> bool:
        ssn, info = self.session, self.session.job(job)
        for task_name, minimum in info.min_task_member.items():
            count = ssn.counts.task_ready[(job, task_name)] + ssn.counts.task_pending_best_effort[(job, task_name)]
            if pipelined:
                count += ssn.counts.task_pipelined[(job, task_name)]
            if count < minimum:
                return False
        count = ssn.counts.ready[job] + ssn.counts.pending_best_effort[job]
        if pipelined:
            count += ssn.counts.pipelined[job]
        return count >= info.min_member

    def job_ready(self, job: str) -> bool:
        return self._enough(job, pipelined=False)

    def job_pipelined(self, job: str) -> bool:
        return self._enough(job, pipelined=True)

    def job_order(self, job: str) -> tuple[Any, ...]:
        # Not-ready gangs first: finishing a gang beats growing one that already runs.
        return (1 if self.job_ready(job) else 0,)

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task]:
        if action in plugin.GANG_LEVEL:
            return list(candidates)
        ssn = self.session
        taken_job: collections.Counter[str] = collections.Counter()
        taken_task: collections.Counter[tuple[str, str]] = collections.Counter()
        allowed = []
        for task in candidates:
            info, name = ssn.job(task.job), (task.job, task.task_name)
            if ssn.counts.ready[task.job] - taken_job[task.job] <= info.min_member:
                continue
            per_task = info.min_task_member.get(task.task_name)
            if per_task is not None and ssn.counts.task_ready[name] - taken_task[name] <= per_task:
                continue
            allowed.append(task)
            taken_job[task.job] += 1
            taken_task[name] += 1
        return allowed
