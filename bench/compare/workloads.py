"""The workloads of ``bench/scheduler_compare.py``: nodes, PodGroups and pods, and the watch that times the binds."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import random
import time
from typing import Any

from bridge.k8s import client, paths, watching
from bridge.native import workloads as native_workloads
from vbridge.nodesim import nodes, simulator

PG_API = "scheduling.volcano.sh/v1beta1"
NS = "bench"
CONCURRENCY = 64  # our binder's concurrency and client connections (vbridge scheduler uses 64)
# Setup (nodes, PodGroups, pods) is not what is measured: a few connections are enough.
SETUP_CONNECTIONS = 8


GPU = "nvidia.com/gpu"
GPU_TAINT = (GPU, "true", "NoSchedule")


@dataclasses.dataclass(frozen=True)
class Kind:
    """How one group's pods look: its queue, a node selector, GPUs (which tolerate the GPU pool's
    taint), the CPUs each pod asks for."""

    queue: str = "default"
    selector: tuple[tuple[str, str], ...] = ()
    gpus: int = 0
    cpu: str = "1"


PLAIN = Kind()


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    groups: tuple[tuple[str, int], ...]  # (PodGroup name, minMember = pods in it)
    kinds: tuple[Kind, ...] = ()  # one per group; empty: every group PLAIN
    queues: tuple[tuple[str, int], ...] = ()  # (Queue name, weight) to create besides "default"
    gpu_share: float = 0.0  # share of the nodes in the tainted GPU pool

    @property
    def pods(self) -> int:
        return sum(size for _, size in self.groups)

    def kind(self, i: int) -> Kind:
        return self.kinds[i] if self.kinds else PLAIN

    def nodes(self, count: int) -> list[nodes.NodeSpec]:
        """``count`` nodes of 32 CPUs: half labelled tier=a, half tier=b; the GPU pool (8 GPUs, tainted) first."""
        gpu_nodes = round(count * self.gpu_share)
        return [
            nodes.NodeSpec(
                name=f"sim-node-{i}",
                cpu="32",
                memory="128Gi",
                pods=110,
                gpus=8 if i < gpu_nodes else 0,
                labels=(("tier", "ab"[i % 2]), ("pool", "gpu" if i < gpu_nodes else "cpu")),
                taints=(GPU_TAINT,) if i < gpu_nodes else (),
            )
            for i in range(count)
        ]


def mixed(pods: int, nodes_count: int, seed: int = 17) -> Workload:
    """About ``pods`` pods: gangs of 2–64 from three weighted queues (1:2:4) and default, a third of
    the pods single; a third of the CPU groups select tier=a; a tenth of the nodes a tainted GPU
    pool whose gangs (2–8 pods, one GPU each) tolerate it, filled to at most half its GPUs."""
    rng = random.Random(seed)
    queues = (("q1", 1), ("q2", 2), ("q4", 4))
    gpu_left = (round(nodes_count * 0.1) * 8) // 2
    groups: list[tuple[str, int]] = []
    kinds: list[Kind] = []
    made = 0
    while made < pods:
        queue = rng.choice(("default", *(q for q, _ in queues)))
        if rng.random() < 1 / 3:
            size, kind = 1, Kind(queue=queue)
        elif gpu_left >= 8 and rng.random() < 0.15:
            size = rng.choice((2, 4, 8))
            gpu_left -= size
            kind = Kind(queue=queue, gpus=1)
        else:
            size = min(rng.choice((2, 4, 8, 16, 32, 64)), max(pods - made, 2))
            kind = Kind(queue=queue, selector=(("tier", "a"),) if rng.random() < 1 / 3 else ())
        groups.append((f"m{len(groups)}", size))
        kinds.append(kind)
        made += size
    return Workload("mixed", tuple(groups), tuple(kinds), queues, gpu_share=0.1)


def pod_body(name: str, group: str | None, scheduler_name: str, kind: Kind = PLAIN) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if group is not None:
        meta["annotations"] = {"scheduling.k8s.io/group-name": group}
    requests = {"cpu": kind.cpu, "memory": "1Gi"}
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": requests}}],
    }
    if kind.selector:
        spec["nodeSelector"] = dict(kind.selector)
    if kind.gpus:
        requests[GPU] = str(kind.gpus)
        spec["containers"][0]["resources"]["limits"] = {GPU: str(kind.gpus)}
        spec["tolerations"] = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


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
        own = [{"key": k, "value": v, "effect": e} for k, v, e in specs[i].taints] or None
        await api.request("PATCH", path, body={"spec": {"taints": own}}, content_type=client.MERGE)

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
    pods = [(f"{g}-{i}", g, work.kind(j)) for j, (g, size) in enumerate(work.groups) for i in range(size)]
    uids: dict[str, str] = {}

    async def make_pg(i: int) -> None:
        name, size = work.groups[i]
        body = {
            "apiVersion": PG_API,
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": {"minMember": size, "queue": work.kind(i).queue},
        }
        await api.request("POST", pg_path, body=body)
        if native:
            full = {**body, "metadata": {"name": name, "namespace": NS}}
            for made, plural in (
                (native_workloads.workload(full), "workloads"),
                (native_workloads.podgroup(full), "podgroups"),
            ):
                await api.request("POST", paths.resource(native_workloads.API, plural, namespace=NS), body=made)

    async def make_pod(i: int) -> None:
        name, group, kind = pods[i]
        body = pod_body(name, group if gangs else None, scheduler_name, kind)
        if native:
            body["spec"] = native_workloads.stamp(body["spec"], group)
        made = await api.request("POST", pod_path, body=body)
        uids[name] = made["metadata"]["uid"]

    if gangs:
        for queue, weight in work.queues:
            await make_queue(api, queue, weight)
        await gather(len(work.groups), make_pg, SETUP_CONNECTIONS)
    await gather(len(pods), make_pod, SETUP_CONNECTIONS)
    return uids


async def make_queue(api: client.Client, name: str, weight: int) -> None:
    """An open Queue of that weight (its status set Open too: no Volcano controller runs here)."""
    body = {"apiVersion": PG_API, "kind": "Queue", "metadata": {"name": name}, "spec": {"weight": weight}}
    await api.request("POST", paths.resource(PG_API, "queues"), body=body)
    status = paths.resource(PG_API, "queues", name=name, subresource="status")
    await api.request("PATCH", status, body={"status": {"state": "Open"}}, content_type=client.MERGE)


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
