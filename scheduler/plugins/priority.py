"""priority: order jobs by PriorityClass value; preempt only strictly lower priority.

Within one job, a task may displace a sibling of strictly lower task priority.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.api import snapshot
from scheduler.framework import plugin

__all__ = ["Priority"]


class Priority(plugin.Plugin):
    name = "priority"

    def job_order(self, job: str) -> tuple[Any, ...]:
        return (-self.session.job(job).priority,)

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task] | None:
        if action not in plugin.PREEMPTS:
            return None
        mine = self.session.job(preemptor.job).priority
        allowed = []
        for task in candidates:
            if task.job == preemptor.job:
                if task.priority < preemptor.priority:
                    allowed.append(task)
            elif self.session.job(task.job).priority < mine:
                allowed.append(task)
        return allowed
