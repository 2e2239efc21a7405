"""Builders for the API dicts the scheduler core reads (as the kube-apiserver returns them).

Besides one object at a time: ``CONFS``, scheduler confs that exercise every action and plugin,
and seeded random workloads (``mixed_workload``, ``lone_task_workload``) for the tests that
compare the fast paths with the reference path.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from bridge import keys
from scheduler.api import building

T0 = "2025-01-01T00:00:00Z"

# Scheduler confs (volcano-scheduler.conf text) the seeded workloads are run under.
CONFS = [
    "",
    'actions: "enqueue, allocate, backfill, preempt, reclaim"\n',
    'actions: "allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: predicates}, {name: proportion}, {name: binpack}]\n",
    'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: overcommit}, {name: predicates}, {name: proportion},"
    " {name: nodeorder, arguments: {mostrequested.weight: 2, balancedresource.weight: 3}}]\n",
]


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: int = 110,
    gpu: int = 0,
    labels: Mapping[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    ready: bool = True,
) -> dict[str, Any]:
    allocatable: dict[str, Any] = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    if gpu:
        allocatable["nvidia.com/gpu"] = str(gpu)
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or [], "unschedulable": unschedulable},
        "status": {
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def pod(
    name: str,
    *,
    group: str | None = "pg",
    namespace: str = "ns",
    cpu: str | None = "1",
    memory: str | None = "1Gi",
    gpu: int = 0,
    node: str | None = None,
    phase: str | None = None,
    task: str | None = None,
    priority_class: str | None = None,
    preemptable: bool | None = None,
    labels: Mapping[str, str] | None = None,
    created: str = T0,
    started: str | None = None,
    scheduler: str = "volcano",
    spec: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    requests: dict[str, Any] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    if gpu:
        requests["nvidia.com/gpu"] = str(gpu)
    annotations: dict[str, str] = {}
    if group is not None:
        annotations[building.GROUP_ANNOTATION] = group
    if task is not None:
        annotations["volcano.sh/task-spec"] = task
    if preemptable is not None:
        annotations["volcano.sh/preemptable"] = "true" if preemptable else "false"
    body: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "main", "resources": {"requests": requests}}],
        **(spec or {}),
    }
    if node is not None:
        body["nodeName"] = node
    if priority_class is not None:
        body["priorityClassName"] = priority_class
    status: dict[str, Any] = {"phase": phase or ("Running" if node else "Pending")}
    if started is not None:
        status["startTime"] = started
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "annotations": annotations,
            "labels": dict(labels or {}),
            "creationTimestamp": created,
        },
        "spec": body,
        "status": status,
    }


def native_pod(name: str, *, group: str = "pg", gated: bool | None = None, **kwargs: Any) -> dict[str, Any]:
    """A pod as the native backend's admission leaves it: kube-scheduler's name, the group's
    annotation and ``spec.schedulingGroup``, and our queue gate while unbound (``gated`` None)."""
    body = pod(name, group=group, scheduler="default-scheduler", **kwargs)
    body["spec"]["schedulingGroup"] = {"podGroupName": group}
    if gated if gated is not None else not body["spec"].get("nodeName"):
        body["spec"]["schedulingGates"] = [{"name": keys.QUEUE_GATE}]
    return body


def podgroup(
    name: str,
    *,
    namespace: str = "ns",
    min_member: int = 1,
    queue: str = "default",
    min_resources: Mapping[str, str] | None = None,
    min_task_member: Mapping[str, int] | None = None,
    priority_class: str | None = None,
    phase: str | None = None,
    created: str = T0,
    owner: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """A PodGroup; ``owner`` (kind, name) adds a controller ownerReference to that object."""
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if min_task_member is not None:
        spec["minTaskMember"] = dict(min_task_member)
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-pg-{name}", "creationTimestamp": created}
    if owner is not None:
        kind, owner_name = owner
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": kind, "name": owner_name, "uid": f"uid-{owner_name}", "controller": True}
        ]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase} if phase else {},
    }


def queue(
    name: str = "default",
    *,
    weight: int = 1,
    capability: Mapping[str, str] | None = None,
    guarantee: Mapping[str, str] | None = None,
    deserved: Mapping[str, str] | None = None,
    reclaimable: bool | None = None,
    state: str | None = None,
    parent: str | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": weight}
    if parent is not None:
        spec["parent"] = parent
    if capability is not None:
        spec["capability"] = dict(capability)
    if guarantee is not None:
        spec["guarantee"] = {"resource": dict(guarantee)}
    if deserved is not None:
        spec["deserved"] = dict(deserved)
    if reclaimable is not None:
        spec["reclaimable"] = reclaimable
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "creationTimestamp": T0, "annotations": dict(annotations or {})},
        "spec": spec,
        "status": {"state": state} if state else {},
    }


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "value": value}


def mixed_workload(seed: int) -> dict[str, Any]:
    """A seeded mixed workload: node sizes, taints, cordons, selectors, anti-affinity, zone spread,
    preferred affinity, BestEffort and releasing pods, running gangs, queue capabilities and
    weights, priorities."""
    r = random.Random(seed)
    count = r.randint(1, 25)
    nodes = [
        node(
            f"n{i:02d}",
            cpu=str(r.choice([2, 4, 8, 16])),
            memory=r.choice(["4Gi", "8Gi", "32Gi"]),
            pods=r.choice([3, 10, 110]),
            gpu=r.choice([0, 0, 2]),
            labels={"zone": f"z{i % 3}"},
            taints=[{"key": "t", "value": "x", "effect": "NoSchedule"}] if r.random() < 0.1 else None,
            unschedulable=r.random() < 0.05,
            ready=r.random() > 0.05,
        )
        for i in range(count)
    ]
    queues = [
        queue(f"q{i}", weight=r.randint(1, 4), capability={"cpu": str(r.randint(4, 60))} if r.random() < 0.3 else None)
        for i in range(r.randint(1, 3))
    ]
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(1, 12)):
        size, running = r.randint(1, 40 if r.random() < 0.1 else 12), r.random() < 0.3
        min_member, created = r.randint(1, size), f"2025-01-01T00:{g:02d}:00Z"
        groups.append(
            podgroup(
                f"g{g}",
                min_member=min_member,
                queue=f"q{r.randrange(len(queues))}" if r.random() > 0.05 else "missing",
                min_resources={"cpu": str(r.randint(1, 20))} if r.random() < 0.3 else None,
                priority_class=r.choice([None, "hi", "lo"]),
                phase=r.choice(["Running"] if running else [None, "Inqueue", "Pending"]),
                created=created,
            )
        )
        shapes = [(r.choice(["500m", "1", "2", "3"]), r.choice(["512Mi", "1Gi", "2Gi"]), r.choice([0, 0, 0, 1]))]
        shapes += shapes if r.random() < 0.5 else [(r.choice(["1", "2"]), "1Gi", 0)]
        for k in range(size):
            cpu, memory, gpu = shapes[k % 2]
            spec: dict[str, Any] = {}
            x = r.random()
            if x < 0.1:
                spec["nodeSelector"] = {"zone": "z1"}
            elif x < 0.15:
                spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
            elif x < 0.2:
                term = {"labelSelector": {"matchLabels": {"app": f"g{g}"}}, "topologyKey": "kubernetes.io/hostname"}
                spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
            elif x < 0.23:
                rule = {"maxSkew": 1, "topologyKey": "zone", "labelSelector": {"matchLabels": {"app": f"g{g}"}}}
                spec["topologySpreadConstraints"] = [rule]
            elif x < 0.25:
                term = {"labelSelector": {"matchLabels": {"app": f"g{g}"}}, "topologyKey": "zone"}
                preferred = [{"weight": 50, "podAffinityTerm": term}]
                spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}
            member = pod(
                f"g{g}-p{k}",
                group=f"g{g}",
                cpu=None if x > 0.97 else cpu,
                memory=None if x > 0.97 else memory,
                gpu=gpu,
                node=f"n{r.randrange(count):02d}" if running and k < min_member else None,
                labels={"app": f"g{g}"},
                task=r.choice([None, "w"]),
                priority_class=r.choice([None, "hi", "lo"]),
                created=created,
                spec=spec or None,
            )
            if member["spec"].get("nodeName") and r.random() < 0.1:
                member["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
            pods.append(member)
    return {
        "nodes": nodes,
        "pods": pods,
        "podgroups": groups,
        "queues": queues,
        "priorityclasses": [priority_class("hi", 100), priority_class("lo", 1)],
    }


def lone_task_workload(seed: int) -> dict[str, Any]:
    """A seeded workload of mostly one-task PodGroups (a few shapes, so runs form and break), some
    larger gangs, jobs whose other members run, groups that cannot be ready from one pod,
    BestEffort and anti-affinity pods, tight nodes, queue capabilities, one to three queues."""
    r = random.Random(seed)
    nodes = [
        node(f"n{i:02d}", cpu=str(r.choice([2, 4, 8])), memory=r.choice(["4Gi", "8Gi"]), pods=r.choice([4, 110]))
        for i in range(r.randint(1, 12))
    ]
    queues = [
        queue(f"q{i}", weight=r.randint(1, 3), capability={"cpu": str(r.randint(3, 30))} if r.random() < 0.4 else None)
        for i in range(1 if r.random() < 0.6 else r.randint(2, 3))
    ]
    shapes = [("500m", "512Mi"), ("1", "1Gi"), ("2", "1Gi")][: r.randint(1, 3)]
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(2, 60)):
        kind = r.random()
        size = r.randint(2, 5) if kind < 0.1 else 1
        min_member = 2 if 0.1 <= kind < 0.15 else r.randint(1, size)
        running = r.random() < 0.1
        created = f"2025-01-01T00:{g % 60:02d}:00Z"
        groups.append(
            podgroup(
                f"g{g}",
                min_member=min_member,
                queue=f"q{r.randrange(len(queues))}",
                priority_class=r.choice([None, None, "hi"]),
                phase="Running" if running else r.choice([None, "Inqueue"]),
                created=created,
            )
        )
        cpu, memory = r.choice(shapes)
        members = size + (1 if running else 0)
        for k in range(members):
            x = r.random()
            spec: dict[str, Any] | None = None
            if x < 0.05:
                term = {"labelSelector": {"matchLabels": {"app": f"g{g}"}}, "topologyKey": "kubernetes.io/hostname"}
                spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
            pods.append(
                pod(
                    f"g{g}-p{k}",
                    group=f"g{g}",
                    cpu=None if x > 0.95 else cpu,
                    memory=None if x > 0.95 else memory,
                    node=f"n{r.randrange(len(nodes)):02d}" if running and k == 0 else None,
                    labels={"app": f"g{g}"},
                    priority_class=r.choice([None, None, "hi"]),
                    created=created,
                    spec=spec,
                )
            )
    return {
        "nodes": nodes,
        "pods": pods,
        "podgroups": groups,
        "queues": queues,
        "priorityclasses": [priority_class("hi", 100)],
    }


def held(queue: dict[str, Any], cpu: str) -> dict[str, Any]:
    """``queue`` Open, with ``cpu`` allocated in its status (as the scheduler writes it)."""
    queue["status"] = {"state": "Open", "allocated": {"cpu": cpu}}
    return queue


def org_tree() -> list[dict[str, Any]]:
    """A queue tree by spec.parent: root, org (deserved 8, capability 12 CPUs) over leaves pa
    (6 deserved, 5 held) and pb (2 deserved, 3 held), and one whose parent does not exist."""
    return [
        queue("root"),
        queue("org", deserved={"cpu": "8"}, capability={"cpu": "12"}),
        held(queue("pa", parent="org", deserved={"cpu": "6"}), "5"),
        held(queue("pb", parent="org", deserved={"cpu": "2"}), "3"),
        queue("lost", parent="nowhere"),
    ]
