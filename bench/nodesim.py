"""Node simulator throughput: pods moved to Running per second at 1,000 nodes (10,000 pods).

What it measures, its anchor and its flags: bench/README.md.

    .venv/bin/python bench/nodesim.py [--nodes 1000] [--pods 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bridge.k8s import client, kubeconfigs, paths
from vbridge.localcluster import cluster
from vbridge.nodesim import nodes, podstatus, simulator


def _pod(i: int, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{i}", "labels": {"bench": "nodesim"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
    }


async def _create(api: client.Client, ns: str, count: int, names: list[str], offset: int = 0) -> None:
    gate = asyncio.Semaphore(64)
    base = paths.resource("v1", "pods", namespace=ns)

    async def one(i: int) -> None:
        async with gate:
            await api.request("POST", base, body=_pod(offset + i, names[i % len(names)]))

    await asyncio.gather(*(one(i) for i in range(count)))


async def _count_running(api: client.Client, ns: str) -> int:
    items = await api.request("GET", paths.resource("v1", "pods", namespace=ns), params={"limit": 100000})
    return sum(1 for p in items["items"] if p.get("status", {}).get("phase") == "Running")


async def main(n_nodes: int, n_pods: int) -> None:
    with cluster.LocalCluster() as lc:
        async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=64) as api:
            specs = nodes.pool(n_nodes, cpu="64", memory="256Gi", pods=250)
            names = [s.name for s in specs]
            for ns in ("sim", "raw"):
                await api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
            sim = simulator.Simulator(api, specs, workers=64)
            t0 = time.perf_counter()
            await sim.register_nodes()
            t_nodes = time.perf_counter() - t0
            print(f"registered {n_nodes} nodes in {t_nodes:.1f} s ({n_nodes / t_nodes:.0f} nodes/s)", flush=True)

            # Anchor: raw status writes, no simulator.
            await _create(api, "raw", n_pods, names)
            listing = await api.request("GET", paths.resource("v1", "pods", namespace="raw"), params={"limit": 100000})
            gate = asyncio.Semaphore(64)

            async def raw(pod: dict[str, Any]) -> None:
                async with gate:
                    body = podstatus.running(pod, pod_ip="10.1.0.1", host_ip="172.30.0.1", now="2026-01-01T00:00:00Z")
                    path = paths.resource("v1", "pods", namespace="raw", name=pod["metadata"]["name"])
                    await api.request("PATCH", f"{path}/status", body=body, content_type=client.STRATEGIC)

            t0 = time.perf_counter()
            await asyncio.gather(*(raw(p) for p in listing["items"]))
            raw_rate = n_pods / (time.perf_counter() - t0)
            print(f"anchor: raw status PATCH ceiling {raw_rate:.0f} pods/s", flush=True)

            await _create(api, "sim", n_pods, names, offset=n_pods)
            t0 = time.perf_counter()
            task = asyncio.create_task(sim.serve())
            last = -1
            while sim.stats.running < n_pods:
                await asyncio.sleep(0.5)
                if sim.stats.running != last:
                    last = sim.stats.running
                    print(f"  {last}/{n_pods} Running", flush=True)
                if time.perf_counter() - t0 > 600:
                    break
            elapsed = time.perf_counter() - t0
            task.cancel()
            confirmed = await _count_running(api, "sim")
            rate = sim.stats.running / elapsed
            print(
                f"simulator: {sim.stats.running} pods to Running in {elapsed:.1f} s = {rate:.0f} pods/s "
                f"(API confirms {confirmed} Running; errors {sim.stats.errors}) at {n_nodes} nodes"
            )
            print(f"ratio simulator/anchor: {rate / raw_rate:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    args = parser.parse_args()
    asyncio.run(main(args.nodes, args.pods))
