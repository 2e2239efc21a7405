"""Our bridge and scheduler talking to the apiserver through a fault proxy, beside simulated nodes.

``running(lc, api, proxy, name=..., prefix=..., on_cycle=..., run_seconds=..., **node)`` starts 4
simulated nodes ``<prefix>-<random>-<i>`` (``node``: their NodeSpec fields, e.g. cpu, memory,
pods; made schedulable), the bridge and a scheduler as ``name``, both through
``proxy.kubeconfig``, and yields the scheduler thread; on exit it clears the proxy's faults,
stops all three and deletes the nodes. The nodes' own runtime talks to the apiserver directly.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client as k8s

from scheduler import configure
from scheduler.io import loop
from tests.support import bridgethread, schedthread, simthread, toxiproxy
from vbridge.localcluster import cluster
from vbridge.nodesim import nodes

__all__ = ["running"]


@contextlib.contextmanager
def running(
    lc: cluster.LocalCluster,
    api: k8s.ApiClient,
    proxy: toxiproxy.Proxied,
    *,
    name: str,
    prefix: str,
    on_cycle: Callable[[loop.CycleReport], None],
    run_seconds: float,
    **node: Any,
) -> Iterator[schedthread.SchedThread]:
    specs = nodes.pool(4, prefix=f"{prefix}-{uuid.uuid4().hex[:4]}", **node)
    sim = simthread.SimThread(lc.kubeconfig, specs, default_run_seconds=run_seconds).start()
    for spec in specs:
        k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})
    bridge = bridgethread.BridgeThread(lc, scheduler_name=name, kubeconfig=proxy.kubeconfig).start()
    conf = configure.parse("", scheduler_name=name)
    sched = schedthread.SchedThread(lc, conf, kubeconfig=proxy.kubeconfig, on_cycle=on_cycle, name=f"{prefix}-sched")
    sched.start()
    try:
        yield sched
    finally:
        proxy.clear()
        sched.stop()
        bridge.stop()
        sim.stop()
        for spec in specs:
            k8s.CoreV1Api(api).delete_node(spec.name)
