"""PodGroup bodies, and the correction of a group that exists already. Pure: every input is a parameter.

``correction(current, desired, fill_only=...)`` is what ``vbridge.controllers.podgroup_io`` writes
when a same-named group exists (its create got 409): a JSON merge patch, or ``None`` when the
group already is as we want it. We own ``OWNED_FIELDS`` of the spec: ours win over an
operator's values (the operators only re-sync minMember, which we set alike, so the two never
fight), except that an unset queue of ours never clears one. With ``fill_only`` (a user's
template, Spark or a driver made the group) only the owned fields it left empty are filled.
Every other field, label and annotation of the existing group is kept. Owner references we add
are appended; a second controller reference is demoted, since an object has one controller.
The patch carries the resourceVersion it was computed from, so a concurrent write makes it fail
with 409 instead of being overwritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import defaults, keys, quantity

__all__ = ["API_VERSION", "OWNED_FIELDS", "build", "correction", "describe", "owner_ref"]

API_VERSION = defaults.PODGROUP_API
OWNED_FIELDS = ("minMember", "minTaskMember", "minResources", "queue", "priorityClassName")


def describe(group: Mapping[str, Any]) -> str:
    """A PodGroup as Events say it: "PodGroup pi-pg: minMember 3, queue default, minResources cpu 3,
    memory 6Gi" (minTaskMember and priorityClassName when set; quantities by ``quantity.describe``)."""
    spec = group.get("spec") or {}
    parts = [f"minMember {spec.get('minMember', 1)}", f"queue {spec.get('queue') or defaults.DEFAULT_QUEUE}"]
    if spec.get("minTaskMember"):
        parts.append("minTaskMember " + ", ".join(f"{k} {v}" for k, v in sorted(spec["minTaskMember"].items())))
    if spec.get("priorityClassName"):
        parts.append(f"priorityClassName {spec['priorityClassName']}")
    parts.append(f"minResources {quantity.describe(spec.get('minResources'))}")
    return f"PodGroup {group['metadata']['name']}: {', '.join(parts)}"


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
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if min_task_member:
        spec["minTaskMember"] = dict(min_task_member)
    if min_resources:
        spec["minResources"] = dict(min_resources)
    if priority_class:
        spec["priorityClassName"] = priority_class
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": {keys.MANAGED_BY: "volcano-bridge", **(labels or {})},
    }
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": API_VERSION, "kind": "PodGroup", "metadata": meta, "spec": spec}


def _merge_value(current: Any, want: Any) -> Any:
    """A merge-patch value that makes a map exactly ``want`` (keys we do not want are nulled)."""
    if isinstance(current, dict) and isinstance(want, dict):
        return {**{k: None for k in current if k not in want}, **want}
    return want


def correction(
    current: Mapping[str, Any], desired: Mapping[str, Any], *, fill_only: bool = False
) -> dict[str, Any] | None:
    """The merge patch that makes the existing group ``current`` what ``desired`` asks; None: unchanged."""
    spec, want = current.get("spec") or {}, desired.get("spec") or {}
    if fill_only:
        patch_spec = {k: v for k, v in want.items() if k in OWNED_FIELDS and spec.get(k) in (None, {}, "")}
    else:
        patch_spec = {
            k: _merge_value(spec.get(k), want.get(k))
            for k in OWNED_FIELDS
            if spec.get(k) != want.get(k) and not (k == "queue" and want.get(k) is None)
        }
    refs = (current.get("metadata") or {}).get("ownerReferences") or []
    have = {x.get("uid") for x in refs}
    new_refs = [r for r in (desired.get("metadata") or {}).get("ownerReferences") or [] if r["uid"] not in have]
    if not patch_spec and not new_refs:
        return None
    body: dict[str, Any] = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}}
    if patch_spec:
        body["spec"] = patch_spec
    if new_refs:
        has_controller = any(r.get("controller") for r in refs)
        body["metadata"]["ownerReferences"] = refs + [
            {**r, "controller": r.get("controller", False) and not has_controller} for r in new_refs
        ]
    return body
