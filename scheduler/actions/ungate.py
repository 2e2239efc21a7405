"""ungate (native backend): lift our queue gate from the pods of every group its queue admitted.

Runs after the configured actions (``configure.NATIVE_ACTIONS``) when the backend is native:
kube-scheduler places the pods, our cycle only decides admission. For each group that is not
Pending after enqueue (Inqueue, or already Running/Unknown: pods added later join at once),
not held and not one that can never run here, every Pending task that still carries
``keys.QUEUE_GATE`` gets an ``Ungate`` operation; the group's message then says it waits on
kube-scheduler. ``hand_over`` drops the plan's pod verdicts for our tasks: kube-scheduler
writes the pods' PodScheduled condition and events on this backend, the PodGroup's condition
is ours.
"""

from __future__ import annotations

import dataclasses

from bridge import keys
from scheduler.api import plan, snapshot
from scheduler.framework import session, tiers

__all__ = ["KUBE_SCHEDULER_WAIT", "execute", "hand_over"]

KUBE_SCHEDULER_WAIT = "admitted by queue {queue}; kube-scheduler places the pods (native PodGroup {group})"


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    del plugins  # the decision was enqueue's
    tasks = ssn.snapshot.tasks
    for key, job in ssn.snapshot.jobs.items():
        if ssn.phase[key] == "Pending" or job.held is not None or key in ssn.never:
            continue
        pending = [tasks[t] for t in job.tasks if tasks[t].status is snapshot.TaskStatus.PENDING]
        for task in pending:
            if task.gated:
                ssn.committed.operations.append(plan.Ungate(task.key, task.uid, keys.QUEUE_GATE, key))
        if pending:
            ssn.diagnostics.job_errors[key] = KUBE_SCHEDULER_WAIT.format(queue=job.queue, group=job.name)


def hand_over(result: plan.Plan, snap: snapshot.Snapshot) -> plan.Plan:
    """``result`` without pod verdicts for our tasks (kube-scheduler's on this backend)."""
    return dataclasses.replace(result, pods=tuple(v for v in result.pods if v.pod not in snap.tasks))
