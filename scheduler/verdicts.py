"""Close a session: turn its state into PodGroup, Queue and pod verdicts (Volcano's CloseSession).

Phase (as ``getPodGroupPhase``, but a group with running members never falls back to
Pending, so it keeps its place instead of queueing behind newer groups): Completed when at
least minMember tasks were scheduled and all of them finished; Running when at least
minMember are scheduled (Bound/Running/Succeeded/Failed or bound this cycle); Unknown when
some run but fewer than minMember; Inqueue once admitted; else Pending.

Conditions: ``Unschedulable`` (reasons NotEnoughResources, NotEnoughTasks,
NotEnoughPodsOfTask, plus QueueNotFound and QueueClosed for groups Volcano would ignore
silently) with "N/M tasks in gang unschedulable: ..."; ``Scheduled`` when the gang is ready.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

from scheduler import plan, resources, session, snapshot

__all__ = ["close"]

S = snapshot.TaskStatus
SCHEDULED = frozenset({S.BOUND, S.RUNNING, S.SUCCEEDED, S.FAILED})
READY_REASON = "tasks in gang are ready to be scheduled"

_Messages = Callable[[str], tuple[str, str]]  # task → (event reason, message)


def close(ssn: session.Session) -> plan.Plan:
    snap = ssn.snapshot
    ops = tuple(ssn.operations)
    bound = {op.pod: op.node for op in ops if isinstance(op, plan.Allocate)}
    pipelined = {op.pod for op in ops if isinstance(op, plan.Pipeline)}
    pods = [
        plan.PodVerdict(pod, "Normal", "Scheduled", f"Successfully assigned {pod} to {node}")
        for pod, node in bound.items()
    ]
    pods += [plan.PodVerdict(s.key, "Warning", "Unschedulable", s.message) for s in snap.stranded]
    groups = []
    for job in snap.jobs.values():
        verdict, messages = _podgroup(ssn, job, bound)
        groups.append(verdict)
        for task_key in job.tasks:
            if task_key in bound or task_key in pipelined or snap.tasks[task_key].status is not S.PENDING:
                continue
            reason, message = messages(task_key)
            pods.append(plan.PodVerdict(task_key, "Warning", reason, message))
    return plan.Plan(operations=ops, podgroups=tuple(groups), queues=_queues(ssn, groups), pods=tuple(pods))


def _podgroup(ssn: session.Session, job: snapshot.Job, bound: dict[str, str]) -> tuple[plan.PodGroupVerdict, _Messages]:
    snap = ssn.snapshot
    statuses = collections.Counter(snap.tasks[t].status for t in job.tasks)
    scheduled = sum(statuses[s] for s in SCHEDULED) + sum(1 for t in job.tasks if t in bound)
    finished = statuses[S.SUCCEEDED] + statuses[S.FAILED]
    if job.min_member <= scheduled and scheduled == finished and scheduled:
        phase = "Completed"
    elif scheduled >= job.min_member and scheduled:
        phase = "Running"
    elif statuses[S.RUNNING] + statuses[S.BOUND] + sum(1 for t in job.tasks if t in bound):
        phase = "Unknown"
    elif ssn.phase[job.key] in ("Inqueue", "Running", "Unknown"):
        phase = "Inqueue"
    else:
        phase = "Pending"
    ready = sum(1 for t in job.tasks if snap.tasks[t].status in snapshot.READY or t in bound)
    pending = [t for t in job.tasks if snap.tasks[t].status is S.PENDING and t not in bound]
    total = len(job.tasks)
    unready = max(job.min_member - ready, 0)
    condition, reason, default_message = _condition(ssn, job, phase, pending, ready)
    conditions: tuple[plan.Condition, ...] = ()
    if condition is not None:
        conditions = (condition,)
    elif ready >= job.min_member and (ready or not pending):
        conditions = (plan.Condition("Scheduled", "True", READY_REASON, ""),)

    def messages(task_key: str) -> tuple[str, str]:
        if reason == "Unschedulable":
            return reason, default_message
        error = ssn.fit_errors.get(task_key)
        if error and unready == 0:
            return "FailedScheduling", error
        return "FailedScheduling", f"{unready}/{total} tasks in gang unschedulable: {error or default_message}"

    verdict = plan.PodGroupVerdict(
        key=job.key,
        phase=phase,
        conditions=conditions,
        running=statuses[S.RUNNING],
        succeeded=statuses[S.SUCCEEDED],
        failed=statuses[S.FAILED],
    )
    return verdict, messages


def _condition(
    ssn: session.Session, job: snapshot.Job, phase: str, pending: list[str], ready: int
) -> tuple[plan.Condition | None, str, str]:
    """(Unschedulable condition or None, pod event reason, message for pods without their own)."""
    total = len(job.tasks)
    unready = max(job.min_member - ready, 0)

    def unschedulable(reason: str, detail: str) -> plan.Condition:
        return plan.Condition(
            "Unschedulable", "True", reason, f"{unready}/{total} tasks in gang unschedulable: {detail}"
        )

    queue = ssn.snapshot.queues.get(job.queue)
    if queue is None:
        detail = f"queue {job.queue} not found"
        return unschedulable("QueueNotFound", detail), "Unschedulable", detail
    invalid = ssn.invalid.get(job.key)
    if invalid is not None:
        return unschedulable(invalid.reason, invalid.message), "Unschedulable", invalid.message
    if phase == "Pending":
        detail = ssn.job_errors.get(job.key, "PodGroup is pending: not admitted yet")
        closed = queue.state != "Open"
        return unschedulable("QueueClosed" if closed else "NotEnoughResources", detail), "Unschedulable", detail
    if pending and ready < job.min_member:
        errors = [ssn.fit_errors[t] for t in pending if t in ssn.fit_errors]
        detail = ssn.job_errors.get(job.key) or (errors[0] if errors else "waiting for resources being released")
        detail = f"pod group is not ready, {ready} ready, {job.min_member} minAvailable; {detail}"
        return unschedulable("NotEnoughResources", detail), "FailedScheduling", detail
    return None, "FailedScheduling", ssn.job_errors.get(job.key, "waiting for resources")


def _queues(ssn: session.Session, groups: list[plan.PodGroupVerdict]) -> tuple[plan.QueueVerdict, ...]:
    snap = ssn.snapshot
    counts: dict[str, collections.Counter[str]] = {name: collections.Counter() for name in snap.queues}
    for verdict in groups:
        owner = snap.jobs[verdict.key].queue
        if owner in counts:
            counts[owner][verdict.phase] += 1
    out = []
    for name, info in sorted(snap.queues.items()):
        c = counts[name]
        state = "Closed" if info.state == "Closing" and not sum(c.values()) else info.state
        allocated = resources.from_vector(ssn.allocated_of_queue(name), ssn.dims)
        out.append(
            plan.QueueVerdict(
                name=name,
                state=state,
                pending=c["Pending"],
                inqueue=c["Inqueue"],
                running=c["Running"],
                unknown=c["Unknown"],
                completed=c["Completed"],
                allocated=resources.to_api(allocated),
            )
        )
    return tuple(out)
