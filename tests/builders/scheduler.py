"""Builders for the API dicts the scheduler core reads (as the kube-apiserver returns them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import building

T0 = "2025-01-01T00:00:00Z"


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
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if min_task_member is not None:
        spec["minTaskMember"] = dict(min_task_member)
    if priority_class is not None:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-pg-{name}", "creationTimestamp": created},
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
) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": weight}
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
        "metadata": {"name": name, "creationTimestamp": T0},
        "spec": spec,
        "status": {"state": state} if state else {},
    }


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "value": value}
