"""What ``building.build`` derives from one pod, and a memo that keeps it across builds. Pure.

:func:`derive` reads a pod as the apiserver returns it (or its ``scheduler.io.reads`` view) and
returns :class:`Facts`: the effective request, the node, the phase and what the snapshot's
tables need; :meth:`Facts.task` makes (once) the :class:`snapshot.Task` of one of our pods.

:class:`Memo` holds the facts of every pod object seen by the last build. Objects are replaced,
never mutated (the cache's contract), so a pod object seen again, the very same object, has the
same facts: at 140,000 bound pods a build then parses only the pods that changed since the last
one. What a build returns is the same with or without a memo (``tests/scheduler/api``); a memo
is only valid for one scheduler name and backend, and is cleared whenever the priority classes
change (a task's priority comes from them).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

import orjson

from bridge import defaults, keys
from scheduler.api import podspec, resources, snapshot

__all__ = ["CRITICAL_CLASSES", "LOOKS", "Facts", "Memo", "Obj", "Shapes", "derive", "parse_time", "pod_request"]

CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})

Obj = Mapping[str, Any]
T = TypeVar("T")
Shapes = dict[tuple[resources.Resource, podspec.Placement], int]
LOOKS = 100_000  # a memo holding more distinct looks than this starts again


def parse_time(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclasses.dataclass(slots=True)
class Facts:
    pod: Obj
    key: str  # namespace/name
    namespace: str
    labels: Mapping[str, str]
    node: str | None
    phase: str
    deleting: bool
    request: resources.Resource
    group: str | None  # the PodGroup's name the pod names (annotation; on native also schedulingGroup)
    scheduler: str
    placement: podspec.Placement
    shape: int  # see snapshot.Task.shape
    pod_terms: bool  # the pod has pod (anti-)affinity (``podspec.has_pod_terms``)
    _task: snapshot.Task | None = None

    def task(self, job_key: str, classes: Mapping[str, int], default_priority: int) -> snapshot.Task:
        """This pod's task in ``job_key`` (made on the first call; a memo's facts keep it)."""
        if self._task is None:
            self._task = _task(self, job_key, classes, default_priority)
        return self._task


class _ByObject(Generic[T]):
    """What was made of each object, by the object itself (the entry holds it, so ids stay
    unique): this build's entries, and the last build's to look up."""

    def __init__(self) -> None:
        self.last: dict[int, tuple[Obj, T]] = {}
        self.now: dict[int, tuple[Obj, T]] = {}

    def get(self, obj: Obj, make: Callable[[Obj], T]) -> T:
        hit = self.last.get(id(obj))
        made = hit[1] if hit is not None and hit[0] is obj else make(obj)
        self.now[id(obj)] = (obj, made)
        return made

    def turn(self, *, forget: bool = False) -> None:
        """A new build begins: this one's entries become the last (none with ``forget``)."""
        self.last, self.now = ({} if forget else self.now), {}


class Memo:
    """Facts by pod object and snapshot nodes by node object, from one build to the next
    (module docstring)."""

    def __init__(self) -> None:
        self.shapes: Shapes = {}  # see snapshot.Task.shape: numbers stay stable across builds
        self.signature: tuple[Any, ...] = ()
        self.requests: dict[Any, resources.Resource] = {}
        # What the placement and the request are read from (``_look_key``) → (request, placement,
        # shape): pods written alike (every pod of a job, mostly) are parsed once.
        self.looks: dict[tuple[Any, ...], tuple[resources.Resource, podspec.Placement, int]] = {}
        # Pods labelled alike share one labels mapping (a gang's pods, as a rule): the scheduler
        # compares a run's labels often, and ``is`` answers before ``==`` has to look.
        self.labels: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = {}
        self._pods: _ByObject[Facts] = _ByObject()
        self._nodes: _ByObject[snapshot.Node] = _ByObject()

    def start(self, signature: tuple[Any, ...]) -> None:
        """A new build begins; what was derived for another ``signature`` is forgotten."""
        forget = signature != self.signature or len(self.looks) > LOOKS
        if forget:
            self.shapes, self.requests, self.looks, self.signature = {}, {}, {}, signature
        if forget or len(self.labels) > LOOKS:  # sharing only: nothing else hangs on it
            self.labels = {}
        self._pods.turn(forget=forget)
        self._nodes.turn()

    def pod(self, obj: Obj, *, native: bool) -> Facts:
        """``derive(obj)``, or the facts of this very object from the last build."""
        return self._pods.get(obj, lambda o: derive(o, native=native, memo=self))

    def node(self, obj: Obj, make: Callable[[Obj], snapshot.Node]) -> snapshot.Node:
        """``make(obj)``, or what it made of this very object in the last build."""
        return self._nodes.get(obj, make)


def _look_key(spec: Mapping[str, Any], namespace: str, labels: Mapping[str, str]) -> tuple[Any, ...]:
    """Everything ``pod_request`` and ``podspec.parse_placement`` read, as one hashable key."""
    read = (
        spec.get("containers"),
        spec.get("initContainers"),
        spec.get("overhead"),
        spec.get("nodeSelector"),
        spec.get("affinity"),
        spec.get("tolerations"),
        spread := spec.get("topologySpreadConstraints"),
    )
    # The labels matter to the placement only through spread constraints' matchLabelKeys.
    return (namespace, orjson.dumps(read), tuple(sorted(labels.items())) if spread else ())


def derive(pod: Obj, *, native: bool, memo: Memo) -> Facts:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    namespace = meta.get("namespace", "")
    labels = meta.get("labels") or {}
    if labels:
        labels = memo.labels.setdefault(tuple(labels.items()), labels)
    group = (meta.get("annotations") or {}).get(keys.GROUP_NAME)
    if native and not group:
        group = (spec.get("schedulingGroup") or {}).get("podGroupName")
    look_key = _look_key(spec, namespace, labels)
    look = memo.looks.get(look_key)
    if look is None:
        request = pod_request(spec, memo.requests)
        placement = podspec.parse_placement(spec, namespace, labels)
        shape = memo.shapes.setdefault((request, placement), len(memo.shapes))
        look = memo.looks[look_key] = (request, placement, shape)
    request, placement, shape = look
    return Facts(
        pod=pod,
        key=f"{namespace}/{meta.get('name', '')}",
        namespace=namespace,
        labels=labels,
        node=spec.get("nodeName") or None,
        phase=status.get("phase", "Pending"),
        deleting=bool(meta.get("deletionTimestamp")),
        request=request,
        group=group or None,
        scheduler=spec.get("schedulerName", "default-scheduler"),
        placement=placement,
        shape=shape,
        pod_terms=podspec.has_pod_terms(spec),
    )


def pod_request(spec: Mapping[str, Any], memo: dict[Any, resources.Resource]) -> resources.Resource:
    """Effective request: Σ containers, at least each init container, plus overhead, plus one pod."""

    def requests(containers: Any) -> tuple[tuple[tuple[str, Any], ...], ...]:
        return tuple(
            tuple(sorted(((c.get("resources") or {}).get("requests") or {}).items())) for c in containers or []
        )

    key = (
        requests(spec.get("containers")),
        requests(spec.get("initContainers")),
        tuple((spec.get("overhead") or {}).items()),
    )
    if key in memo:
        return memo[key]
    total = resources.make(pods=1)
    for container in key[0]:
        total = total + resources.parse(dict(container))
    for init in key[1]:
        init_res = resources.parse(dict(init))
        total = resources.Resource.of(
            {n: max(total.get(n), init_res.get(n)) for n in {*total.names(), *init_res.names()}}
        )
    total = total + resources.parse(dict(key[2]))
    memo[key] = total
    return total


def _status(phase: str, node: str | None, deleting: bool) -> snapshot.TaskStatus:
    if phase == "Succeeded":
        return snapshot.TaskStatus.SUCCEEDED
    if phase == "Failed":
        return snapshot.TaskStatus.FAILED
    if deleting:
        return snapshot.TaskStatus.RELEASING
    if node is None:
        return snapshot.TaskStatus.PENDING
    return snapshot.TaskStatus.RUNNING if phase == "Running" else snapshot.TaskStatus.BOUND


def _task(facts: Facts, job_key: str, classes: Mapping[str, int], default_priority: int) -> snapshot.Task:
    pod = facts.pod
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    annotations, labels, namespace = meta.get("annotations") or {}, facts.labels, facts.namespace
    class_name = spec.get("priorityClassName", "")
    priority = spec.get("priority")
    role = labels.get(keys.SPARK_ROLE) or ("executor" if keys.SPARK_APP_SELECTOR in labels else None)
    return snapshot.Task(
        key=facts.key,
        uid=meta.get("uid", facts.key),
        namespace=namespace,
        name=meta.get("name", ""),
        job=job_key,
        task_name=annotations.get(keys.TASK_SPEC, ""),
        status=_status(facts.phase, facts.node, facts.deleting),
        node=facts.node,
        request=facts.request,
        # Only the pods dimension means the pod asked for nothing: BestEffort.
        best_effort=facts.request.names() == (resources.PODS,),
        priority=int(priority) if priority is not None else classes.get(class_name, default_priority),
        preemptable=annotations.get(keys.PREEMPTABLE, "true").lower() != "false",
        critical=namespace == defaults.SYSTEM_NAMESPACE or class_name in CRITICAL_CLASSES,
        labels=labels,
        placement=facts.placement,
        shape=facts.shape,
        spark_role=role,
        created=meta.get("creationTimestamp", ""),
        started=parse_time(status.get("startTime")),
        gated=any((g or {}).get("name") == keys.QUEUE_GATE for g in spec.get("schedulingGates") or ()),
    )
