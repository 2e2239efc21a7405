"""Sound values of a PodGroup's spec, judged alike at admission and by the scheduler, the
quantities of every pod template admission takes, and the resource lists a Queue's rules
(``bridge.models.queue``, their one home) read. Pure.

Admission (``bridge.adapters.scheduling``) denies what these raise; the scheduler
(``scheduler.api.building``) meets objects that never passed admission (made while the webhook
was down, in a namespace it skips, or before the bridge was installed) and gives the group a
condition with the same message instead of failing its cycle. Each function raises
:class:`errors.InvalidObjectError` naming the field and the value, cut short.

- PodGroup: ``minMember`` and every ``minTaskMember`` a non-negative integer, ``minResources``
  quantities that parse and are not negative, ``queue`` a name.
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
from collections.abc import Mapping
from typing import Any

from bridge import errors, quantity

__all__ = ["pod_spec", "pod_template", "podgroup_spec", "quantity_at", "resource_list", "shown", "volumes"]

_SHOWN = 64  # characters of a value quoted back


def shown(value: Any) -> str:
    """``value`` as quoted back in a refusal: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _count(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise errors.InvalidObjectError(f"{what} must be a non-negative integer, got {shown(value)}")
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
        raise errors.QuantityError(f"{what} is not a quantity: {shown(raw)}") from None
    raise errors.QuantityError(f"{what} {shown(raw)} {bounds}")


def resource_list(value: Any, what: str) -> dict[str, fractions.Fraction]:
    """A ResourceList's amounts; raises for a non-map, a malformed quantity, one out of bounds or
    a negative one."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise errors.InvalidObjectError(f"{what} must map resource names to quantities, got {shown(value)}")
    out: dict[str, fractions.Fraction] = {}
    for name, raw in value.items():
        amount = quantity_at(raw, f"{what}.{name}")
        if amount < 0:
            raise errors.InvalidObjectError(f"{what}.{name} must not be negative, got {shown(raw)}")
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
        raise errors.InvalidObjectError(f"{what} must not be negative, got {shown(raw)}")


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
        raise errors.InvalidObjectError(f"PodGroup spec must be an object, got {shown(spec)}")
    if spec.get("minMember") is not None:
        _count(spec["minMember"], "spec.minMember")
    tasks = spec.get("minTaskMember")
    if tasks is not None:
        if not isinstance(tasks, Mapping):
            raise errors.InvalidObjectError(f"spec.minTaskMember must map task names to counts, got {shown(tasks)}")
        for name, count in tasks.items():
            _count(count, f"spec.minTaskMember.{name}")
    resource_list(spec.get("minResources"), "spec.minResources")
    queue = spec.get("queue")
    if queue is not None and not isinstance(queue, str):
        raise errors.InvalidObjectError(f"spec.queue must be a queue name, got {shown(queue)}")
