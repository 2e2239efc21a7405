"""A Job's spec: Volcano's admission defaults, its validation, and a typed view. Pure.

Defaults (jobs-mutate): queue ``default``, schedulerName, maxRetry 3, task names ``default<i>``,
task minAvailable = replicas, job minAvailable = Σ task minAvailable, and the ``svc`` plugin for
``tensorflow``, ``mpi``, ``pytorch`` and ``ray`` (``ssh`` too for ``mpi``). Validation
(jobs-validate) raises :class:`bridge.errors.InvalidObjectError` naming the field and what to
change: among others, ``dependsOn`` must name other tasks and form no cycle, with ``iteration``
``any`` or ``all``, and the plugins' arguments must be ones the plugin knows
(``bridge.adapters.vcjob.flags``; Volcano logs a bad one and runs the job without it), and
every quantity of every task's template and of ``spec.volumes`` must be one apimachinery keeps
as written (``bridge.validation.pod_template``). Queue checks need cluster facts and live in
the adapter.

A task's ``maxRetry`` (Volcano v1.9+) bounds its pods' in-place container restarts: more than
that raises TaskFailed; unset or 0 means 3, -1 no limit. Unlike Volcano, a job of more than
``bridge.defaults.VCJOB_MAX_PODS`` pods (Σ replicas) is refused.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from bridge import defaults, errors, validation
from bridge.adapters.vcjob import flags

__all__ = [
    "ACTIONS",
    "APPLIED",
    "DEFAULT_MAX_RETRY",
    "EVENTS",
    "FINISHED",
    "FRAMEWORKS",
    "ITERATIONS",
    "PLUGINS",
    "UNLIMITED",
    "Task",
    "defaulted",
    "pod_count",
    "tasks",
    "validate",
]

ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)
# Events a user may name in a policy (Volcano's internal OutOfSync/CommandIssued/JobUpdated are not).
FINISHED = ("Completed", "Failed", "Terminated")  # the phases a Job ends in
EVENTS = ("*", "PodPending", "PodRunning", "PodFailed", "PodEvicted", "Unknown", "TaskCompleted", "TaskFailed")
# Carried out by our controller; ray and hcclrank are Volcano's and accepted as-is (with a warning).
APPLIED = ("svc", "ssh", "env", "tensorflow", "mpi", "pytorch")
PLUGINS = (*APPLIED, "ray", "hcclrank")
FRAMEWORKS = ("tensorflow", "mpi", "pytorch", "ray")  # Volcano's webhook adds svc for these (and ssh for mpi)
ITERATIONS = ("all", "any")  # dependsOn.iteration
DEFAULT_MAX_RETRY = 3
UNLIMITED = -1  # a task maxRetry of -1: restart in place without limit


@dataclasses.dataclass(frozen=True)
class Task:
    name: str
    replicas: int
    min_available: int
    template: Mapping[str, Any]
    policies: tuple[Mapping[str, Any], ...]
    max_retry: int = DEFAULT_MAX_RETRY  # in-place restarts of the task's pods before TaskFailed; -1: no limit
    depends_on: tuple[str, ...] = ()  # dependsOn.name: tasks that must be ready before this one's pods are made
    iteration: str = "all"  # dependsOn.iteration: "any" (one of them is enough) or "all"


def _int(value: Any, what: str, *, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.InvalidObjectError(f"{what} must be an integer, got {value!r}")
    if value < 0:
        raise errors.InvalidObjectError(f"{what} must be >= 0, got {value}")
    return value


def _spec(job: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = job.get("spec")
    if not isinstance(spec, Mapping):
        raise errors.InvalidObjectError("Job needs a spec")
    raw = spec.get("tasks")
    if not isinstance(raw, list) or not raw:
        raise errors.InvalidObjectError("spec.tasks must list at least one task")
    if not all(isinstance(t, Mapping) for t in raw):
        raise errors.InvalidObjectError("every entry of spec.tasks must be an object")
    return spec


def defaulted(job: Mapping[str, Any], *, scheduler_name: str = defaults.SCHEDULER_NAME) -> dict[str, Any]:
    """The job with Volcano's defaults filled in; values the user set are kept. Idempotent."""
    out = copy.deepcopy(dict(job))
    spec = out["spec"] = dict(_spec(out))
    spec["queue"] = spec.get("queue") or "default"
    spec["schedulerName"] = spec.get("schedulerName") or scheduler_name
    if spec.get("maxRetry") is None:
        spec["maxRetry"] = DEFAULT_MAX_RETRY
    total = 0
    for i, task in enumerate(spec["tasks"]):
        task.setdefault("name", f"default{i}")
        if not task["name"]:
            task["name"] = f"default{i}"
        replicas = _int(task.get("replicas"), f"task {task['name']!r} replicas", default=0)
        if task.get("minAvailable") is None:
            task["minAvailable"] = replicas
        total += _int(task["minAvailable"], f"task {task['name']!r} minAvailable")
    if not spec.get("minAvailable"):  # Volcano treats 0 like unset
        spec["minAvailable"] = total
    plugins = spec.get("plugins")
    if isinstance(plugins, Mapping) and plugins:
        plugins = spec["plugins"] = dict(plugins)
        if any(p in plugins for p in FRAMEWORKS):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
    return out


def _depends(raw: Mapping[str, Any], name: str) -> tuple[tuple[str, ...], str]:
    depends = raw.get("dependsOn")
    if depends is None:
        return (), "all"
    listed = (depends.get("name") or []) if isinstance(depends, Mapping) else None
    if not isinstance(listed, list) or not all(isinstance(d, str) and d for d in listed):
        raise errors.InvalidObjectError(f"task {name!r}: dependsOn.name must list task names")
    iteration = depends.get("iteration") or "all"
    if iteration not in ITERATIONS:
        raise errors.InvalidObjectError(
            f"task {name!r}: dependsOn.iteration {iteration!r} is unknown; use one of {', '.join(ITERATIONS)}"
        )
    return tuple(listed), str(iteration)


def tasks(job: Mapping[str, Any]) -> list[Task]:
    """The tasks of a defaulted job, in spec order."""
    out = []
    for i, raw in enumerate(_spec(job)["tasks"]):
        name = str(raw.get("name") or f"default{i}")
        replicas = _int(raw.get("replicas"), f"task {name!r} replicas", default=0)
        template = raw.get("template") or {}
        if not isinstance(template, Mapping) or not isinstance(template.get("spec") or {}, Mapping):
            raise errors.InvalidObjectError(f"task {name!r}: template must be a pod template object")
        _policies(raw.get("policies"), f"task {name!r}")
        max_retry = raw.get("maxRetry")
        if max_retry is not None and (not isinstance(max_retry, int) or isinstance(max_retry, bool) or max_retry < -1):
            raise errors.InvalidObjectError(
                f"task {name!r} maxRetry must be an integer >= -1 (-1: no limit), got {max_retry!r}"
            )
        depends_on, iteration = _depends(raw, name)
        out.append(
            Task(
                name=name,
                replicas=replicas,
                min_available=_int(raw.get("minAvailable"), f"task {name!r} minAvailable", default=replicas),
                template=template,
                policies=tuple(p for p in raw.get("policies") or [] if isinstance(p, Mapping)),
                max_retry=max_retry or DEFAULT_MAX_RETRY,  # Volcano: 0 counts as unset
                depends_on=depends_on,
                iteration=iteration,
            )
        )
    return out


def pod_count(job: Mapping[str, Any]) -> int:
    """Σ replicas: how many pods the job makes."""
    return sum(t.replicas for t in tasks(job))


def _policies(raw: Any, where: str) -> None:
    if raw is None:
        return
    if not isinstance(raw, list):
        raise errors.InvalidObjectError(f"{where} policies must be a list")
    seen: set[str] = set()
    for p in raw:
        if not isinstance(p, Mapping):
            raise errors.InvalidObjectError(f"{where} policies must be objects")
        events = [e for e in [p.get("event"), *(p.get("events") or [])] if e]
        code = p.get("exitCode")
        for e in events:
            if e not in EVENTS:
                raise errors.InvalidObjectError(
                    f"{where} policy event {e!r} is unknown; use one of {', '.join(EVENTS)}"
                )
        if p.get("action") not in ACTIONS:
            raise errors.InvalidObjectError(
                f"{where} policy action {p.get('action')!r} is unknown; use one of {', '.join(ACTIONS)}"
            )
        if events and code is not None:
            raise errors.InvalidObjectError(f"{where} policy sets both an event and exitCode; use one")
        if not events and code is None:
            raise errors.InvalidObjectError(f"{where} policy needs an event or an exitCode")
        if code is not None and (not isinstance(code, int) or code == 0):
            raise errors.InvalidObjectError(f"{where} policy exitCode {code!r} is not an error code (0 means success)")
        for key in [f"event:{e}" for e in events] or [f"exitCode:{code}"]:
            if key in seen:
                raise errors.InvalidObjectError(f"{where} has two policies for {key}")
            seen.add(key)


def validate(job: Mapping[str, Any]) -> list[str]:
    """Raise InvalidObjectError for a job Volcano would refuse; return warnings for what we ignore."""
    spec = _spec(job)
    warnings: list[str] = []
    names: set[str] = set()
    total = 0
    for t in tasks(job):
        if t.name in names:
            raise errors.InvalidObjectError(f"task name {t.name!r} is used twice; task names must be unique")
        names.add(t.name)
        if t.min_available > t.replicas:
            raise errors.InvalidObjectError(
                f"task {t.name!r}: minAvailable {t.min_available} is greater than replicas {t.replicas}"
            )
        if not ((t.template.get("spec") or {}).get("containers")):
            raise errors.InvalidObjectError(f"task {t.name!r}: template.spec.containers must list a container")
        total += t.replicas
    for i, raw in enumerate(spec["tasks"]):
        _policies(raw.get("policies"), f"task {raw.get('name') or i!r}")
        validation.pod_template(raw.get("template"), f"spec.tasks[{i}].template")
    validation.volumes(spec.get("volumes"), "spec.volumes")
    _acyclic(tasks(job))
    _policies(spec.get("policies"), "job")
    if total > defaults.VCJOB_MAX_PODS:
        raise errors.InvalidObjectError(
            f"the tasks ask for {total} pods in all; volcano-bridge admits at most {defaults.VCJOB_MAX_PODS} "
            "pods per Job (bridge.defaults.VCJOB_MAX_PODS): split the work over several Jobs"
        )
    min_available = _int(spec.get("minAvailable"), "spec.minAvailable", default=0)
    if min_available > total:
        raise errors.InvalidObjectError(
            f"spec.minAvailable {min_available} is greater than the total replicas of all tasks ({total})"
        )
    min_success = spec.get("minSuccess")
    if min_success is not None and _int(min_success, "spec.minSuccess") > total:
        raise errors.InvalidObjectError(f"spec.minSuccess {min_success} is greater than the total replicas ({total})")
    _int(spec.get("maxRetry"), "spec.maxRetry", default=0)
    plugins = spec.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise errors.InvalidObjectError("spec.plugins must map plugin names to argument lists")
    for name in plugins:
        if name not in PLUGINS:
            raise errors.InvalidObjectError(f"unknown job plugin {name!r}; known plugins: {', '.join(PLUGINS)}")
    for name in plugins:
        if name in flags.KNOWN:
            flags.parse(name, plugins[name])
    ignored = sorted(set(plugins) - set(APPLIED))
    if ignored:
        warnings.append(f"plugins {', '.join(ignored)} are accepted but not applied by volcano-bridge")
    mounts = [v.get("mountPath") for v in spec.get("volumes") or [] if isinstance(v, Mapping)]
    if any(not m for m in mounts) or len(set(mounts)) != len(mounts):
        raise errors.InvalidObjectError("spec.volumes need a mountPath each, and no two may share one")
    return sorted(set(warnings))


def _acyclic(all_tasks: list[Task]) -> None:
    """Every dependsOn names another known task, and together they form no cycle (Volcano: a DAG)."""
    known = {t.name: t for t in all_tasks}
    for t in all_tasks:
        for dep in t.depends_on:
            if dep == t.name:
                raise errors.InvalidObjectError(f"task {t.name!r} depends on itself")
            if dep not in known:
                raise errors.InvalidObjectError(f"task {t.name!r} depends on unknown task {dep!r}")
    finished: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            loop = " → ".join((*path[path.index(name) :], name))
            raise errors.InvalidObjectError(f"task dependsOn forms a cycle ({loop}); the tasks must form a DAG")
        if name not in finished:
            for dep in known[name].depends_on:
                visit(dep, (*path, name))
            finished.add(name)

    for t in all_tasks:
        visit(t.name, ())
