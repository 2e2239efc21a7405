"""Objects for the scheduler's tests against a real apiserver: PodGroups, pods, queues, and reads of them.

The pods carry the group annotation and ask for a ``scheduler`` of the test's own, so leftovers
of an earlier test are never scheduled by a later one.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client as k8s

from tests.support import apiserver

PREEMPT_CONF = 'actions: "enqueue, allocate, preempt, reclaim, backfill"'


def podgroup(
    api: k8s.ApiClient,
    ns: str,
    name: str,
    min_member: int,
    *,
    queue: str = "default",
    min_resources: dict[str, str] | None = None,
    priority_class: str | None = None,
) -> None:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if priority_class:  # job priority comes from the PodGroup, as in Volcano
        spec["priorityClassName"] = priority_class
    if min_resources:
        spec["minResources"] = min_resources
    body = {"apiVersion": "/".join(apiserver.PG), "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", body)


def pods(
    api: k8s.ApiClient,
    ns: str,
    group: str,
    count: int,
    *,
    scheduler: str,
    cpu: str = "1",
    run_seconds: float | None = None,
    priority_class: str | None = None,
    labels: dict[str, str] | None = None,
    prefix: str | None = None,
    spec: dict[str, Any] | None = None,
) -> list[str]:
    """Create ``count`` pods ``<prefix or group>-<i>`` in PodGroup ``group``; their names. ``spec``
    adds fields to each pod's spec (affinity, topologySpreadConstraints, ...)."""
    names = []
    for i in range(count):
        name = f"{prefix or group}-{i}"
        annotations = {apiserver.GROUP_NAME: group}
        if run_seconds is not None:
            annotations["sim.vbridge.io/run-seconds"] = str(run_seconds)
        body_spec: dict[str, Any] = {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
            **(spec or {}),
        }
        if priority_class:
            body_spec["priorityClassName"] = priority_class
        body = {"metadata": {"name": name, "annotations": annotations, "labels": labels or {}}, "spec": body_spec}
        k8s.CoreV1Api(api).create_namespaced_pod(ns, body)
        names.append(name)
    return names


def keys(ns: str, names: list[str]) -> set[str]:
    """The pods' keys ("namespace/name"), as the scheduler's cache and cycle reports name them."""
    return {f"{ns}/{name}" for name in names}


def placement(api: k8s.ApiClient, ns: str) -> dict[str, Any]:
    """pod name -> the pod, for every pod in the namespace."""
    items = k8s.CoreV1Api(api).list_namespaced_pod(ns).items
    return {p.metadata.name: p for p in items}


def bound(api: k8s.ApiClient, ns: str, prefix: str) -> list[str]:
    return [n for n, p in placement(api, ns).items() if n.startswith(prefix + "-") and p.spec.node_name]


def get_pg(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name)
    return out


def phase(api: k8s.ApiClient, ns: str, name: str) -> str | None:
    """The PodGroup's status phase, if it has one yet."""
    found: str | None = (get_pg(api, ns, name).get("status") or {}).get("phase")
    return found


def events(api: k8s.ApiClient, ns: str) -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_event(ns).items)


def queue(api: k8s.ApiClient, name: str, weight: int) -> None:
    body = {
        "apiVersion": "/".join(apiserver.PG),
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight, "reclaimable": True},
    }
    k8s.CustomObjectsApi(api).create_cluster_custom_object(*apiserver.PG, "queues", body)
