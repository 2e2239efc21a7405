"""A Volcano PodGroup as a native ``Workload`` and ``PodGroup`` (``scheduling.k8s.io/v1beta1``).

- ``workload(pg)``: one ``podGroupTemplate`` named :data:`TEMPLATE`; ``schedulingPolicy`` is
  ``gang: {minCount: minMember}`` for a gang (``minMember`` ≥ 2) and ``basic`` otherwise (a
  Spark driver, ``minMember`` 1, is schedulable alone, as on the Volcano path);
  ``disruptionMode: all`` for a gang (preempted whole), the PodGroup's PriorityClass, and
  ``controllerRef`` naming the job that owns the PodGroup.
- ``podgroup(pg)``: the runtime group that pods join, ``workloadRef`` to that template, the same
  policy, disruption mode and priority (kube-scheduler reads them from the PodGroup).
- ``stamp(pod_spec, name)``: the pod spec with ``schedulingGroup.podGroupName`` (immutable once
  the pod exists, so it is set at admission).

Names and namespace are the Volcano PodGroup's; owner references are copied, so the native
objects go with the job as the Volcano PodGroup does.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["API", "TEMPLATE", "podgroup", "policy", "stamp", "workload"]

API = "scheduling.k8s.io/v1beta1"
TEMPLATE = "gang"


def policy(min_member: int) -> dict[str, Any]:
    """The native scheduling policy for a group of ``min_member``."""
    return {"gang": {"minCount": min_member}} if min_member >= 2 else {"basic": {}}


def _meta(pg: dict[str, Any]) -> dict[str, Any]:
    src = pg["metadata"]
    meta: dict[str, Any] = {"name": src["name"], "namespace": src["namespace"]}
    if src.get("ownerReferences"):
        meta["ownerReferences"] = copy.deepcopy(src["ownerReferences"])
    if src.get("labels"):
        meta["labels"] = dict(src["labels"])
    return meta


def _common(pg: dict[str, Any]) -> dict[str, Any]:
    spec = pg.get("spec") or {}
    min_member = int(spec.get("minMember") or 1)
    out: dict[str, Any] = {"schedulingPolicy": policy(min_member)}
    if min_member >= 2:
        out["disruptionMode"] = {"all": {}}
    if spec.get("priorityClassName"):
        out["priorityClassName"] = spec["priorityClassName"]
    return out


def workload(pg: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"podGroupTemplates": [{"name": TEMPLATE, **_common(pg)}]}
    owner = next((o for o in pg["metadata"].get("ownerReferences") or [] if o.get("controller")), None)
    if owner is not None:
        group = owner["apiVersion"].rpartition("/")[0]
        spec["controllerRef"] = {"apiGroup": group, "kind": owner["kind"], "name": owner["name"]}
    return {"apiVersion": API, "kind": "Workload", "metadata": _meta(pg), "spec": spec}


def podgroup(pg: dict[str, Any]) -> dict[str, Any]:
    ref = {"workloadName": pg["metadata"]["name"], "templateName": TEMPLATE}
    return {"apiVersion": API, "kind": "PodGroup", "metadata": _meta(pg), "spec": {"workloadRef": ref, **_common(pg)}}


def stamp(pod_spec: dict[str, Any], name: str) -> dict[str, Any]:
    return {**pod_spec, "schedulingGroup": {"podGroupName": name}}
