"""What the scheduler reads of a pod and of a node: the views its cache decodes them through.

Every member the snapshot (``scheduler.api.building``, ``podspec``), the binder and the status
writer read is here, and nothing else (``managedFields``, volumes, env, images, most of the
status stay undecoded: ``bridge.k8s.views``). A member the scheduler starts to read must be added
here, or it reads as absent: ``tests/scheduler/io/test_reads.py`` builds snapshots from whole
objects and from these views and asserts they are equal. Nested rules (affinity, tolerations,
spread constraints, taints, conditions) are kept whole (``Any``).
"""

from __future__ import annotations

from typing import Any, TypedDict

from bridge.k8s import views

__all__ = [
    "NODES",
    "PODS",
    "Container",
    "Meta",
    "Node",
    "NodeSpec",
    "NodeStatus",
    "Pod",
    "PodSpec",
    "PodStatus",
    "Resources",
]


class Meta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    creationTimestamp: str
    deletionTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: Any


class Resources(TypedDict, total=False):
    requests: dict[str, Any]
    limits: dict[str, Any]


class Container(TypedDict, total=False):
    name: str
    resources: Resources
    restartPolicy: str


class PodSpec(TypedDict, total=False):
    nodeName: str
    schedulerName: str
    containers: list[Container]
    initContainers: list[Container]
    overhead: dict[str, Any]
    priority: int
    priorityClassName: str
    preemptionPolicy: str
    nodeSelector: dict[str, str]
    affinity: Any
    tolerations: Any
    topologySpreadConstraints: Any
    schedulingGates: Any
    schedulingGroup: Any


class PodStatus(TypedDict, total=False):
    phase: str
    startTime: str
    nominatedNodeName: str
    conditions: Any


class Pod(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: Meta
    spec: PodSpec
    status: PodStatus


class NodeSpec(TypedDict, total=False):
    unschedulable: bool
    taints: Any


class NodeStatus(TypedDict, total=False):
    allocatable: dict[str, Any]
    capacity: dict[str, Any]
    conditions: Any


class Node(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: Meta
    spec: NodeSpec
    status: NodeStatus


PODS = views.View(Pod)
NODES = views.View(Node)
