"""A backlog for the scheduler's tests: many pods of one group created fast, over our own client.

``create_pods`` POSTs ``count`` small pods (``<group>-<i>``, 10m CPU, 16Mi) with ``in_flight``
requests at a time, so a 10,000-pod gang takes seconds, not the minutes one synchronous create
after another would (the kubernetes client's pace).
"""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

from bridge.k8s import client, kubeconfigs, paths
from tests.support import apiserver


def pod_body(name: str, group: str, scheduler: str) -> dict[str, Any]:
    requests = {"cpu": "10m", "memory": "16Mi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {apiserver.GROUP_NAME: group}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": requests}}],
        },
    }


def create_pods(
    kubeconfig: pathlib.Path, ns: str, group: str, count: int, *, scheduler: str, in_flight: int = 32
) -> None:
    async def main() -> None:
        path = paths.resource("v1", "pods", namespace=ns)
        gate = asyncio.Semaphore(in_flight)
        async with client.Client(kubeconfigs.load(kubeconfig), connections=in_flight) as api:

            async def one(i: int) -> None:
                async with gate:
                    await api.request("POST", path, body=pod_body(f"{group}-{i}", group, scheduler))

            await asyncio.gather(*(one(i) for i in range(count)))

    asyncio.run(main())
