"""The native backend's test bed: submit gangs as its admission leaves them, read both sides.

``submit`` creates a ``builders.native.gang`` in order (Volcano PodGroup, Workload, native
PodGroup, then the pods); ``bound`` / ``gated`` / ``phase`` / ``native_condition`` read what
kube-scheduler and our scheduler made of it; ``namespace`` is a test's namespace, its groups and
pods force-removed after.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

from kubernetes import client as k8s

from bridge import keys
from tests.builders import native
from tests.support import apiserver

__all__ = ["bound", "describe", "gated", "namespace", "native_condition", "phase", "submit", "succeeded"]

NATIVE = ("scheduling.k8s.io", "v1beta1")


@contextlib.contextmanager
def namespace(api: k8s.ApiClient, prefix: str) -> Iterator[str]:
    """A fresh namespace named ``prefix-…``; afterwards its Volcano PodGroups and pods are
    removed (pods at once) and the namespace deleted."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    core = k8s.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    custom = k8s.CustomObjectsApi(api)
    for pg in custom.list_namespaced_custom_object(*apiserver.PG, name, "podgroups")["items"]:
        custom.delete_namespaced_custom_object(*apiserver.PG, name, "podgroups", pg["metadata"]["name"])
    core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
    apiserver.eventually(lambda: not core.list_namespaced_pod(name).items, 60, "the test's pods gone")
    core.delete_namespace(name)


def submit(api: k8s.ApiClient, built: native.Gang) -> list[str]:
    """Create the gang; returns its pods' "namespace/name" keys."""
    pg, objects, pods = built
    custom = k8s.CustomObjectsApi(api)
    ns = pg["metadata"]["namespace"]
    custom.create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", pg)
    for body, plural in zip(objects, ("workloads", "podgroups"), strict=True):
        custom.create_namespaced_custom_object(*NATIVE, ns, plural, body)
    for pod in pods:
        k8s.CoreV1Api(api).create_namespaced_pod(ns, pod)
    return [f"{ns}/{p['metadata']['name']}" for p in pods]


def _pod(api: k8s.ApiClient, key: str) -> Any:
    ns, _, name = key.partition("/")
    return k8s.CoreV1Api(api).read_namespaced_pod(name, ns)


def bound(api: k8s.ApiClient, keys_: list[str]) -> list[str]:
    """The pods of ``keys_`` that have a node."""
    return [k for k in keys_ if _pod(api, k).spec.node_name]


def gated(api: k8s.ApiClient, keys_: list[str]) -> list[str]:
    """The pods of ``keys_`` that still carry our queue gate."""
    return [k for k in keys_ if any(g.name == keys.QUEUE_GATE for g in _pod(api, k).spec.scheduling_gates or [])]


def describe(api: k8s.ApiClient, keys_: list[str]) -> str:
    """Where each pod of ``keys_`` stands (node, our gate, kube-scheduler's PodScheduled), for a wait's failure."""
    out = []
    for key in keys_:
        pod = _pod(api, key)
        gates = [g.name for g in pod.spec.scheduling_gates or []]
        scheduled = next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)
        told = f"{scheduled.status} {scheduled.reason}: {scheduled.message}" if scheduled else "no PodScheduled"
        out.append(f"{key}: node={pod.spec.node_name} phase={pod.status.phase} gates={gates} {told}")
    return "; ".join(out)


def succeeded(api: k8s.ApiClient, keys_: list[str]) -> bool:
    return all(_pod(api, k).status.phase == "Succeeded" for k in keys_)


def phase(api: k8s.ApiClient, ns: str, name: str) -> str:
    """Our (Volcano) PodGroup's phase."""
    pg = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name)
    return str((pg.get("status") or {}).get("phase") or "")


def native_condition(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any] | None:
    """The native PodGroup's ``PodGroupInitiallyScheduled`` condition, if written."""
    pg = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*NATIVE, ns, "podgroups", name)
    conditions = (pg.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "PodGroupInitiallyScheduled"), None)
