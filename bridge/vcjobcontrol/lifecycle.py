"""The Job state machine: pod changes → events → policy actions → phase, pods to kill and create. Pure.

Volcano's rules (``pkg/controllers/job``: the cache, the pod and PodGroup handlers, ``state``):

- a pod change becomes at most one :class:`Request` (:func:`detect`): ``PodEvicted`` when a pod
  is deleted, ``PodFailed`` (with its exit code) when one fails, ``TaskCompleted`` when a task's
  succeeded pods reach its replicas, ``TaskFailed`` when the in-place container restarts of a
  task's pending and running pods exceed the task's ``maxRetry``; a PodGroup turning Unknown
  raises ``Unknown`` (Volcano's JobUnknown, :func:`detect_group`);
- :func:`action_for` maps it through the task's policies, then the job's (first match of the
  event, ``*``, or the exit code); a request from a pod of an older job version, or none, syncs;
- :func:`step` runs the action in the current phase. A new job enters Pending. Restart* kill the
  targets and enter Restarting with retryCount and version raised (Failed once retryCount
  reaches maxRetry; the last retry keeps finished pods, as Volcano's killJob does);
  CompleteJob/AbortJob/TerminateJob kill the unfinished pods and end in Completed/Aborted/
  Terminated once none is left; ResumeJob restarts an Aborted job. Sync makes the missing pods
  of the tasks ``starting.startable`` allows (a task with ``dependsOn`` waits until the tasks it
  names run), moves Pending → Running at minAvailable started pods and Running →
  Completed/Failed when every pod has finished.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.adapters.vcjob import names, pods, spec
from bridge.vcjobcontrol import creation, starting

__all__ = [
    "RESTARTS",
    "Counts",
    "Plan",
    "Pod",
    "Request",
    "action_for",
    "count",
    "detect",
    "detect_group",
    "restarts",
    "step",
    "task_failed",
]

RESTARTS = ("RestartJob", "RestartTask", "RestartPod", "RestartPartition")
_KILLING = {"CompleteJob": "Completing", "AbortJob": "Aborting", "TerminateJob": "Terminating"}
_KILLED = {"Completing": "Completed", "Aborting": "Aborted", "Terminating": "Terminated"}
Pod = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Request:
    event: str = "OutOfSync"  # Volcano's name for "just reconcile"
    task: str = ""
    pod: str = ""
    exit_code: int | None = None
    version: int | None = None  # the job version the pod was made for
    action: str = ""  # a user's command names its action directly


@dataclasses.dataclass(frozen=True)
class Counts:
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    by_task: Mapping[str, Mapping[str, int]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Plan:
    action: str
    phase: str
    status: dict[str, Any]
    delete: tuple[str, ...] = ()
    create: tuple[tuple[str, int], ...] = ()
    message: str = ""

    @property
    def changed_phase(self) -> bool:
        return bool(self.message)


def _phase(pod: Pod) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _terminating(pod: Pod) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _name(pod: Pod) -> str:
    return str((pod.get("metadata") or {}).get("name", ""))


def count(observed: Sequence[Pod], *, deleting: Sequence[str] = ()) -> Counts:
    """Pods by phase; those being deleted count as terminating, as Volcano reports them."""
    totals = {"Pending": 0, "Running": 0, "Succeeded": 0, "Failed": 0, "Unknown": 0, "Terminating": 0}
    by_task: dict[str, dict[str, int]] = {}
    for pod in observed:
        phase = "Terminating" if _terminating(pod) or _name(pod) in deleting else _phase(pod)
        phase = phase if phase in totals else "Unknown"
        totals[phase] += 1
        task = by_task.setdefault(names.pod_task(pod), {})
        task[phase] = task.get(phase, 0) + 1
    return Counts(
        pending=totals["Pending"],
        running=totals["Running"],
        succeeded=totals["Succeeded"],
        failed=totals["Failed"],
        terminating=totals["Terminating"],
        unknown=totals["Unknown"],
        by_task=by_task,
    )


def _exit_code(pod: Pod) -> int | None:
    for c in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (c.get("state") or {}).get("terminated")
        if terminated is not None:
            return int(terminated.get("exitCode", 0))
    return None


def restarts(pod: Pod) -> int:
    """In-place restarts of the pod's containers, init containers included."""
    status = pod.get("status") or {}
    return sum(
        int(c.get("restartCount") or 0)
        for c in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
    )


def task_failed(task: spec.Task, task_pods: Sequence[Pod]) -> bool:
    """Volcano's ``TaskFailed``: the in-place restarts of the task's pending and running pods exceed
    the task's maxRetry (-1: never)."""
    if task.replicas == 0 or task.max_retry == spec.UNLIMITED:
        return False
    return sum(restarts(p) for p in task_pods if _phase(p) in ("Pending", "Running")) > task.max_retry


def detect(
    job: Mapping[str, Any],
    before: str | None,
    pod: Pod,
    observed: Sequence[Pod],
    *,
    deleted: bool,
    succeeded: int | None = None,
) -> Request:
    """The request a pod change raises; ``before`` is the phase last seen (None: new to us).

    ``observed`` holds the job's pods as they are now (this one included or not); only the
    task's are read, and only when the pod restarted in place (TaskFailed) or succeeded without
    ``succeeded``, the count of the task's succeeded pods, kept by the caller. A pod first
    seen already finished raises its event too: after a restart of the controller nothing is
    lost, and one handled before was of an older version, which only syncs.
    """
    task, version = names.pod_task(pod), names.pod_version(pod)
    base = Request(task=task, pod=_name(pod), version=version)
    if deleted:
        return dataclasses.replace(base, event="PodEvicted")
    the_task = next((t for t in spec.tasks(job) if t.name == task), None)
    if the_task is None:
        return Request()
    phase = _phase(pod)
    mine = {_name(p): p for p in observed if names.pod_task(p) == task and not _terminating(p)}
    mine[_name(pod)] = pod
    if phase == "Failed":
        return dataclasses.replace(base, event="PodFailed", exit_code=_exit_code(pod)) if before != phase else Request()
    if phase == "Succeeded":
        if before == phase or the_task.replicas <= 0:
            return Request()
        done = succeeded if succeeded is not None else sum(1 for p in mine.values() if _phase(p) == "Succeeded")
        return dataclasses.replace(base, event="TaskCompleted") if done >= the_task.replicas else Request()
    if phase in ("Pending", "Running") and restarts(pod) and task_failed(the_task, list(mine.values())):
        return dataclasses.replace(base, event="TaskFailed")
    return Request()


def detect_group(before: str | None, group: Mapping[str, Any]) -> Request:
    """A PodGroup turning Unknown (some members run, the rest cannot be placed) raises ``Unknown``."""
    phase = (group.get("status") or {}).get("phase")
    return Request(event="Unknown") if phase == "Unknown" and before != "Unknown" else Request()


def _match(policies: Sequence[Mapping[str, Any]], request: Request) -> str | None:
    for policy in policies:
        events = [e for e in [policy.get("event"), *(policy.get("events") or [])] if e]
        if events and (request.event in events or "*" in events):
            return str(policy.get("action"))
        code = policy.get("exitCode")
        if code is not None and request.exit_code is not None and code == request.exit_code:
            return str(policy.get("action"))
    return None


def action_for(job: Mapping[str, Any], request: Request) -> str:
    """The action for ``request``: a command as given, else the task's policies, then the job's."""
    if request.action:
        return request.action
    current = int((job.get("status") or {}).get("version") or 0)
    if request.event == "OutOfSync" or (request.version is not None and request.version < current):
        return "SyncJob"  # news from pods of a previous run must not restart this one
    task = next((t for t in spec.tasks(job) if t.name == request.task), None)
    found = _match(task.policies, request) if task else None
    return found or _match(job["spec"].get("policies") or [], request) or "SyncJob"


def _kill(observed: Sequence[Pod], *, keep_finished: bool) -> tuple[str, ...]:
    return tuple(
        _name(p)
        for p in observed
        if not _terminating(p) and not (keep_finished and _phase(p) in ("Succeeded", "Failed"))
    )


def _targets(observed: Sequence[Pod], action: str, request: Request) -> list[Pod]:
    if action == "RestartTask":
        return [p for p in observed if names.pod_task(p) == request.task]
    if action == "RestartPod":
        return [p for p in observed if _name(p) == request.pod]
    return list(observed)  # RestartJob; RestartPartition restarts everything too (partitions: not supported)


def _synced(job: Mapping[str, Any], phase: str, c: Counts) -> str:
    job_spec = job["spec"]
    tasks = spec.tasks(job)
    total = sum(t.replicas for t in tasks)
    min_available = int(job_spec.get("minAvailable") or 0)
    min_success = job_spec.get("minSuccess")
    if phase == "Pending":
        return "Running" if c.running + c.succeeded + c.failed >= min_available and total else "Pending"
    if total == 0:
        return phase
    if min_success is not None and c.succeeded >= min_success:
        return "Completed"
    if c.succeeded + c.failed == total:
        if min_available >= sum(t.min_available for t in tasks):
            for t in tasks:
                if c.by_task.get(t.name, {}).get("Succeeded", 0) < t.min_available:
                    return "Failed"
        if min_success is not None and c.succeeded < min_success:
            return "Failed"
        return "Completed" if c.succeeded >= min_available else "Failed"
    if c.pending > total - min_available:
        return "Pending"  # the gang lost members: it waits to be whole again
    return phase


def step(job: Mapping[str, Any], observed: Sequence[Pod], request: Request, *, now: str) -> Plan:
    """Carry out the request's action on a defaulted job with its observed pods."""
    status = dict(job.get("status") or {})
    state = dict(status.get("state") or {})
    initial = not state.get("phase")  # a new job: Volcano's initJobStatus makes it Pending
    phase = state.get("phase") or "Pending"
    version, retry = int(status.get("version") or 0), int(status.get("retryCount") or 0)
    max_retry = int(job["spec"].get("maxRetry", spec.DEFAULT_MAX_RETRY))
    action = action_for(job, request)
    new_phase = phase
    delete: tuple[str, ...] = ()
    create: tuple[tuple[str, int], ...] = ()
    c = count(observed)
    if phase in ("Pending", "Running"):
        if action in RESTARTS:
            # The last retry keeps finished pods (Volcano's killJob): a Failed job shows why.
            last = retry >= max_retry - 1
            new_phase, retry, version = "Restarting", retry + 1, version + 1
            delete = _kill(_targets(observed, action, request), keep_finished=last)
        elif action in _KILLING:
            new_phase, version = _KILLING[action], version + 1
            delete = _kill(observed, keep_finished=True)
        else:  # SyncJob, ResumeJob: make what is missing, move by the counts
            present = {_name(p) for p in observed}
            job_name = job["metadata"]["name"]
            allowed = starting.startable(job, observed)  # a dependent task waits for its tasks to run
            create = tuple(
                (t, i) for t, i in pods.desired_names(job) if t in allowed and names.pod(job_name, t, i) not in present
            )
            new_phase = _synced(job, phase, c)
    elif phase == "Restarting":
        total = sum(t.replicas for t in spec.tasks(job))
        if retry >= max_retry:
            new_phase = "Failed"
            delete = _kill(observed, keep_finished=True)
        elif total - c.terminating >= int(job["spec"].get("minAvailable") or 0):
            new_phase = "Pending"
    elif phase in _KILLED or phase == "Aborted":
        if action == "ResumeJob":
            new_phase, retry, version = "Restarting", retry + 1, version + 1
            delete = _kill(observed, keep_finished=False)
        else:
            delete = _kill(observed, keep_finished=True)
            if phase in _KILLED and c.pending + c.running + c.terminating + c.unknown == 0:
                new_phase = _KILLED[phase]
    else:  # Completed, Failed, Terminated: final, only stragglers are stopped
        delete = _kill(observed, keep_finished=True)
    after = count(observed, deleting=delete)
    message = ""
    if initial and new_phase == phase:
        state = {"phase": phase, "lastTransitionTime": now}
        status["conditions"] = [*(status.get("conditions") or []), {"status": phase, "lastTransitionTime": now}]
    elif state.get("reason") == creation.REASON and new_phase == phase and not create:
        state = {k: v for k, v in state.items() if k not in ("reason", "message")}  # every pod exists now
    if new_phase != phase:
        why = f"{request.event} of pod {request.pod}" if request.pod and request.event != "OutOfSync" else action
        message = f"{phase} → {new_phase} ({why}); retryCount {retry}, version {version}"
        # Completing → Completed and the like keep the reason of the kill that led there.
        reason = state.get("reason") if phase in _KILLED and new_phase == _KILLED[phase] else action
        state = {"phase": new_phase, "reason": reason or action, "message": message, "lastTransitionTime": now}
        status["conditions"] = [*(status.get("conditions") or []), {"status": new_phase, "lastTransitionTime": now}]
    status.update(
        state=state,
        minAvailable=int(job["spec"].get("minAvailable") or 0),
        pending=after.pending,
        running=after.running,
        succeeded=after.succeeded,
        failed=after.failed,
        terminating=after.terminating,
        unknown=after.unknown,
        version=version,
        retryCount=retry,
        taskStatusCount={t: {"phase": dict(sorted(p.items()))} for t, p in sorted(after.by_task.items()) if t},
    )
    return Plan(action=action, phase=new_phase, status=status, delete=delete, create=create, message=message)
