"""A backlog never blocks scheduling (issue 31): pending pods of one gang that cannot fit (2,000 in
CI, 10,000 in the long variant: ``budget.BACKLOG_PODS``).

Four nodes of 110 pods hold 440; the gang needs all of its pods at once. The pods exist before the
scheduler starts, so its first cycle sees them all: it finds the gang unplaceable, queues a
condition and an Event for each pod and returns without writing them (they would take minutes
at the status writer's pace); the gang is parked, so the cycles after it skip it; and a two-pod
gang created meanwhile binds within a second or two.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest
from kubernetes import client as k8s

from bridge import defaults
from tests.support import apiserver, backlog, budget, schedbed, schedthread
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]
BIG = budget.BACKLOG_PODS


@pytest.mark.timeout(400)
def test_an_unplaceable_gang_of_thousands_neither_holds_a_cycle_nor_a_small_gang(
    lc: cluster.LocalCluster, api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run, scheduler_name: str
) -> None:
    make_nodes(4, cpu="32", memory="128Gi", pods=110)
    schedbed.podgroup(api, ns, "big", BIG)
    backlog.create_pods(lc.kubeconfig, ns, "big", BIG, scheduler=scheduler_name)
    try:
        _backlog_does_not_block(api, ns, run_scheduler())
    finally:
        backlog.delete_pods(lc.kubeconfig, ns, "big", BIG)


def _backlog_does_not_block(api: k8s.ApiClient, ns: str, sched: schedthread.SchedThread) -> None:
    assert sched.scheduler is not None
    writer = sched.scheduler.status
    # Its first cycle sees all BIG pods and cannot place them: it queues a write for each.
    first = apiserver.eventually(lambda: sched.reports, 60, "the first cycle")[0]
    assert first.writes >= BIG, first
    # Writing them takes BIG / STATUS_QPS seconds and more; the cycle did not wait for that.
    assert first.seconds < 5.0 < BIG / defaults.STATUS_QPS, first
    assert not first.outcome.bound  # all or nothing: none of the gang bound
    assert len(writer.queue) > BIG / 2  # and they are still being written, behind it

    # The gang is parked: the cycles after it leave it out and are short. Its backoff (1 s, then
    # doubling) may end within them once on a slow machine, and that one cycle tries it again.
    later = sched.cycles.next(3)
    parked = [r for r in later if r.parked == 1]
    assert len(parked) >= 2 and all(r.seconds < 2.0 for r in parked), later

    # A small gang created now binds at once, however long the status queue.
    start = time.monotonic()
    schedbed.podgroup(api, ns, "small", 2)
    schedbed.pods(api, ns, "small", 2, scheduler=sched.scheduler_name, cpu="10m")
    core = k8s.CoreV1Api(api)

    def small_bound() -> bool:  # read one by one: listing the namespace reads all BIG pods
        return all(core.read_namespaced_pod(f"small-{i}", ns).spec.node_name for i in range(2))

    apiserver.eventually(small_bound, 30, "the small gang bound", every=0.05)
    waited = time.monotonic() - start
    assert waited < 3.0, f"the small gang waited {waited:.1f} s behind the backlog"
    assert len(writer.queue) > 0  # the backlog's writes were still queued meanwhile
    assert not any(r.groups.get(pod) == f"{ns}/big" for r in sched.reports for pod in r.outcome.bound)

    with httpx.Client(base_url=f"http://127.0.0.1:{sched.scheduler.metrics.port}") as http:
        text = http.get("/metrics").text
    assert "vbridge_scheduler_parked_gangs 1.0" in text
    depth = next(line for line in text.splitlines() if line.startswith("vbridge_scheduler_status_queue_depth "))
    assert float(depth.split()[1]) > 0
