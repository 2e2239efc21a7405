"""Queue ``scheduling.volcano.sh/v1beta1`` (cluster-scoped): schema-compatible with Volcano's CRD."""

from __future__ import annotations

from typing import Literal

import pydantic

from bridge.models import base

__all__ = ["CRD", "QueueSpec", "QueueStatus"]

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
State = Literal["Open", "Closed", "Closing", "Unknown"]


class Guarantee(base.K8sModel):
    resource: base.ResourceList | None = None


class NodeGroupAffinityTerms(base.K8sModel):
    required_during_scheduling_ignored_during_execution: list[str] | None = None
    preferred_during_scheduling_ignored_during_execution: list[str] | None = None


class QueueAffinity(base.K8sModel):
    node_group_affinity: NodeGroupAffinityTerms | None = None
    node_group_anti_affinity: NodeGroupAffinityTerms | None = None


class Cluster(base.K8sModel):
    name: str | None = None
    weight: base.Int32 | None = None
    capacity: base.ResourceList | None = None


class QueueSpec(base.K8sModel):
    weight: base.Int32 = pydantic.Field(default=1, ge=1, le=65535)
    capability: base.ResourceList | None = None
    reclaimable: bool | None = None
    guarantee: Guarantee | None = None
    deserved: base.ResourceList | None = None
    parent: str | None = pydantic.Field(default=None, max_length=253, pattern=NAME_PATTERN)
    affinity: QueueAffinity | None = None
    priority: base.Int32 | None = pydantic.Field(default=None, ge=0)
    dequeue_strategy: Literal["fifo", "traverse"] = "traverse"
    extend_clusters: list[Cluster] | None = None
    type: str | None = pydantic.Field(default=None, max_length=253)


class Reservation(base.K8sModel):
    nodes: list[str] | None = None
    resource: base.ResourceList | None = None


class QueueStatus(base.K8sModel):
    state: State | None = None
    pending: base.Int32 | None = pydantic.Field(default=None, ge=0)
    inqueue: base.Int32 | None = pydantic.Field(default=None, ge=0)
    running: base.Int32 | None = pydantic.Field(default=None, ge=0)
    unknown: base.Int32 | None = pydantic.Field(default=None, ge=0)
    completed: base.Int32 | None = pydantic.Field(default=None, ge=0)
    allocated: base.ResourceList | None = None
    reservation: Reservation | None = None


CRD = base.CrdInfo(
    group="scheduling.volcano.sh",
    version="v1beta1",
    kind="Queue",
    plural="queues",
    singular="queue",
    short_names=("q", "queue-v1beta1"),
    namespaced=False,
    status_subresource=True,
    columns=(
        base.PrinterColumn("PARENT", ".spec.parent", "string"),
        base.PrinterColumn("STATE", ".status.state", "string", priority=1),
        base.PrinterColumn("WEIGHT", ".spec.weight", "integer", priority=1),
    ),
    spec_model=QueueSpec,
    status_model=QueueStatus,
)
