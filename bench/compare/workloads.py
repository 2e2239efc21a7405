"""The workloads of ``bench/scheduler_compare.py``: nodes, PodGroups and pods, and the watch that times the binds."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import time
from typing import Any

from bridge.k8s import client, paths, watching
from bridge.native import workloads as native_api
from vbridge.nodesim import nodes, simulator

PG_API = "scheduling.volcano.sh/v1beta1"
NS = "bench"
CONCURRENCY = 64  # our binder's concurrency and client connections (vbridge scheduler uses 64)
# Setup (nodes, PodGroups, pods) is not what is measured: a few connections are enough.
SETUP_CONNECTIONS = 8


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    groups: tuple[tuple[str, int], ...]  # (PodGroup name, minMember = pods in it)

    @property
    def pods(self) -> int:
        return sum(size for _, size in self.groups)


def _pod(name: str, group: str | None, scheduler_name: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }


async def gather(count: int, make: Any, concurrency: int = CONCURRENCY) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await make(i)

    await asyncio.gather(*(one(i) for i in range(count)))


async def prepare_nodes(api: client.Client, specs: list[nodes.NodeSpec]) -> None:
    await simulator.Simulator(api, specs, workers=SETUP_CONNECTIONS).register_nodes()

    async def untaint(i: int) -> None:  # nobody lifts TaintNodesByCondition's not-ready taint here
        path = paths.resource("v1", "nodes", name=specs[i].name)
        await api.request("PATCH", path, body={"spec": {"taints": None}}, content_type=client.MERGE)

    await gather(len(specs), untaint, SETUP_CONNECTIONS)


async def populate(
    api: client.Client, work: Workload, *, gangs: bool, scheduler_name: str, native: bool = False
) -> dict[str, str]:
    """Create the PodGroups (when the contender has gang semantics) and pods; pod name → UID.
    ``native``: each group's Workload and native PodGroup too (``bridge.native.workloads``), and
    the pods join it by ``spec.schedulingGroup`` (kube-scheduler's own gangs)."""
    await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NS}})
    pg_path = paths.resource(PG_API, "podgroups", namespace=NS)
    pod_path = paths.resource("v1", "pods", namespace=NS)
    pods = [(f"{g}-{i}", g) for g, size in work.groups for i in range(size)]
    uids: dict[str, str] = {}

    async def make_pg(i: int) -> None:
        name, size = work.groups[i]
        body = {
            "apiVersion": PG_API,
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": {"minMember": size, "queue": "default"},
        }
        await api.request("POST", pg_path, body=body)
        if native:
            full = {**body, "metadata": {"name": name, "namespace": NS}}
            for made, plural in ((native_api.workload(full), "workloads"), (native_api.podgroup(full), "podgroups")):
                await api.request("POST", paths.resource(native_api.API, plural, namespace=NS), body=made)

    async def make_pod(i: int) -> None:
        name, group = pods[i]
        body = _pod(name, group if gangs else None, scheduler_name)
        if native:
            body["spec"] = native_api.stamp(body["spec"], group)
        made = await api.request("POST", pod_path, body=body)
        uids[name] = made["metadata"]["uid"]

    if gangs:
        await gather(len(work.groups), make_pg, SETUP_CONNECTIONS)
    await gather(len(pods), make_pod, SETUP_CONNECTIONS)
    return uids


# -- observation ---------------------------------------------------------------------------------


class Tracker:
    """Watches the bench namespace and records when each pod is first seen with spec.nodeName."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bound: set[str] = set()
        self.first = 0.0
        self.last = 0.0
        self.synced = asyncio.Event()
        self.done = asyncio.Event()
        self.per_node: collections.Counter[str] = collections.Counter()

    async def follow(self, api: client.Client) -> None:
        async for kind, pod in watching.watch(api, paths.resource("v1", "pods", namespace=NS)):
            if kind == "SYNCED":
                self.synced.set()
                continue
            node = (pod.get("spec") or {}).get("nodeName")
            name = pod["metadata"]["name"]
            if node and name not in self.bound:
                now = time.perf_counter()
                self.first = self.first or now
                self.last = now
                self.bound.add(name)
                self.per_node[node] += 1
                if len(self.bound) >= self.total:
                    self.done.set()
