"""PodGroup ``scheduling.volcano.sh/v1beta1``: schema-compatible with Volcano's CRD."""

from __future__ import annotations

from typing import Literal

import pydantic

from bridge.models import base as model_base

__all__ = ["CRD", "NetworkTopology", "Phase", "PodGroupCondition", "PodGroupSpec", "PodGroupStatus", "SubGroupPolicy"]

Phase = Literal["Pending", "Running", "Unknown", "Inqueue", "Completed"]


class NetworkTopology(model_base.K8sModel):
    mode: Literal["hard", "soft"] = "hard"
    highest_tier_allowed: int | None = pydantic.Field(default=None, ge=0)
    highest_tier_name: str | None = pydantic.Field(default=None, max_length=253)


class SubGroupPolicy(model_base.K8sModel):
    name: str
    network_topology: NetworkTopology | None = None
    sub_group_size: model_base.Int32 = pydantic.Field(default=1, ge=1)
    min_sub_groups: model_base.Int32 = pydantic.Field(default=0, ge=0)
    label_selector: model_base.LabelSelector | None = None
    match_label_keys: list[str] | None = None


class PodGroupSpec(model_base.K8sModel):
    min_member: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    min_task_member: dict[str, model_base.Int32] | None = None
    queue: str = pydantic.Field(
        default="default", max_length=253, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )
    priority_class_name: str | None = pydantic.Field(default=None, max_length=253)
    min_resources: model_base.ResourceList | None = None
    network_topology: NetworkTopology | None = None
    sub_group_policy: list[SubGroupPolicy] | None = None


class PodGroupCondition(model_base.K8sModel):
    type: str | None = None
    status: str | None = None
    transition_id: str | None = pydantic.Field(default=None, alias="transitionID")
    last_transition_time: str | None = pydantic.Field(default=None, json_schema_extra={"format": "date-time"})
    reason: str | None = None
    message: str | None = None


class PodGroupStatus(model_base.K8sModel):
    phase: Phase | None = None
    conditions: list[PodGroupCondition] | None = None
    running: model_base.Int32 | None = None
    succeeded: model_base.Int32 | None = None
    failed: model_base.Int32 | None = None


CRD = model_base.CrdInfo(
    group="scheduling.volcano.sh",
    version="v1beta1",
    kind="PodGroup",
    plural="podgroups",
    singular="podgroup",
    short_names=("pg", "podgroup-v1beta1"),
    namespaced=True,
    status_subresource=False,  # as Volcano: status is written with the object
    columns=(
        model_base.PrinterColumn("STATUS", ".status.phase", "string"),
        model_base.PrinterColumn("minMember", ".spec.minMember", "integer"),
        model_base.PrinterColumn("RUNNINGS", ".status.running", "integer"),
        model_base.PrinterColumn("AGE", ".metadata.creationTimestamp", "date"),
        model_base.PrinterColumn("QUEUE", ".spec.queue", "string", priority=1),
    ),
    spec_model=PodGroupSpec,
    status_model=PodGroupStatus,
)
