"""PodGroup bodies. Pure: every input is a parameter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import defaults, keys

__all__ = ["build", "owner_ref"]

API_VERSION = defaults.PODGROUP_API


def owner_ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A controller ownerReference to ``obj`` (which must already have a UID)."""
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def build(
    *,
    name: str,
    namespace: str,
    min_member: int,
    queue: str,
    min_resources: Mapping[str, str] | None = None,
    min_task_member: Mapping[str, int] | None = None,
    priority_class: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_task_member:
        spec["minTaskMember"] = dict(min_task_member)
    if min_resources:
        spec["minResources"] = dict(min_resources)
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "apiVersion": API_VERSION,
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {keys.MANAGED_BY: "volcano-bridge", **(labels or {})},
        },
        "spec": spec,
    }
