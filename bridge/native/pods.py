"""A pod (or a pod template) as the native backend admits it. Pure.

``stamp(pod_spec, group, ours=...)`` returns the spec with

- ``schedulingGroup.podGroupName: <group>`` (the native PodGroup, named as our Volcano one);
- the scheduling gate ``keys.QUEUE_GATE`` (added once): the group waits until its queue admits it
  (only our scheduler may lift it, and the group and queue stay as admitted: ``bridge.gates``);
- ``schedulerName`` left to kube-scheduler: ``default-scheduler`` when the pod names none, the
  default one, or ours (``ours``: manifests written for Volcano name it), else the user's.

``stamped(pod_spec)`` says whether a spec already joins a native group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys

__all__ = ["DEFAULT_SCHEDULER", "scheduler", "stamp", "stamped"]

DEFAULT_SCHEDULER = "default-scheduler"


def scheduler(current: object, ours: str) -> str:
    """The schedulerName a native pod runs under."""
    if current in (None, "", DEFAULT_SCHEDULER, ours) or not isinstance(current, str):
        return DEFAULT_SCHEDULER
    return current


def stamp(pod_spec: Mapping[str, Any], group: str, *, ours: str) -> dict[str, Any]:
    """``pod_spec`` joined to native PodGroup ``group``, gated by its queue, on kube-scheduler."""
    gates = list(pod_spec.get("schedulingGates") or [])
    if not any(g.get("name") == keys.QUEUE_GATE for g in gates):
        gates.append({"name": keys.QUEUE_GATE})
    return {
        **pod_spec,
        "schedulerName": scheduler(pod_spec.get("schedulerName"), ours),
        "schedulingGroup": {"podGroupName": group},
        "schedulingGates": gates,
    }


def stamped(pod_spec: Mapping[str, Any]) -> bool:
    return bool((pod_spec.get("schedulingGroup") or {}).get("podGroupName"))
