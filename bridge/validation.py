"""Sound values of a PodGroup's and a Queue's spec, judged alike at admission and by the scheduler,
and the quantities of every pod template admission takes. Pure.

Admission (``bridge.adapters.scheduling``) denies what these raise; the scheduler
(``scheduler.api.building``) meets objects that never passed admission (made while the webhook
was down, in a namespace it skips, or before the bridge was installed) and gives the group a
condition with the same message instead of failing its cycle. Each function raises
:class:`errors.InvalidObjectError` naming the field and the value, cut short.

- PodGroup: ``minMember`` and every ``minTaskMember`` a non-negative integer, ``minResources``
  quantities that parse and are not negative, ``queue`` a name.
- Queue: ``weight`` a positive integer, ``capability``, ``deserved`` and ``guarantee.resource``
  quantities that parse and are not negative, guarantee and deserved at most the capability
  in each resource the capability names, a ``parent`` that is not the queue itself and (when
  the known queues are given, at admission) exists. Hierarchy sums are the scheduler's to judge.
- Pod templates (:func:`pod_template`, :func:`pod_spec`; every job kind's adapter calls them
  for each template, the pod adapters for the pod): every quantity (containers' and init
  containers' requests and limits, pod-level resources, overhead, an emptyDir's sizeLimit, an
  ephemeral volume's claim) within what apimachinery keeps as written (``quantity.bounded``:
  "1e-999999999" would hold kube-apiserver's CPU on every pod create), and not negative.

Every quantity is read by ``quantity.bounded``, so the scheduler holds a group whose amounts
admission would have refused instead of clamping them. Errors name the field path.
"""

from __future__ import annotations

import fractions
from collections.abc import Collection, Mapping
from typing import Any

from bridge import defaults, errors, quantity

__all__ = ["pod_spec", "pod_template", "podgroup_spec", "quantity_at", "queue_spec", "resource_list", "volumes"]

_SHOWN = 64  # characters of a value quoted back


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _count(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise errors.InvalidObjectError(f"{what} must be a non-negative integer, got {_shown(value)}")
    return value


def quantity_at(raw: Any, what: str) -> fractions.Fraction:
    """The amount of the quantity at field ``what``; raises naming the field for a malformed one
    or one out of apimachinery's bounds (``quantity.bounded``)."""
    try:
        return quantity.bounded(raw)
    except errors.QuantityError as exc:
        bounds = exc
    try:
        quantity.parse(raw)  # well formed: out of bounds
    except (errors.QuantityError, ValueError, OverflowError):
        raise errors.QuantityError(f"{what} is not a quantity: {_shown(raw)}") from None
    raise errors.QuantityError(f"{what} {_shown(raw)} {bounds}")


def resource_list(value: Any, what: str) -> dict[str, fractions.Fraction]:
    """A ResourceList's amounts; raises for a non-map, a malformed quantity, one out of bounds or
    a negative one."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise errors.InvalidObjectError(f"{what} must map resource names to quantities, got {_shown(value)}")
    out: dict[str, fractions.Fraction] = {}
    for name, raw in value.items():
        amount = quantity_at(raw, f"{what}.{name}")
        if amount < 0:
            raise errors.InvalidObjectError(f"{what}.{name} must not be negative, got {_shown(raw)}")
        out[str(name)] = amount
    return out


def _requirements(value: Any, what: str) -> None:
    """A ResourceRequirements (``requests``, ``limits``), where there is one."""
    if isinstance(value, Mapping):
        for part in ("requests", "limits"):
            resource_list(value.get(part), f"{what}.{part}")


def _each(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    return [(i, item) for i, item in enumerate(value) if isinstance(item, Mapping)] if isinstance(value, list) else []


def volumes(value: Any, what: str) -> None:
    """The quantities of a list of pod volumes: an emptyDir's ``sizeLimit``, an ephemeral
    volume's claim, and a Volcano Job's ``volumeClaim`` (a PVC spec)."""
    for i, volume in _each(value):
        where = f"{what}[{i}]"
        empty = volume.get("emptyDir")
        if isinstance(empty, Mapping) and empty.get("sizeLimit") is not None:
            _non_negative(empty["sizeLimit"], f"{where}.emptyDir.sizeLimit")
        claim = ((volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}).get("spec")
        if isinstance(claim, Mapping):
            _requirements(claim.get("resources"), f"{where}.ephemeral.volumeClaimTemplate.spec.resources")
        claim = volume.get("volumeClaim")
        if isinstance(claim, Mapping):
            _requirements(claim.get("resources"), f"{where}.volumeClaim.resources")


def _non_negative(raw: Any, what: str) -> None:
    if quantity_at(raw, what) < 0:
        raise errors.InvalidObjectError(f"{what} must not be negative, got {_shown(raw)}")


def pod_spec(spec: Any, what: str) -> None:
    """Every quantity of a PodSpec at field ``what`` (see the module); a spec that is not an
    object is left to the kind's own checks."""
    if not isinstance(spec, Mapping):
        return
    for field in ("initContainers", "containers"):
        for i, container in _each(spec.get(field)):
            _requirements(container.get("resources"), f"{what}.{field}[{i}].resources")
    _requirements(spec.get("resources"), f"{what}.resources")
    resource_list(spec.get("overhead"), f"{what}.overhead")
    volumes(spec.get("volumes"), f"{what}.volumes")


def pod_template(template: Any, what: str) -> None:
    """Every quantity of a PodTemplateSpec at field ``what``."""
    if isinstance(template, Mapping):
        pod_spec(template.get("spec"), f"{what}.spec")


def podgroup_spec(spec: Any) -> None:
    if not isinstance(spec, Mapping):
        raise errors.InvalidObjectError(f"PodGroup spec must be an object, got {_shown(spec)}")
    if spec.get("minMember") is not None:
        _count(spec["minMember"], "spec.minMember")
    tasks = spec.get("minTaskMember")
    if tasks is not None:
        if not isinstance(tasks, Mapping):
            raise errors.InvalidObjectError(f"spec.minTaskMember must map task names to counts, got {_shown(tasks)}")
        for name, count in tasks.items():
            _count(count, f"spec.minTaskMember.{name}")
    resource_list(spec.get("minResources"), "spec.minResources")
    queue = spec.get("queue")
    if queue is not None and not isinstance(queue, str):
        raise errors.InvalidObjectError(f"spec.queue must be a queue name, got {_shown(queue)}")


def _at_most(small: Mapping[str, fractions.Fraction], cap: Mapping[str, fractions.Fraction], what: str) -> None:
    for name, amount in sorted(small.items()):
        if name in cap and amount > cap[name]:
            binary = name in ("memory", "ephemeral-storage") or name.startswith("hugepages-")
            raise errors.InvalidObjectError(
                f"{what} {name} {quantity.format_human(amount, binary=binary)} is above the capability "
                f"{quantity.format_human(cap[name], binary=binary)}: it could never be given"
            )


def queue_spec(name: str, spec: Any, *, known: Collection[str] | None = None) -> None:
    """``known``: every queue's name (admission), so a missing parent is refused; None: not checked."""
    if spec is None:
        return
    if not isinstance(spec, Mapping):
        raise errors.InvalidObjectError(f"Queue spec must be an object, got {_shown(spec)}")
    weight = spec.get("weight")
    if weight is not None and (not isinstance(weight, int) or isinstance(weight, bool) or weight < 1):
        raise errors.InvalidObjectError(f"spec.weight must be a positive integer, got {_shown(weight)}")
    priority = spec.get("priority")
    if priority is not None:
        _count(priority, "spec.priority")
    capability = resource_list(spec.get("capability"), "spec.capability")
    deserved = resource_list(spec.get("deserved"), "spec.deserved")
    guarantee_spec = spec.get("guarantee")
    if guarantee_spec is not None and not isinstance(guarantee_spec, Mapping):
        raise errors.InvalidObjectError(f"spec.guarantee must be an object, got {_shown(guarantee_spec)}")
    guarantee = resource_list((guarantee_spec or {}).get("resource"), "spec.guarantee.resource")
    _at_most(guarantee, capability, "spec.guarantee")
    _at_most(deserved, capability, "spec.deserved")
    parent = spec.get("parent")
    if parent in (None, ""):
        return
    if not isinstance(parent, str):
        raise errors.InvalidObjectError(f"spec.parent must be a queue name, got {_shown(parent)}")
    if parent == name:
        raise errors.InvalidObjectError(f"spec.parent names the queue itself ({name!r}): a queue cannot parent itself")
    if known is not None and parent != defaults.ROOT_QUEUE and parent not in known:
        raise errors.InvalidObjectError(f"spec.parent {parent!r} does not exist: create the parent queue first")
