"""Scheduler end to end: pods bound per second against a real kube-apiserver, and the bind ceiling.

Starts a local control plane, registers simulated nodes (status only: no pod simulation, so the
apiserver serves the scheduler alone), creates every PodGroup and pod first (gangs of
``--gang-size`` plus single pods, each in its own minMember-1 group), then starts our scheduler
in-process and times until every pod is bound. The ceiling, measured in the same run: the same
number of pods, placements computed in advance, ``pods/binding`` POSTed as fast as the apiserver
takes them with the binder's concurrency. Prints both, the ratio, and cycle latencies.

    .venv/bin/python bench/scheduler_e2e.py [--nodes 1000] [--gangs 500] [--gang-size 10] [--singles 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from bridge.k8s import client, kubeconfigs, paths
from scheduler import configure
from scheduler.api import plan
from scheduler.io import binder, loop
from vbridge.localcluster import cluster
from vbridge.nodesim import nodes, simulator

PG_API = "scheduling.volcano.sh/v1beta1"
CONCURRENCY = 64


def _pod(name: str, group: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }


async def _gather(count: int, make: Any) -> None:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with gate:
            await make(i)

    await asyncio.gather(*(one(i) for i in range(count)))


async def _populate(api: client.Client, ns: str, groups: list[tuple[str, int]], scheduler: str) -> list[str]:
    await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    pg_path = paths.resource(PG_API, "podgroups", namespace=ns)
    pod_path = paths.resource("v1", "pods", namespace=ns)
    pods = [(f"{g}-{i}", g) for g, size in groups for i in range(size)]

    async def make_pg(i: int) -> None:
        name, size = groups[i]
        body = {"apiVersion": PG_API, "kind": "PodGroup", "metadata": {"name": name}, "spec": {"minMember": size}}
        await api.request("POST", pg_path, body=body)

    async def make_pod(i: int) -> None:
        await api.request("POST", pod_path, body=_pod(pods[i][0], pods[i][1], scheduler))

    await _gather(len(groups), make_pg)
    await _gather(len(pods), make_pod)
    return [name for name, _ in pods]


async def _ours(api: client.Client, n_pods: int) -> tuple[float, list[loop.CycleReport]]:
    """Seconds from the scheduler's first cycle until its last bind returned, and the cycles."""
    reports: list[loop.CycleReport] = []
    bound = 0
    done = asyncio.Event()
    last_bind = 0.0

    def on_cycle(report: loop.CycleReport) -> None:
        nonlocal bound, last_bind
        reports.append(report)
        bound += len(report.outcome.bound)
        if report.outcome.bound:  # the cycle started report.seconds ago
            last_bind = time.perf_counter() - report.seconds + report.bind_seconds
        if bound >= n_pods:
            done.set()

    sched = loop.Scheduler(api, configure.parse("", scheduler_name="volcano"), period=1.0, on_cycle=on_cycle)
    task = asyncio.create_task(sched.run())
    await sched.cache.synced.wait()
    t0 = time.perf_counter()
    await asyncio.wait_for(done.wait(), 900)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return last_bind - t0, reports


async def _ceiling(api: client.Client, ns: str, names: list[str], nodes_: list[str]) -> float:
    t0 = time.perf_counter()

    async def bind(i: int) -> None:
        body = binder.binding(plan.Allocate(f"{ns}/{names[i]}", "", nodes_[i % len(nodes_)]))
        del body["metadata"]["uid"]  # the ceiling skips reading pods: no UID precondition
        path = paths.resource("v1", "pods", namespace=ns, name=names[i], subresource="binding")
        await api.request("POST", path, body=body)

    await _gather(len(names), bind)
    return time.perf_counter() - t0


async def main(args: argparse.Namespace) -> None:
    groups = [(f"g{i}", args.gang_size) for i in range(args.gangs)] + [(f"s{i}", 1) for i in range(args.singles)]
    n_pods = args.gangs * args.gang_size + args.singles
    with cluster.LocalCluster() as lc:
        async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=CONCURRENCY) as api:
            specs = nodes.pool(args.nodes, cpu="32", memory="128Gi", pods=110)
            await simulator.Simulator(api, specs, workers=CONCURRENCY).register_nodes()
            names_ = [s.name for s in specs]

            async def untaint(i: int) -> None:  # nobody lifts TaintNodesByCondition's not-ready taint here
                path = paths.resource("v1", "nodes", name=names_[i])
                await api.request("PATCH", path, body={"spec": {"taints": None}}, content_type=client.MERGE)

            await _gather(len(names_), untaint)
            t0 = time.perf_counter()
            await _populate(api, "ours", groups, "volcano")
            raw = await _populate(api, "raw", groups, "nobody")
            print(f"{args.nodes} nodes; created 2 × {n_pods} pods in {time.perf_counter() - t0:.1f} s", flush=True)
            elapsed, reports = await _ours(api, n_pods)
            ceiling = await _ceiling(api, "raw", raw, names_)
    ours_rate, raw_rate = n_pods / elapsed, n_pods / ceiling
    busy = [r for r in reports if r.outcome.bound]
    print(f"ours:    {n_pods} pods bound in {elapsed:.1f} s = {ours_rate:.0f} pods/s over {len(reports)} cycles")
    print(f"ceiling: {n_pods} binds posted in {ceiling:.1f} s = {raw_rate:.0f} binds/s (concurrency {CONCURRENCY})")
    print(f"ratio:   {ours_rate / raw_rate:.2f} of the ceiling")
    if busy:
        cycle_ms = [r.bind_seconds * 1000 for r in busy]
        core_ms = [r.core_seconds * 1000 for r in busy]
        print(
            f"cycles that bound: {len(busy)}; snapshot→last bind median {statistics.median(cycle_ms):.0f} ms, "
            f"max {max(cycle_ms):.0f} ms; core (snapshot + actions) median {statistics.median(core_ms):.0f} ms"
        )


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--gangs", type=int, default=500)
    p.add_argument("--gang-size", type=int, default=10)
    p.add_argument("--singles", type=int, default=5000)
    asyncio.run(main(p.parse_args()))
