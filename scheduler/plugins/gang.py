"""gang: all-or-nothing by ``minMember`` and per-task ``minTaskMember``.

Task names come from the pod annotation ``volcano.sh/task-spec``. Ready counts Bound,
Running, Allocated and Succeeded tasks plus pending BestEffort tasks (backfill places those),
per job and per task name, as Volcano's ``IsReady`` and ``CheckTaskReady``;
pipelined counts Pipelined too. A staged group (``snapshot.Job.stages``, a JobSet's) is a gang
per stage: its first stage is minMember; a later stage whose pods have begun to arrive is ready
only once all of its pods are (a task that more than one stage brings pods of, as exclusive
placement's leaders then followers, counts them cumulatively), so a later stage is placed whole
or not at all, and waits until every pod of it exists. A job gives up victims only above its ``minMember``, so an
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
        return count >= info.min_member and self._later_stages_whole(job, pipelined=pipelined)

    def _later_stages_whole(self, job: str, *, pipelined: bool) -> bool:
        """Every later stage that has begun (more pods of its tasks exist than the stages before it
        bring) has all of its pods ready, counted through it."""
        ssn, stages = self.session, self.session.job(job).stages
        if len(stages) < 2:
            return True  # one stage: minMember and minTaskMember say it all
        through: collections.Counter[str] = collections.Counter(dict(stages[0]))
        for stage in stages[1:]:
            before = through.copy()
            through.update(dict(stage))
            if not any(ssn.counts.valid[(job, task)] > before[task] for task, _ in stage):
                continue
            for task, _ in stage:
                count = ssn.counts.task_ready[(job, task)] + ssn.counts.task_pending_best_effort[(job, task)]
                if pipelined:
                    count += ssn.counts.task_pipelined[(job, task)]
                if count < through[task]:
                    return False
        return True

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
