"""Objects as the native backend's admission and controllers leave them (API dicts, pure).

A gang is a Volcano PodGroup (our record: queue, minMember, minResources), its native
``Workload`` and ``PodGroup`` (``bridge.native.workloads``), and pods that carry the group's
annotation, ``spec.schedulingGroup`` and our queue gate (``keys.QUEUE_GATE``), with no
``schedulerName`` of ours: kube-scheduler's default places them once the gate is lifted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge import keys
from bridge.native import workloads as native_workloads
from vbridge import nodesim

__all__ = ["Gang", "gang"]

Gang = tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]  # (PodGroup, native objects, pods)


def gang(
    name: str,
    namespace: str,
    *,
    members: int,
    cpu: str,
    queue: str = "default",
    run_seconds: float | None = None,
    min_resources: Mapping[str, str] | None = None,
) -> Gang:
    """The Volcano PodGroup, [Workload, native PodGroup] and ``members`` pods of ``cpu`` each;
    minResources defaults to the members' sum; ``run_seconds``: the simulated pods then succeed."""
    total = {"cpu": str(int(float(cpu) * members))} if min_resources is None else dict(min_resources)
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": members, "queue": queue, "minResources": total},
    }
    native = [native_workloads.workload(pg), native_workloads.podgroup(pg)]
    annotations = {keys.GROUP_NAME: name}
    if run_seconds is not None:
        annotations[nodesim.RUN_SECONDS] = str(run_seconds)
    pods = []
    for i in range(members):
        spec = {
            "schedulingGates": [{"name": keys.QUEUE_GATE}],
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
        }
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{name}-{i}", "namespace": namespace, "annotations": dict(annotations)},
                "spec": native_workloads.stamp(spec, name),
            }
        )
    return pg, native, pods
