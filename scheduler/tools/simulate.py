"""Replay a workload trace through the real core on a simulated clock. Pure: no I/O, no wall clock.

A trace (YAML, see ``examples/traces/``; its schema and validation are :mod:`scheduler.tools.traces`)
lists nodes, queues with weights, and jobs: arrival time, queue, gang shape (tasks with replicas
and requests, ``minMember``, optionally ``minResources`` and a priority class) and duration. ``run(trace)`` then loops:

1. at time ``t`` jobs that have arrived get their PodGroup (Pending) and pods;
   pods whose run has ended (bound at ``s``, ``s + duration ≤ t``) succeed;
2. the API objects are built as the apiserver would return them and ``cycle.schedule`` runs;
3. the plan is carried out at once: ``Allocate`` binds (the pod runs from ``t``), ``Evict``
   restarts the pod (Pending again, its run starts over once rebound), ``Pipeline`` is left to
   a later cycle as in the real scheduler; PodGroup phases are taken from the verdicts.

Cycles run every ``period`` seconds; when a cycle changed nothing the clock jumps to the next
arrival or completion (on the period grid), so quiet stretches cost nothing. A job's wait is
from its arrival to the cycle that bound its ``minMember``-th pod; it finishes when all its
pods have. The run stops when every job finished, when nothing can change any more (jobs that
can never fit are reported as unfinished), or at ``until``.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Callable, Mapping
from typing import Any

from bridge import keys
from scheduler import configure, cycle
from scheduler.api import building, plan, resources
from scheduler.tools import traces

__all__ = [
    "EPOCH",
    "NAMESPACE",
    "Job",
    "Progress",
    "Result",
    "Sample",
    "Task",
    "Trace",
    "Waits",
    "parse",
    "percentile",
    "run",
]

EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
NAMESPACE = "sim"


@dataclasses.dataclass(frozen=True, slots=True)
class Task:
    name: str
    replicas: int
    requests: Mapping[str, str]  # a ResourceList: {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}


@dataclasses.dataclass(frozen=True, slots=True)
class Job:
    name: str
    arrival: float
    duration: float
    queue: str
    tasks: tuple[Task, ...]
    min_member: int
    min_resources: Mapping[str, str] | None = None
    priority_class: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Trace:
    nodes: tuple[Mapping[str, Any], ...]  # node API dicts
    queues: tuple[tuple[str, int], ...]  # (name, weight)
    jobs: tuple[Job, ...]
    priority_classes: tuple[tuple[str, int], ...] = ()
    conf: str = ""  # volcano-scheduler.conf; "" = Volcano's defaults
    period: float = 1.0
    until: float = math.inf


@dataclasses.dataclass(frozen=True, slots=True)
class Sample:
    time: float
    used: Mapping[str, float]  # fraction of allocatable in use, per resource the nodes offer
    # per queue, its dominant share: the largest fraction of any resource the nodes offer that it holds
    queues: Mapping[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Waits:
    queue: str
    jobs: int
    mean: float
    p50: float
    p95: float


@dataclasses.dataclass(frozen=True, slots=True)
class Result:
    makespan: float | None  # time the last job finished; None if some never did
    end: float  # clock when the run stopped
    cycles: int
    finished: int
    unfinished: tuple[str, ...]
    waits: tuple[Waits, ...]  # per queue, by name; only jobs that started
    job_waits: tuple[tuple[str, str, float], ...]  # (job, queue, wait)
    utilization: tuple[Sample, ...]  # after every cycle
    mean_utilization: Mapping[str, float]  # time-weighted over [0, end)
    evictions: int


Progress = Callable[[float, int, int], None]  # (clock, finished jobs, all jobs)


def parse(doc: Mapping[str, Any]) -> Trace:
    """A Trace from the YAML document; raises ``traces.TraceError`` (a SchedulerConfigError naming
    the field) on anything the schema in :mod:`scheduler.tools.traces` does not allow."""
    traces.check(doc)
    return Trace(
        nodes=tuple(_node(n) for spec in doc["nodes"] for n in _expand(spec)),
        queues=tuple((str(q["name"]), int(q.get("weight", 1))) for q in doc.get("queues") or []) or (("default", 1),),
        jobs=tuple(_job(i, j) for i, j in enumerate(doc["jobs"])),
        priority_classes=tuple((str(k), int(v)) for k, v in (doc.get("priorityClasses") or {}).items()),
        conf=str(doc.get("conf") or ""),
        period=float(doc.get("period", 1.0)),
        until=float(doc.get("until", math.inf)),
    )


def _expand(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    count = int(spec.get("count", 1))
    name = str(spec["name"])
    return [{**spec, "name": name if count == 1 else f"{name}-{i}"} for i in range(count)]


def _node(spec: Mapping[str, Any]) -> dict[str, Any]:
    allocatable = {"cpu": str(spec.get("cpu", 8)), "memory": str(spec.get("memory", "32Gi"))}
    allocatable["pods"] = str(spec.get("pods", 110))
    if spec.get("gpu"):
        allocatable["nvidia.com/gpu"] = str(spec["gpu"])
    return {
        "metadata": {
            "name": spec["name"],
            "labels": {"kubernetes.io/hostname": spec["name"], **spec.get("labels", {})},
        },
        "spec": {},
        "status": {"allocatable": allocatable, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _job(index: int, spec: Mapping[str, Any]) -> Job:
    tasks = tuple(
        Task(str(t.get("name", f"t{k}")), int(t.get("replicas", 1)), {str(r): str(v) for r, v in t["requests"].items()})
        for k, t in enumerate(spec["tasks"])
    )
    size = sum(t.replicas for t in tasks)
    return Job(
        name=str(spec.get("name", f"job-{index}")),
        arrival=float(spec.get("arrival", 0)),
        duration=float(spec["duration"]),
        queue=str(spec.get("queue", "default")),
        tasks=tasks,
        min_member=int(spec.get("minMember", size)),
        min_resources=spec.get("minResources"),
        priority_class=spec.get("priorityClass"),
    )


@dataclasses.dataclass(slots=True)
class _Pod:
    """Simulation state of one pod (mutable, private to ``run``)."""

    name: str
    job: int
    task: str
    requests: Mapping[str, str]
    node: str | None = None
    started: float = 0.0
    done: bool = False
    restarts: int = 0


def _stamp(t: float) -> str:
    # Fixed width with microseconds: creation order must sort as text (the core compares strings).
    return (EPOCH + datetime.timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run(trace: Trace, *, progress: Progress | None = None) -> Result:
    conf = configure.parse(trace.conf)
    by_name = {job.name: i for i, job in enumerate(trace.jobs)}
    jobs = sorted(range(len(trace.jobs)), key=lambda i: (trace.jobs[i].arrival, i))
    pods: dict[str, _Pod] = {}
    phase: dict[int, str] = {}
    started: dict[int, float] = {}
    finished: dict[int, float] = {}
    samples: list[Sample] = []
    arrived = cycles = evictions = 0
    t = 0.0
    while True:
        while arrived < len(jobs) and trace.jobs[jobs[arrived]].arrival <= t:
            index = jobs[arrived]
            phase[index] = "Pending"
            for task in trace.jobs[index].tasks:
                for r in range(task.replicas):
                    name = f"{trace.jobs[index].name}-{task.name}-{r}"
                    pods[name] = _Pod(name, index, task.name, task.requests)
            arrived += 1
        for pod in pods.values():
            if pod.node is not None and not pod.done and pod.started + trace.jobs[pod.job].duration <= t:
                pod.done = True
        for index in list(phase):
            members = [p for p in pods.values() if p.job == index]
            if all(p.done for p in members):
                finished[index] = max(p.started for p in members) + trace.jobs[index].duration
                del phase[index]
                for p in members:
                    del pods[p.name]
        if progress is not None:
            progress(t, len(finished), len(jobs))
        if len(finished) == len(jobs) or t > trace.until:
            break
        result = cycle.schedule(_snapshot(trace, pods, phase), conf, EPOCH + datetime.timedelta(seconds=t))
        cycles += 1
        evictions += _apply(result, pods, phase, by_name)
        for op in result.operations:
            if isinstance(op, plan.Allocate):
                pods[op.pod.split("/", 1)[1]].started = t
        for index in phase:
            bound = sum(1 for p in pods.values() if p.job == index and p.node is not None)
            if index not in started and bound >= trace.jobs[index].min_member:
                started[index] = t
        samples.append(Sample(t, _used(trace, pods), _shares(trace, pods)))
        nxt = _next_event(trace, jobs, arrived, pods, t)
        if result.operations:
            t += trace.period  # something moved: the next cycle may place more
        elif nxt is None:
            break  # nothing arrives, nothing ends: whatever waits now waits forever
        else:
            t = max(t + trace.period, math.ceil(nxt / trace.period - 1e-9) * trace.period)
    return _result(trace, t, cycles, evictions, started, finished, samples)


def _snapshot(trace: Trace, pods: Mapping[str, _Pod], phase: Mapping[int, str]) -> Any:
    groups = []
    for index, ph in phase.items():
        job = trace.jobs[index]
        spec: dict[str, Any] = {"minMember": job.min_member, "queue": job.queue}
        if job.min_resources is not None:
            spec["minResources"] = dict(job.min_resources)
        if job.priority_class is not None:
            spec["priorityClassName"] = job.priority_class
        meta = {
            "name": job.name,
            "namespace": NAMESPACE,
            "uid": f"pg-{index:06d}",
            "creationTimestamp": _stamp(job.arrival),
        }
        groups.append({"metadata": meta, "spec": spec, "status": {"phase": ph}})
    api_pods = []
    for pod in pods.values():
        job = trace.jobs[pod.job]
        spec = {
            "schedulerName": "volcano",
            "containers": [{"name": "main", "resources": {"requests": dict(pod.requests)}}],
        }
        if pod.node is not None:
            spec["nodeName"] = pod.node
        if job.priority_class is not None:
            spec["priorityClassName"] = job.priority_class
        annotations = {building.GROUP_ANNOTATION: job.name, keys.TASK_SPEC: pod.task}
        fields = {"name": pod.name, "namespace": NAMESPACE, "uid": f"{pod.name}#{pod.restarts}"}
        fields |= {"creationTimestamp": _stamp(job.arrival)}
        status = "Succeeded" if pod.done else "Running" if pod.node is not None else "Pending"
        api_pods.append({"metadata": {**fields, "annotations": annotations}, "spec": spec, "status": {"phase": status}})
    queues = [
        {"metadata": {"name": name, "creationTimestamp": _stamp(0)}, "spec": {"weight": weight}}
        for name, weight in trace.queues
    ]
    classes = [{"metadata": {"name": name}, "value": value} for name, value in trace.priority_classes]
    return building.build(nodes=trace.nodes, pods=api_pods, podgroups=groups, queues=queues, priorityclasses=classes)


def _apply(result: plan.Plan, pods: Mapping[str, _Pod], phase: dict[int, str], index: Mapping[str, int]) -> int:
    evicted = 0
    for op in result.operations:
        pod = pods[op.pod.split("/", 1)[1]]
        if isinstance(op, plan.Allocate):
            pod.node = op.node
        elif isinstance(op, plan.Evict):
            pod.node, pod.restarts, pod.done = None, pod.restarts + 1, False
            evicted += 1
    for verdict in result.podgroups:
        job = index[verdict.key.split("/", 1)[1]]
        if job in phase:
            phase[job] = verdict.phase
    return evicted


def _next_event(trace: Trace, jobs: list[int], arrived: int, pods: Mapping[str, _Pod], t: float) -> float | None:
    times = [trace.jobs[jobs[arrived]].arrival] if arrived < len(jobs) else []
    times += [p.started + trace.jobs[p.job].duration for p in pods.values() if p.node is not None and not p.done]
    return min(times) if times else None


def _total(trace: Trace) -> resources.Resource:
    total = resources.Resource()
    for node in trace.nodes:
        total = total + resources.parse(node["status"]["allocatable"])
    return total


def _fractions(held: resources.Resource, total: resources.Resource) -> dict[str, float]:
    return {name: held.get(name) / value for name, value in total.amounts if name != resources.PODS and value}


def _used(trace: Trace, pods: Mapping[str, _Pod]) -> dict[str, float]:
    used = resources.Resource()
    for pod in pods.values():
        if pod.node is not None and not pod.done:
            used = used + resources.parse(pod.requests)
    return _fractions(used, _total(trace))


def _shares(trace: Trace, pods: Mapping[str, _Pod]) -> dict[str, float]:
    held = {name: resources.Resource() for name, _ in trace.queues}
    for pod in pods.values():
        if pod.node is not None and not pod.done:
            queue = trace.jobs[pod.job].queue
            held[queue] = held[queue] + resources.parse(pod.requests)
    total = _total(trace)
    return {name: max(_fractions(amount, total).values(), default=0.0) for name, amount in held.items()}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (the smallest value with at least q% of the values at or below it)."""
    ordered = sorted(values)
    return ordered[max(math.ceil(q / 100 * len(ordered)), 1) - 1]


def _result(
    trace: Trace,
    end: float,
    cycles: int,
    evictions: int,
    started: Mapping[int, float],
    finished: Mapping[int, float],
    samples: list[Sample],
) -> Result:
    job_waits = tuple(
        (trace.jobs[i].name, trace.jobs[i].queue, started[i] - trace.jobs[i].arrival) for i in sorted(started)
    )
    waits = []
    for queue, _ in sorted(trace.queues):
        values = [w for _, q, w in job_waits if q == queue]
        if values:
            waits.append(
                Waits(queue, len(values), sum(values) / len(values), percentile(values, 50), percentile(values, 95))
            )
    horizon = max(finished.values(), default=end)
    mean: dict[str, float] = {}
    for s, after in zip(samples, [*samples[1:], None], strict=True):
        until = after.time if after is not None else horizon
        for name, frac in s.used.items():
            mean[name] = mean.get(name, 0.0) + frac * max(until - s.time, 0.0)
    done = len(finished) == len(trace.jobs)
    return Result(
        makespan=max(finished.values()) if done else None,
        end=horizon,
        cycles=cycles,
        finished=len(finished),
        unfinished=tuple(sorted(j.name for i, j in enumerate(trace.jobs) if i not in finished)),
        waits=tuple(waits),
        job_waits=job_waits,
        utilization=tuple(samples),
        mean_utilization={k: v / horizon for k, v in mean.items()} if horizon > 0 else {},
        evictions=evictions,
    )
