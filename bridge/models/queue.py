"""Queue ``scheduling.volcano.sh/v1beta1`` (cluster-scoped): schema-compatible with Volcano's CRD,
and the one home of the Queue's rules.

Each rule is stated once here and read by every surface, so they cannot disagree: the model's
fields (and so the CRD ``bridge.crdgen`` writes), :func:`check` (admission,
``bridge.adapters.scheduling.queue``, and the scheduler's hold on an unsound queue,
``scheduler.api.building``) and ``vbridge queue create`` (``vbridge.commands.jobs``). Upstream's
CRD and webhook say the same: ``weight`` 1 to 65535 (default 1), ``priority`` at least 0,
``parent`` a DNS subdomain, ``capability``, ``deserved`` and ``guarantee.resource`` quantities
that are not negative, guarantee and deserved at most the capability in each resource it names;
``reclaimable`` is a bool and has no bound.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Annotated, Any, Literal

import pydantic

from bridge import defaults, errors, quantity, validation
from bridge.models import base as model_base

__all__ = [
    "AMOUNTS",
    "CRD",
    "NAME_MAX",
    "NAME_PATTERN",
    "PRIORITY",
    "WEIGHT",
    "Cluster",
    "Guarantee",
    "NodeGroupAffinityTerms",
    "Priority",
    "QueueAffinity",
    "QueueSpec",
    "QueueStatus",
    "Reservation",
    "State",
    "Weight",
    "check",
]

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
NAME_MAX = 253
WEIGHT = model_base.Whole("spec.weight", 1, 65535)
PRIORITY = model_base.Whole("spec.priority", 0)
AMOUNTS = ("spec.capability", "spec.deserved", "spec.guarantee.resource")  # not negative
State = Literal["Open", "Closed", "Closing", "Unknown"]


def _amounts(path: str) -> Any:
    """The model's check of the resource list at ``path``: :func:`check`'s message."""

    def amounts(value: Any) -> Any:
        try:
            validation.resource_list(value, path)
        except errors.InvalidObjectError as exc:
            raise ValueError(str(exc)) from None
        return value

    return pydantic.BeforeValidator(amounts)


Weight = Annotated[model_base.Int32, WEIGHT.bounds, WEIGHT.validator]
Priority = Annotated[model_base.Int32, PRIORITY.bounds, PRIORITY.validator]


class Guarantee(model_base.K8sModel):
    resource: Annotated[model_base.ResourceList | None, _amounts(AMOUNTS[2])] = None


class NodeGroupAffinityTerms(model_base.K8sModel):
    required_during_scheduling_ignored_during_execution: list[str] | None = None
    preferred_during_scheduling_ignored_during_execution: list[str] | None = None


class QueueAffinity(model_base.K8sModel):
    node_group_affinity: NodeGroupAffinityTerms | None = None
    node_group_anti_affinity: NodeGroupAffinityTerms | None = None


class Cluster(model_base.K8sModel):
    name: str | None = None
    weight: model_base.Int32 | None = None
    capacity: model_base.ResourceList | None = None


class QueueSpec(model_base.K8sModel):
    weight: Weight = 1
    capability: Annotated[model_base.ResourceList | None, _amounts(AMOUNTS[0])] = None
    reclaimable: bool | None = None
    guarantee: Guarantee | None = None
    deserved: Annotated[model_base.ResourceList | None, _amounts(AMOUNTS[1])] = None
    parent: str | None = pydantic.Field(default=None, max_length=NAME_MAX, pattern=NAME_PATTERN)
    affinity: QueueAffinity | None = None
    priority: Priority | None = None
    dequeue_strategy: Literal["fifo", "traverse"] = "traverse"
    extend_clusters: list[Cluster] | None = None
    type: str | None = pydantic.Field(default=None, max_length=253)


class Reservation(model_base.K8sModel):
    nodes: list[str] | None = None
    resource: model_base.ResourceList | None = None


class QueueStatus(model_base.K8sModel):
    state: State | None = None
    pending: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    inqueue: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    running: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    unknown: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    completed: model_base.Int32 | None = pydantic.Field(default=None, ge=0)
    allocated: model_base.ResourceList | None = None
    reservation: Reservation | None = None


CRD = model_base.CrdInfo(
    group="scheduling.volcano.sh",
    version="v1beta1",
    kind="Queue",
    plural="queues",
    singular="queue",
    short_names=("q", "queue-v1beta1"),
    namespaced=False,
    status_subresource=True,
    columns=(
        model_base.PrinterColumn("PARENT", ".spec.parent", "string"),
        model_base.PrinterColumn("STATE", ".status.state", "string", priority=1),
        model_base.PrinterColumn("WEIGHT", ".spec.weight", "integer", priority=1),
    ),
    spec_model=QueueSpec,
    status_model=QueueStatus,
)


def _at_most(small: Mapping[str, Any], cap: Mapping[str, Any], what: str) -> None:
    for name, amount in sorted(small.items()):
        if name in cap and amount > cap[name]:
            binary = name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")
            raise errors.InvalidObjectError(
                f"{what} {name} {quantity.format_human(amount, binary=binary)} is above the capability "
                f"{quantity.format_human(cap[name], binary=binary)}: it could never be given"
            )


def check(name: str, spec: Any, *, known: Collection[str] | None = None) -> None:
    """Raises :class:`errors.InvalidObjectError` for the first rule ``spec`` (queue ``name``'s)
    breaks, naming the field and the value. ``known``: every queue's name (admission), so a
    missing parent is refused; None: not checked. Hierarchy sums are the scheduler's to judge."""
    if spec is None:
        return
    if not isinstance(spec, Mapping):
        raise errors.InvalidObjectError(f"Queue spec must be an object, got {validation.shown(spec)}")
    for rule in (WEIGHT, PRIORITY):
        value = spec.get(rule.path.removeprefix("spec."))
        if value is not None and (why := rule.refusal(value)) is not None:
            raise errors.InvalidObjectError(why)
    capability = validation.resource_list(spec.get("capability"), AMOUNTS[0])
    deserved = validation.resource_list(spec.get("deserved"), AMOUNTS[1])
    guarantee_spec = spec.get("guarantee")
    if guarantee_spec is not None and not isinstance(guarantee_spec, Mapping):
        raise errors.InvalidObjectError(f"spec.guarantee must be an object, got {validation.shown(guarantee_spec)}")
    guarantee = validation.resource_list((guarantee_spec or {}).get("resource"), AMOUNTS[2])
    _at_most(guarantee, capability, "spec.guarantee")
    _at_most(deserved, capability, "spec.deserved")
    _parent(name, spec.get("parent"), known)


def _parent(name: str, parent: Any, known: Collection[str] | None) -> None:
    if parent in (None, ""):
        return
    if not isinstance(parent, str) or len(parent) > NAME_MAX or not re.fullmatch(NAME_PATTERN, parent):
        raise errors.InvalidObjectError(f"spec.parent must be a queue name, got {validation.shown(parent)}")
    if parent == name:
        raise errors.InvalidObjectError(f"spec.parent names the queue itself ({name!r}): a queue cannot parent itself")
    if known is not None and parent != defaults.ROOT_QUEUE and parent not in known:
        raise errors.InvalidObjectError(f"spec.parent {parent!r} does not exist: create the parent queue first")
