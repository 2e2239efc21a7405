"""Close a session: turn its state into PodGroup, Queue and pod verdicts (Volcano's CloseSession).

Phase (as ``getPodGroupPhase``, but a group with running members never falls back to
Pending, so it keeps its place instead of queueing behind newer groups; but a group the native
backend's reclaim evicted whole, ``Committed.requeued``, is Pending again): Completed when at
least minMember tasks were scheduled and all of them finished, or when a group that ran has
only finished pods left (the others deleted after the end, see :func:`_ran`); Running when at
least minMember are scheduled (Bound/Running/Succeeded/Failed or bound this cycle); Unknown when
some run but fewer than minMember; Inqueue once admitted; else Pending.

Conditions: ``Unschedulable`` (reasons NotEnoughResources, NotEnoughTasks, NotEnoughPodsOfTask;
NotEnoughTasks also for an admitted group with fewer pods than minMember, "K of M pods exist:
<who creates them>" from ``api.owners``; QueueNotFound and QueueClosed for groups Volcano would
ignore silently; InvalidPodGroup, QueueInvalid and QueueNotAllowed for groups the snapshot holds
(``snapshot.Job.held``); NeverFits for a gang that can never run on this cluster's nodes, see
``framework.feasibility``: it stays Pending) with "N/M tasks in gang unschedulable: ..." (or
"K of N pods exist: ..." when fewer pods exist than are missing, see :func:`gang`);
``Scheduled`` when the gang is ready.

A parked job (``Session.parked``) that nothing was bound for this cycle gets no verdict,
nor do its pods: what was written for it last stands. Its phase still counts in its queue's.
"""

from __future__ import annotations

import collections

import numpy as np

from bridge import bus
from scheduler.api import owners as creators
from scheduler.api import plan, resources, snapshot, tally
from scheduler.framework import session

__all__ = ["NEVER_FITS", "READY_REASON", "S", "close", "gang"]

S = snapshot.TaskStatus
READY_REASON = "tasks in gang are ready to be scheduled"
NEVER_FITS = "NeverFits"  # the condition reason of a gang that can never run here
# Snapshot status codes (``tally.STATUSES``), to read a job's per-status counts.
_PENDING, _RUNNING, _BOUND, _ALLOCATED, _SUCCEEDED, _FAILED = (
    tally.STATUSES.index(s) for s in (S.PENDING, S.RUNNING, S.BOUND, S.ALLOCATED, S.SUCCEEDED, S.FAILED)
)

# A ready gang's condition: the same value every time, so one shared (immutable) instance.
_READY_CONDITIONS = (plan.Condition("Scheduled", "True", READY_REASON, ""),)


def close(ssn: session.Session) -> plan.Plan:
    snap = ssn.snapshot
    cols = snap.columns
    ops = tuple(ssn.committed.operations)
    bound, pipelined = ssn.committed.binds, ssn.committed.pipelines
    pods = [
        plan.PodVerdict(pod, "Normal", "Scheduled", f"Successfully assigned {pod} to {node}")
        for pod, node in bound.items()
    ]
    pods += [plan.PodVerdict(s.key, "Warning", "Unschedulable", s.message) for s in snap.stranded]
    # Snapshot statuses counted per job in bulk; bound and pipelined tasks were all Pending in it.
    width = len(tally.STATUSES)
    by_status = np.bincount(cols.job * width + cols.status, minlength=len(cols.jobs) * width)
    counts = by_status.reshape(len(cols.jobs), width).tolist()
    tasks = snap.tasks
    groups = []
    phases: list[tuple[str, str]] = []  # (job, phase) of every job, parked ones included: queue counts
    for job, statuses in zip(snap.jobs.values(), counts, strict=True):
        here = ssn.committed.binds_per_job[job.key]
        if not here and ssn.parked(job.key):  # its last verdict stands: counted, nothing written
            phases.append((job.key, _phase(ssn, job, statuses, here)))
            continue
        verdict, reason, detail = _podgroup(ssn, job, statuses, here, bound)
        groups.append(verdict)
        phases.append((job.key, verdict.phase))
        if statuses[_PENDING] <= here + ssn.committed.pipelines_per_job[job.key]:
            continue  # every Pending task was bound or pipelined: no pod verdicts to give
        unready = max(job.min_member - _ready(statuses, here), 0)
        cause = next((c.reason for c in verdict.conditions if c.type == "Unschedulable"), "")
        for task_key in job.tasks:
            if task_key in bound or task_key in pipelined or tasks[task_key].status is not S.PENDING:
                continue
            event, message = _message(ssn, task_key, reason, detail, unready, job)
            pods.append(plan.PodVerdict(task_key, "Warning", event, message, cause))
    return plan.Plan(
        operations=ops,
        podgroups=tuple(groups),
        queues=_queues(ssn, phases),
        pods=tuple(pods),
        stuck=_stuck(ssn, groups),
    )


def _stuck(ssn: session.Session, groups: list[plan.PodGroupVerdict]) -> frozenset[str]:
    """The groups with an Unschedulable verdict that hold nothing from this cycle (``Plan.stuck``)."""
    committed, status, tasks = ssn.committed, ssn.status, ssn.snapshot.tasks
    out = []
    for verdict in groups:
        key = verdict.key
        if not any(c.type == "Unschedulable" for c in verdict.conditions):
            continue
        if committed.binds_per_job[key] or committed.pipelines_per_job[key] or key in committed.requeued:
            continue
        if key in ssn.diagnostics.evictions:
            continue
        # A statement neither committed nor discarded (a pipelined gang) keeps its room this cycle.
        if key in ssn.touched and any(status[t] is not tasks[t].status for t in ssn.snapshot.jobs[key].tasks):
            continue
        out.append(key)
    return frozenset(out)


def _ready(statuses: list[int], bound_here: int) -> int:
    return statuses[_BOUND] + statuses[_RUNNING] + statuses[_ALLOCATED] + statuses[_SUCCEEDED] + bound_here


def _podgroup(
    ssn: session.Session, job: snapshot.Job, statuses: list[int], bound_here: int, bound: dict[str, str]
) -> tuple[plan.PodGroupVerdict, str, str]:
    """(verdict, pod event reason, message for pods without their own fit error).

    ``statuses``: the job's task count per snapshot status code; ``bound_here``: bound this cycle.
    """
    running, succeeded, failed = statuses[_RUNNING], statuses[_SUCCEEDED], statuses[_FAILED]
    phase = _phase(ssn, job, statuses, bound_here)
    ready = _ready(statuses, bound_here)
    waiting = statuses[_PENDING] - bound_here  # Pending tasks not bound (pipelined ones included)
    condition, reason, detail = _condition(ssn, job, phase, waiting, bound, ready)
    conditions: tuple[plan.Condition, ...] = ()
    if condition is not None:
        conditions = (condition,)
    elif (ready >= job.min_member and (ready or not waiting)) or phase == "Completed":
        conditions = _READY_CONDITIONS
    verdict = plan.PodGroupVerdict(job.key, phase, conditions, running, succeeded, failed)
    return verdict, reason, detail


def _phase(ssn: session.Session, job: snapshot.Job, statuses: list[int], bound_here: int) -> str:
    running, succeeded, failed = statuses[_RUNNING], statuses[_SUCCEEDED], statuses[_FAILED]
    scheduled = statuses[_BOUND] + running + succeeded + failed + bound_here
    if job.key in ssn.committed.requeued:
        return "Pending"  # evicted whole by the native backend's reclaim: admitted again, or not
    if scheduled == succeeded + failed and ((job.min_member <= scheduled and scheduled) or _ran(job, statuses)):
        return "Completed"
    if scheduled >= job.min_member and scheduled:
        return "Running"
    if running + statuses[_BOUND] + bound_here:
        return "Unknown"
    if ssn.phase[job.key] in ("Inqueue", "Running", "Unknown"):
        return "Inqueue"
    return "Pending"


def _ran(job: snapshot.Job, statuses: list[int]) -> bool:
    """Whether a group ran to its end though fewer than minMember of its pods are left: it was
    Running (or Completed) and what is left has finished, nothing is pending. Pods are deleted
    after a job finishes (an operator's cleanPodPolicy, a Volcano Job's CompleteJob, a TTL);
    such a group stays Completed instead of going back to Pending and saying it is Unschedulable."""
    if statuses[_PENDING]:
        return False
    if job.phase == "Completed":
        return True
    return job.phase in ("Running", "Unknown") and bool(statuses[_SUCCEEDED] + statuses[_FAILED])


def _message(
    ssn: session.Session, task: str, reason: str, detail: str, unready: int, job: snapshot.Job
) -> tuple[str, str]:
    """(event reason, message) for a pending pod of a group that gave ``reason`` and ``detail``."""
    if reason == "Unschedulable":
        return reason, detail
    error = ssn.diagnostics.fit_errors.get(task)
    if error and unready == 0:
        return "FailedScheduling", error
    return "FailedScheduling", f"{gang(unready, len(job.tasks), job.min_member)}: {error or detail}"


def gang(unready: int, total: int, min_member: int) -> str:
    """The head of a waiting gang's message, the one place it is written: Volcano's "N/M tasks in
    gang unschedulable" (N of minMember not ready, M pods), or, when fewer than minMember pods
    exist, how many do ("0 of 5 pods exist"), never "5/0"."""
    if total < min_member:
        return f"{total} of {min_member} pods exist"
    return f"{unready}/{total} tasks in gang unschedulable"


def _unschedulable(reason: str, detail: str, unready: int, job: snapshot.Job) -> plan.Condition:
    message = f"{gang(unready, len(job.tasks), job.min_member)}: {detail}"
    return plan.Condition("Unschedulable", "True", reason, message)


def _condition(
    ssn: session.Session, job: snapshot.Job, phase: str, waiting: int, bound: dict[str, str], ready: int
) -> tuple[plan.Condition | None, str, str]:
    """(Unschedulable condition or None, pod event reason, message for pods without their own)."""
    unready = max(job.min_member - ready, 0)
    queue = ssn.snapshot.queues.get(job.queue)
    if queue is None:
        detail = f"queue {job.queue} not found"
        return _unschedulable("QueueNotFound", detail, unready, job), "Unschedulable", detail
    if job.held is not None:
        reason, detail = job.held
        return _unschedulable(reason, detail, unready, job), "Unschedulable", detail
    missing = len(job.tasks) < job.min_member and job.key not in ssn.never  # a never-fitting gang says so below
    if missing and phase in ("Inqueue", "Running", "Unknown"):
        detail = creators.creator(job.owner)  # admitted, and waits for its pods to be created
        return _unschedulable("NotEnoughTasks", detail, unready, job), "FailedScheduling", detail
    invalid = ssn.diagnostics.invalid.get(job.key)
    if invalid is not None:
        return _unschedulable(invalid.reason, invalid.message, unready, job), "Unschedulable", invalid.message
    never = ssn.never.get(job.key)
    if never is not None and phase in ("Pending", "Inqueue", "Unknown"):
        return _unschedulable(NEVER_FITS, never, unready, job), "Unschedulable", never
    if phase == "Pending":
        detail = ssn.diagnostics.job_errors.get(job.key, "PodGroup is pending: not admitted yet")
        reason = "QueueClosed" if queue.state != "Open" else "NotEnoughResources"
        return _unschedulable(reason, detail, unready, job), "Unschedulable", detail
    if waiting and ready < job.min_member:
        tasks = ssn.snapshot.tasks
        pending = [t for t in job.tasks if tasks[t].status is S.PENDING and t not in bound]
        errors = [ssn.diagnostics.fit_errors[t] for t in pending if t in ssn.diagnostics.fit_errors]
        detail = ssn.diagnostics.job_errors.get(job.key) or (
            errors[0] if errors else "waiting for resources being released"
        )
        detail = f"pod group is not ready, {ready} ready, {job.min_member} minAvailable; {detail}"
        return _unschedulable("NotEnoughResources", detail, unready, job), "FailedScheduling", detail
    return None, "FailedScheduling", ssn.diagnostics.job_errors.get(job.key, "waiting for resources")


def _queues(ssn: session.Session, phases: list[tuple[str, str]]) -> tuple[plan.QueueVerdict, ...]:
    snap = ssn.snapshot
    counts: dict[str, collections.Counter[str]] = {name: collections.Counter() for name in snap.queues}
    for key, phase in phases:
        owner = snap.jobs[key].queue
        if owner in counts:
            counts[owner][phase] += 1
    out = []
    for name, info in sorted(snap.queues.items()):
        c = counts[name]
        state = bus.queue_state(info.state, bus.SYNC_QUEUE, sum(c.values()))  # Closing until drained
        allocated = resources.from_vector(ssn.allocated.of_queue(name), ssn.dims)
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
