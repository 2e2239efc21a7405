"""Volcano Job ``batch.volcano.sh/v1alpha1``: schema-compatible with Volcano's CRD.

Pod templates and volume claims are kept as opaque objects (``x-kubernetes-preserve-unknown-fields``):
the apiserver validates them again when our controller creates the pods, so a full PodSpec schema
here would only add megabytes to the CRD and drift with every Kubernetes release.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

import pydantic

from bridge.models import base as model_base
from bridge.models import podgroup as podgroup_model

__all__ = [
    "CRD",
    "EVENTS",
    "NAME_PATTERN",
    "PHASES",
    "TASK_NAME_PATTERN",
    "DateTime",
    "DependsOn",
    "Event",
    "JobCondition",
    "JobSpec",
    "JobState",
    "JobStatus",
    "Opaque",
    "PartitionPolicy",
    "Phase",
    "Policy",
    "TaskSpec",
    "TaskState",
    "VolumeSpec",
]

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
TASK_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
Event = Literal[
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
]
Phase = Literal[
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
]
# The same values as tuples, for validation messages (one list: the Literals above).
EVENTS: tuple[str, ...] = typing.get_args(Event)
PHASES: tuple[str, ...] = typing.get_args(Phase)
# An object the CRD stores as given; its content is checked where it is used (a pod, a PVC).
Opaque = Annotated[
    dict[str, Any], pydantic.WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True})
]
DateTime = Annotated[str, pydantic.Field(json_schema_extra={"format": "date-time"})]


class Policy(model_base.K8sModel):
    """What to do (action) when something happens to a pod or task (event, or a container exit code)."""

    event: Event | None = None
    events: list[Event] | None = None
    action: str | None = None
    exit_code: model_base.Int32 | None = None
    timeout: str | None = None


class DependsOn(model_base.K8sModel):
    name: list[str] | None = None
    iteration: str | None = None


class PartitionPolicy(model_base.K8sModel):
    total_partitions: model_base.Int32 = pydantic.Field(ge=1)
    partition_size: model_base.Int32 = pydantic.Field(ge=1)
    network_topology: podgroup_model.NetworkTopology | None = None
    min_partitions: model_base.Int32 = pydantic.Field(default=0, ge=0)


class TaskSpec(model_base.K8sModel):
    """A group of identical pods: ``<job>-<task>-<index>`` for index < replicas."""

    name: str | None = pydantic.Field(default=None, max_length=63, pattern=TASK_NAME_PATTERN)
    replicas: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    min_available: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    template: Opaque | None = None
    policies: list[Policy] | None = None
    topology_policy: Literal["none", "best-effort", "restricted", "single-numa-node"] | None = None
    max_retry: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    depends_on: DependsOn | None = None
    partition_policy: PartitionPolicy | None = None


class VolumeSpec(model_base.K8sModel):
    mount_path: str
    volume_claim_name: str | None = None
    volume_claim: Opaque | None = None


class JobSpec(model_base.K8sModel):
    scheduler_name: str | None = pydantic.Field(default=None, max_length=63)
    min_available: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    volumes: list[VolumeSpec] | None = None
    tasks: list[TaskSpec] | None = pydantic.Field(default=None, min_length=1)
    policies: list[Policy] | None = None
    plugins: dict[str, list[str]] | None = None
    running_estimate: str | None = None
    queue: str = pydantic.Field(default="default", max_length=253, pattern=NAME_PATTERN)
    max_retry: model_base.Int32 = pydantic.Field(default=3, ge=0)
    ttl_seconds_after_finished: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    priority_class_name: str | None = pydantic.Field(default=None, max_length=253, pattern=NAME_PATTERN)
    min_success: model_base.Int32 | None = pydantic.Field(default=None, ge=1)
    network_topology: podgroup_model.NetworkTopology | None = None


class JobState(model_base.K8sModel):
    phase: Phase | None = None
    reason: str | None = None
    message: str | None = None
    last_transition_time: DateTime | None = None


class JobCondition(model_base.K8sModel):
    status: str
    last_transition_time: DateTime | None = None


class TaskState(model_base.K8sModel):
    phase: dict[str, model_base.Int32] | None = None


class JobStatus(model_base.K8sModel):
    state: JobState | None = None
    min_available: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    task_status_count: dict[str, TaskState] | None = None
    pending: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    running: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    succeeded: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    failed: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    terminating: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    unknown: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    version: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    retry_count: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    running_duration: str | None = None
    controlled_resources: dict[str, str] | None = None
    conditions: list[JobCondition] | None = None


CRD = model_base.CrdInfo(
    group="batch.volcano.sh",
    version="v1alpha1",
    kind="Job",
    plural="jobs",
    singular="job",
    short_names=("vcjob", "vj"),
    namespaced=True,
    status_subresource=True,
    columns=(
        model_base.PrinterColumn("STATUS", ".status.state.phase", "string"),
        model_base.PrinterColumn("minAvailable", ".status.minAvailable", "integer"),
        model_base.PrinterColumn("RUNNINGS", ".status.running", "integer"),
        model_base.PrinterColumn("AGE", ".metadata.creationTimestamp", "date"),
        model_base.PrinterColumn("QUEUE", ".spec.queue", "string", priority=1),
    ),
    spec_model=JobSpec,
    status_model=JobStatus,
)
