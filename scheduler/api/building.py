"""Build a :class:`snapshot.Snapshot` from API dicts as the kube-apiserver returns them. Pure.

Which pods are ours: ``spec.schedulerName`` equal to the configured name and the annotation
``scheduling.k8s.io/group-name``; the job key is ``<pod namespace>/<annotation>`` as in Volcano.
Every pod with a node (any scheduler) counts against that node's capacity. Our pods whose
PodGroup is missing, or that lack the annotation, become :class:`snapshot.Stranded` entries so
the plan can give them a verdict instead of leaving them silently Pending.

On the native backend (``native=True``: kube-scheduler places, we admit) our pods are those of
the kube-scheduler's name that name a group, by the annotation or by
``spec.schedulingGroup.podGroupName`` (the native PodGroup has the Volcano PodGroup's name); its
other pods are ordinary pods, not stranded ones. A task there records whether it still carries
our queue gate (``snapshot.Task.gated``).

Which PodGroups are ours: those with at least one of our pods, and those with no pods yet (an
operator creates the group first and waits for it to be admitted). A group whose pods all name
another scheduler belongs to that scheduler: it is left out, so the plan writes nothing to it.

Objects that never passed admission (the webhook was down, skips their namespace, or came
later) are judged here as admission judges them (``bridge.validation``, ``bridge.models.queue``,
``bridge.queues``): a group whose spec is unsound, whose queue's spec is, or whose queue does
not admit its namespace is ``held`` (never scheduled; its verdict gives the reason), read with
harmless defaults, and every other object is scheduled as usual. One bad object never fails a
cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from bridge import defaults, errors, keys, queues, staging, validation
from bridge.models import queue as queue_model
from scheduler.api import podfacts, podspec, resources, snapshot, tally

__all__ = ["GROUP_ANNOTATION", "Obj", "build"]

GROUP_ANNOTATION = keys.GROUP_NAME

Obj = Mapping[str, Any]


def build(
    *,
    nodes: Iterable[Obj],
    pods: Iterable[Obj],
    podgroups: Iterable[Obj],
    queues: Iterable[Obj],
    priorityclasses: Iterable[Obj] = (),
    scheduler_name: str = defaults.SCHEDULER_NAME,
    native: bool = False,
    memo: podfacts.Memo | None = None,
) -> snapshot.Snapshot:
    """The snapshot of these objects; ``memo`` (the same one each cycle) keeps what was derived
    from each pod object for the next build (``podfacts``): the result is the same without it."""
    classes = {_meta(pc).get("name", ""): int(pc.get("value", 0)) for pc in priorityclasses}
    default_priority = next((int(pc.get("value", 0)) for pc in priorityclasses if pc.get("globalDefault")), 0)
    memo = memo or podfacts.Memo()
    memo.start((scheduler_name, native, tuple(sorted(classes.items())), default_priority))
    node_list = sorted((memo.node(n, _node) for n in nodes), key=lambda n: n.name)
    index = {n.name: i for i, n in enumerate(node_list)}
    groups = {f"{_meta(pg).get('namespace', '')}/{_meta(pg).get('name', '')}": pg for pg in podgroups}

    tasks: dict[str, snapshot.Task] = {}
    members: dict[str, list[str]] = {}
    stranded: list[snapshot.Stranded] = []
    occupancy: list[tuple[int, resources.Resource, bool]] = []
    placed: list[tuple[int, str, Mapping[str, str], bool]] = []
    placed_terms: list[tuple[int, podspec.Placement]] = []  # placed pods with pod (anti-)affinity
    foreign: set[str] = set()  # groups named by pods of other schedulers
    for pod in pods:
        facts = memo.pod(pod, native=native)
        node, phase, group, key = facts.node, facts.phase, facts.group, facts.key
        if node in index and phase not in ("Succeeded", "Failed"):
            occupancy.append((index[node], facts.request, facts.deleting))
            placed.append((index[node], facts.namespace, facts.labels, facts.deleting))
            if facts.pod_terms:
                placed_terms.append((index[node], facts.placement))
        if facts.scheduler != scheduler_name:
            if group:
                foreign.add(f"{facts.namespace}/{group}")
            continue
        if not group:
            if node is None and phase == "Pending" and not native:
                msg = f"pod has no {GROUP_ANNOTATION} annotation; waiting for its PodGroup to be created"
                stranded.append(snapshot.Stranded(key, "NoPodGroup", msg))
            continue
        job_key = f"{facts.namespace}/{group}"
        if job_key not in groups:
            if node is None and phase == "Pending":
                stranded.append(snapshot.Stranded(key, "PodGroupNotFound", f"podgroup {job_key} not found"))
            continue
        tasks[key] = facts.task(job_key, classes, default_priority)
        members.setdefault(job_key, []).append(key)

    for key in foreign - members.keys():
        groups.pop(key, None)
    dims = _dims(node_list, {id(t.request): t.request for t in tasks.values()}.values())
    allocatable = np.array([resources.vector(n.allocatable, dims) for n in node_list], dtype=np.float64)
    allocatable = allocatable.reshape(len(node_list), len(dims))
    used, releasing = _occupancy(occupancy, len(node_list), dims)
    queue_map = {q.name: q for q in (_queue(q) for q in queues)}
    jobs = {
        key: _job(pg, key, members.get(key, []), tasks, classes, default_priority, queue_map)
        for key, pg in groups.items()
    }
    for matrix in (allocatable, used, releasing):
        matrix.flags.writeable = False
    return snapshot.Snapshot(
        nodes=tuple(node_list),
        dims=dims,
        allocatable=allocatable,
        used=used,
        releasing=releasing,
        tasks=tasks,
        jobs=jobs,
        queues=queue_map,
        placed_labels=tuple(placed),
        placed_terms=tuple(placed_terms),
        stranded=tuple(stranded),
        columns=tally.of(tasks, list(jobs), index),
    )


def _meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _node(obj: Obj) -> snapshot.Node:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    conditions = status.get("conditions") or []
    ready = all(c.get("status") == "True" for c in conditions if c.get("type") == "Ready")
    taints = tuple(
        podspec.Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
        for t in spec.get("taints") or []
    )
    labels = dict(_meta(obj).get("labels") or {})
    labels.setdefault(podspec.HOSTNAME, _meta(obj).get("name", ""))
    return snapshot.Node(
        name=_meta(obj).get("name", ""),
        labels=labels,
        taints=taints,
        unschedulable=bool(spec.get("unschedulable")),
        ready=ready,
        allocatable=resources.parse(status.get("allocatable") or status.get("capacity")),
    )


def _held(spec: Any, namespace: str, queue: str, queue_map: Mapping[str, snapshot.Queue]) -> tuple[str, str] | None:
    """Why a group must not be scheduled at all (``snapshot.Job.held``), or None."""
    try:
        validation.podgroup_spec(spec)
    except errors.InvalidObjectError as exc:
        return ("InvalidPodGroup", f"PodGroup spec cannot be used: {exc}")
    info = queue_map.get(queue)
    if info is None:
        return None  # verdicts: QueueNotFound
    if info.unsound:
        return ("QueueInvalid", f"queue {queue} cannot be used: {info.unsound}")
    if not queues.admits(info.allowed, namespace):
        facts = {q.name: queues.QueueFacts(state=q.state, allowed=q.allowed) for q in queue_map.values()}
        return ("QueueNotAllowed", queues.refusal(queue, namespace=namespace, queues=facts) or "")
    return None


def _job(
    pg: Obj,
    key: str,
    members: list[str],
    tasks: Mapping[str, snapshot.Task],
    classes: Mapping[str, int],
    default_priority: int,
    queue_map: Mapping[str, snapshot.Queue],
) -> snapshot.Job:
    meta, spec, status = _meta(pg), pg.get("spec") or {}, pg.get("status") or {}
    queue = spec.get("queue") if isinstance(spec, Mapping) else None
    queue = queue if isinstance(queue, str) and queue else "default"
    held = _held(spec, meta.get("namespace", ""), queue, queue_map)
    if held is not None and held[0] == "InvalidPodGroup":
        spec = {}  # held whatever it asks: the rest of the cycle reads harmless defaults
    min_resources = spec.get("minResources")
    by_creation = tuple(sorted(members, key=lambda k: (tasks[k].created, k)))
    by_priority = tuple(tasks[k] for k in by_creation)
    if len({task.priority for task in by_priority}) > 1:
        by_priority = tuple(sorted(by_priority, key=lambda t: -t.priority))  # stable: creation kept
    return snapshot.Job(
        key=key,
        uid=meta.get("uid", key),
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        queue=queue,
        min_member=int(spec.get("minMember", 1)),
        min_task_member={str(k): int(v) for k, v in (spec.get("minTaskMember") or {}).items()},
        min_resources=resources.parse(min_resources) if min_resources is not None else None,
        priority=classes.get(spec.get("priorityClassName", ""), default_priority),
        phase=status.get("phase") or "Pending",
        created=meta.get("creationTimestamp", ""),
        tasks=by_creation,
        by_priority=by_priority,
        spark=any(tasks[k].spark_role for k in members),
        owner=_owner(meta.get("ownerReferences") or []),
        held=held,
        stages=tuple(stage.tasks for stage in staging.decode((meta.get("annotations") or {}).get(keys.STAGES))),
    )


def _owner(refs: list[Mapping[str, Any]]) -> tuple[str, str] | None:
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    return (str(ref.get("kind", "")), str(ref.get("name", ""))) if ref else None


def _queue(obj: Obj) -> snapshot.Queue:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    name = str(_meta(obj).get("name", ""))
    unsound = ""
    try:
        queue_model.check(name, spec)
    except errors.InvalidObjectError as exc:
        unsound, spec = str(exc), {}  # its groups are held; the queue itself is read as defaults
    capability, deserved = spec.get("capability"), spec.get("deserved")
    annotations = _meta(obj).get("annotations") or {}
    return snapshot.Queue(
        name=_meta(obj).get("name", ""),
        weight=int(spec.get("weight", 1)),
        capability=resources.parse(capability) if capability else None,
        guarantee=resources.parse((spec.get("guarantee") or {}).get("resource")),
        deserved=resources.parse(deserved) if deserved else None,
        reclaimable=spec.get("reclaimable", True) is not False,
        state=status.get("state") or spec.get("state") or "Open",
        priority=int(spec.get("priority", 0)),
        created=_meta(obj).get("creationTimestamp", ""),
        parent=spec.get("parent") or None,
        hierarchy=annotations.get(keys.HIERARCHY) or None,
        hierarchy_weights=annotations.get(keys.HIERARCHY_WEIGHTS) or None,
        allowed=queues.patterns(_meta(obj).get("annotations")),
        unsound=unsound,
    )


def _dims(nodes: list[snapshot.Node], requests: Iterable[resources.Resource]) -> tuple[str, ...]:
    scalars = {name for n in nodes for name in n.allocatable.names()}
    scalars |= {name for r in requests for name in r.names()}
    scalars -= {resources.CPU, resources.MEMORY, resources.PODS}
    return (resources.CPU, resources.MEMORY, resources.PODS, *sorted(scalars))


def _occupancy(
    occupancy: list[tuple[int, resources.Resource, bool]], rows: int, dims: tuple[str, ...]
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.float64]]]:
    used = np.zeros((rows, len(dims)), dtype=np.float64)
    releasing = np.zeros((rows, len(dims)), dtype=np.float64)
    # One vector per distinct request, then scatter-add: far cheaper than a vector per pod.
    vectors: dict[resources.Resource, np.ndarray[Any, np.dtype[np.float64]]] = {}
    by_request: dict[tuple[resources.Resource, bool], list[int]] = {}
    for row, request, deleting in occupancy:
        by_request.setdefault((request, deleting), []).append(row)
    for (request, deleting), row_list in by_request.items():
        vec = vectors.setdefault(request, resources.vector(request, dims))
        counts = np.bincount(np.asarray(row_list, dtype=np.intp), minlength=rows).astype(np.float64)
        delta = np.outer(counts, vec)
        used += delta
        if deleting:
            releasing += delta
    return used, releasing
