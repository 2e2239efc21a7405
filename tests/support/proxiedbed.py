"""Our bridge and scheduler talking to the apiserver through a fault proxy, beside simulated nodes.

``running(lc, api, proxy, name=..., prefix=..., run_seconds=..., count=4, on_cycle=None, **node)``
starts ``count`` simulated nodes ``<prefix>-<random>-<i>`` (``node``: their NodeSpec fields, e.g.
cpu, memory, pods; made schedulable), the bridge and a scheduler as ``name``, both through
``proxy.kubeconfig`` (Toxiproxy's or ``faultproxy``'s: anything ``Proxy`` describes), and yields
a ``Bed`` (the scheduler thread, the node names); on exit it clears the proxy's faults, stops
all three and deletes the nodes. The nodes' own runtime talks to the apiserver directly.
``nodes_and_bridge`` is the same without the scheduler, for a test that runs its own.
"""

from __future__ import annotations

import contextlib
import pathlib
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Protocol

from kubernetes import client as k8s

from scheduler import configure
from scheduler.io import loop
from tests.support import bridgethread, schedthread, simthread
from vbridge.localcluster import cluster
from vbridge.nodesim import nodes

__all__ = ["Bed", "Proxy", "nodes_and_bridge", "running"]


class Proxy(Protocol):
    kubeconfig: pathlib.Path

    def clear(self) -> None: ...


class Bed(NamedTuple):
    sched: schedthread.SchedThread
    nodes: list[str]


@contextlib.contextmanager
def nodes_and_bridge(
    lc: cluster.LocalCluster,
    api: k8s.ApiClient,
    kubeconfig: pathlib.Path,
    *,
    name: str,
    prefix: str,
    run_seconds: float | None = None,
    count: int = 4,
    **node: Any,
) -> Iterator[list[str]]:
    """``count`` simulated nodes (made schedulable; their runtime talks to the apiserver
    directly) and the bridge for scheduler ``name`` through ``kubeconfig``; yields the node
    names, and on exit stops both and deletes the nodes."""
    specs = nodes.pool(count, prefix=f"{prefix}-{uuid.uuid4().hex[:4]}", **node)
    extra = {} if run_seconds is None else {"default_run_seconds": run_seconds}
    sim = simthread.SimThread(lc.kubeconfig, specs, **extra).start()
    for spec in specs:
        k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})
    bridge = bridgethread.BridgeThread(lc, scheduler_name=name, kubeconfig=kubeconfig).start()
    try:
        yield [spec.name for spec in specs]
    finally:
        bridge.stop()
        sim.stop()
        for spec in specs:
            k8s.CoreV1Api(api).delete_node(spec.name)


@contextlib.contextmanager
def running(
    lc: cluster.LocalCluster,
    api: k8s.ApiClient,
    proxy: Proxy,
    *,
    name: str,
    prefix: str,
    run_seconds: float,
    count: int = 4,
    on_cycle: Callable[[loop.CycleReport], None] | None = None,
    **node: Any,
) -> Iterator[Bed]:
    with nodes_and_bridge(
        lc, api, proxy.kubeconfig, name=name, prefix=prefix, run_seconds=run_seconds, count=count, **node
    ) as names:
        conf = configure.parse("", scheduler_name=name)
        sched = schedthread.SchedThread(
            lc, conf, kubeconfig=proxy.kubeconfig, on_cycle=on_cycle, name=f"{prefix}-sched"
        )
        sched.start()
        try:
            yield Bed(sched, names)
        finally:
            proxy.clear()
            sched.stop()
