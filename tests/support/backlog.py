"""A backlog for the scheduler's tests: many pods of one group created and deleted fast, over our own client.

``create_pods`` POSTs ``count`` small pods (``<group>-<i>``, 10m CPU, 16Mi) with ``in_flight``
requests at a time, instead of one synchronous create after another (the kubernetes client's
pace); ``delete_pods`` deletes them so (a DeleteCollection of 10,000 pods outlasts the
apiserver's request timeout).
"""

from __future__ import annotations

import asyncio
import pathlib
from collections.abc import Callable
from typing import Any

from bridge import errors
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
    kubeconfig: pathlib.Path, ns: str, group: str, count: int, *, scheduler: str, in_flight: int = 64
) -> None:
    path = paths.resource("v1", "pods", namespace=ns)
    _each(kubeconfig, count, in_flight, lambda i: ("POST", path, pod_body(f"{group}-{i}", group, scheduler)))


def delete_pods(kubeconfig: pathlib.Path, ns: str, group: str, count: int, *, in_flight: int = 64) -> None:
    """Delete ``<group>-<i>`` for i < ``count`` at once (grace 0); those already gone are skipped."""

    def one(i: int) -> tuple[str, str, dict[str, Any]]:
        return ("DELETE", paths.resource("v1", "pods", namespace=ns, name=f"{group}-{i}"), {"gracePeriodSeconds": 0})

    _each(kubeconfig, count, in_flight, one, missing_ok=True)


def _each(
    kubeconfig: pathlib.Path,
    count: int,
    in_flight: int,
    request: Callable[[int], tuple[str, str, dict[str, Any]]],
    *,
    missing_ok: bool = False,
) -> None:
    async def main() -> None:
        gate = asyncio.Semaphore(in_flight)
        async with client.Client(kubeconfigs.load(kubeconfig), connections=in_flight) as api:

            async def one(i: int) -> None:
                method, path, body = request(i)
                async with gate:
                    try:
                        await api.request(method, path, body=body)
                    except errors.ApiError as exc:
                        if not (missing_ok and exc.status == 404):
                            raise

            await asyncio.gather(*(one(i) for i in range(count)))

    asyncio.run(main())
