"""The JSON shape each adapter reads, as TypedDicts: what must be an object, a list or a string.

Admission checks an object against its kind's shape (``Registration.shape``, ``misfit``: msgspec
converts it, and its error is made to name the member, map keys included) before the adapter
sees it, so a member of the wrong JSON type (``spec.executor`` a string, a list where an object
belongs) is a denial naming the member, never an exception inside an adapter. Only the members
the adapters read are declared; unknown ones are allowed, and leaves the adapters check
themselves (counts, quantities) are ``Any``, so their own, more precise messages stay; null is
as good as absent. Pods have no shape here: their decoding view (``podview.Pod``) is their shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Generic, TypedDict, TypeVar

import msgspec

__all__ = [
    "BatchJobSpec",
    "Command",
    "Container",
    "DependsOn",
    "JobSet",
    "JobSetDependsOn",
    "JobSetSpec",
    "JobSpec",
    "KubeflowJob",
    "KubeflowSpec",
    "Metadata",
    "Object",
    "Placement",
    "PodGroup",
    "PodGroupSpec",
    "PodSpec",
    "Policy",
    "Queue",
    "Replica",
    "ReplicatedJob",
    "Resources",
    "RunPolicy",
    "SparkApplication",
    "SparkConnect",
    "SparkConnectRole",
    "SparkConnectSpec",
    "SparkRole",
    "SparkSpec",
    "StartupPolicy",
    "Strings",
    "Task",
    "Template",
    "VolcanoJob",
    "Volume",
    "misfit",
]

Strings = dict[str, str]


class Metadata(TypedDict, total=False):
    name: str | None
    generateName: str | None
    namespace: str | None
    labels: Strings | None
    annotations: Strings | None


Spec = TypeVar("Spec")


class Object(TypedDict, Generic[Spec], total=False):
    """A Kubernetes object (or pod template) as the adapters read it: its metadata and spec."""

    metadata: Metadata | None
    spec: Spec | None


class Resources(TypedDict, total=False):
    requests: dict[str, Any] | None
    limits: dict[str, Any] | None


class Container(TypedDict, total=False):
    name: str | None
    args: list[str] | None
    env: list[dict[str, Any]] | None
    ports: list[dict[str, Any]] | None
    resources: Resources | None


class PodSpec(TypedDict, total=False):
    schedulerName: str | None
    priorityClassName: str | None
    hostname: str | None
    subdomain: str | None
    schedulingGates: list[dict[str, Any]] | None
    schedulingGroup: dict[str, Any] | None
    containers: list[Container] | None
    initContainers: list[Container] | None
    overhead: dict[str, Any] | None
    volumes: list[dict[str, Any]] | None


Template = Object[PodSpec]


# -- Kubeflow ---------------------------------------------------------------------------------


class Replica(TypedDict, total=False):
    template: Template | None


class Placement(TypedDict, total=False):
    """Where and how big a gang is: a Kubeflow ``schedulingPolicy`` (queue, priorityClass,
    minResources) and a SparkApplication's ``batchSchedulerOptions`` (queue,
    priorityClassName, resources); each kind reads its own members."""

    queue: str | None
    priorityClass: str | None
    priorityClassName: str | None
    minResources: dict[str, Any] | None
    resources: dict[str, Any] | None


class RunPolicy(TypedDict, total=False):
    schedulingPolicy: Placement | None


class KubeflowSpec(TypedDict, total=False):
    """Every Kubeflow kind's replica field: each kind reads its own, another's is unknown to it."""

    tfReplicaSpecs: dict[str, Replica] | None
    pytorchReplicaSpecs: dict[str, Replica] | None
    mpiReplicaSpecs: dict[str, Replica] | None
    xgbReplicaSpecs: dict[str, Replica] | None
    paddleReplicaSpecs: dict[str, Replica] | None
    jaxReplicaSpecs: dict[str, Replica] | None
    runPolicy: RunPolicy | None


KubeflowJob = Object[KubeflowSpec]


# -- JobSet ----------------------------------------------------------------------------------


class JobSetDependsOn(TypedDict, total=False):
    name: str | None
    status: str | None


class BatchJobSpec(TypedDict, total=False):
    parallelism: Any
    completions: Any
    template: Template | None


class ReplicatedJob(TypedDict, total=False):
    name: str | None
    replicas: Any
    dependsOn: list[JobSetDependsOn] | None
    template: Object[BatchJobSpec] | None


class StartupPolicy(TypedDict, total=False):
    startupPolicyOrder: str | None


class JobSetSpec(TypedDict, total=False):
    replicatedJobs: list[ReplicatedJob] | None
    startupPolicy: StartupPolicy | None
    suspend: bool | None
    managedBy: str | None


JobSet = Object[JobSetSpec]


# -- Spark ------------------------------------------------------------------------------------


class SparkRole(TypedDict, total=False):
    annotations: Strings | None
    labels: Strings | None
    schedulerName: str | None
    gpu: dict[str, Any] | None


class SparkSpec(TypedDict, total=False):
    driver: SparkRole | None
    executor: SparkRole | None
    dynamicAllocation: dict[str, Any] | None
    batchSchedulerOptions: Placement | None
    sparkConf: dict[str, Any] | None


SparkApplication = Object[SparkSpec]


class SparkConnectRole(TypedDict, total=False):
    template: Template | None


class SparkConnectSpec(TypedDict, total=False):
    server: SparkConnectRole | None
    executor: SparkConnectRole | None
    dynamicAllocation: dict[str, Any] | None
    sparkConf: dict[str, Any] | None


SparkConnect = Object[SparkConnectSpec]


# -- Volcano ----------------------------------------------------------------------------------


class DependsOn(TypedDict, total=False):
    name: list[str] | None


class Policy(TypedDict, total=False):
    events: list[Any] | None


class Volume(TypedDict, total=False):
    mountPath: str | None


class Task(TypedDict, total=False):
    template: Template | None
    dependsOn: DependsOn | None
    policies: list[Policy] | None


class JobSpec(TypedDict, total=False):
    queue: str | None
    schedulerName: str | None
    priorityClassName: str | None
    tasks: list[Task] | None
    policies: list[Policy] | None
    plugins: dict[str, Any] | None
    volumes: list[Volume] | None


VolcanoJob = Object[JobSpec]


class PodGroupSpec(TypedDict, total=False):
    queue: str | None
    minResources: dict[str, Any] | None


PodGroup = Object[PodGroupSpec]


Queue = Object[Any]  # a Queue's spec is validated whole (``bridge.models.queue.check``)


class Command(TypedDict, total=False):
    """A bus.volcano.sh Command: no spec, its fields beside metadata (``bridge.bus`` reads them)."""

    metadata: Metadata | None
    target: dict[str, Any] | None


# -- the check --------------------------------------------------------------------------------

_MSGSPEC = re.compile(r"^Expected `(.+?)`, got `(.+?)` - at `(.+)`$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")
_JSON_TYPES = {dict: "object", list: "array", str: "str", bool: "bool", int: "int", float: "float", type(None): "null"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,62}")


def misfit(obj: Mapping[str, Any], shape: Any) -> str | None:
    """Why ``obj`` does not fit ``shape`` (``$.spec.executor: expected object, got str``), or None."""
    if shape is None:
        return None
    try:
        msgspec.convert(obj, type=shape, strict=True)
    except msgspec.ValidationError as exc:
        match = _MSGSPEC.match(str(exc))
        if match is None:
            return str(exc)
        expected, got, where = match.groups()
        return f"{_named(obj, where, got)}: expected {expected.removesuffix(' | null')}, got {got}"
    return None


def _named(obj: Any, where: str, got: str) -> str:
    """``where`` with each ``[...]`` (msgspec does not name map keys) replaced by the key whose
    value has the type ``got`` at the rest of the path; ``where`` itself if none is found."""
    steps = _STEP.findall(where.removeprefix("$"))

    def walk(node: Any, i: int) -> list[str] | None:
        if i == len(steps):
            return [] if _JSON_TYPES.get(type(node)) == got else None
        field, index = steps[i]
        if field or index:
            key: Any = field or int(index)
            ok = isinstance(node, dict) and key in node if field else isinstance(node, list) and key < len(node)
            rest = walk(node[key], i + 1) if ok else None
            return None if rest is None else [f".{field}" if field else f"[{index}]", *rest]
        for name, child in node.items() if isinstance(node, dict) else ():
            rest = walk(child, i + 1)
            if rest is not None:
                plain = isinstance(name, str) and _PLAIN_KEY.fullmatch(name)
                return [f".{name}" if plain else f"[{json.dumps(str(name)[:64])}]", *rest]
        return None

    if "[...]" not in where or len(steps) > 64:
        return where
    found = walk(obj, 0)
    return where if found is None else "$" + "".join(found)
