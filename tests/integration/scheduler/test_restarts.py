"""Restarts against a real kube-apiserver: a scheduler killed mid-gang, and leader election's handover."""

from __future__ import annotations

import asyncio
import collections
import uuid
from collections.abc import Callable

import pytest
from kubernetes import client as k8s

from bridge.k8s import client, kubeconfigs, lease, paths
from scheduler.api import plan
from tests.support import apiserver, schedbed, schedthread
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]


def test_killed_mid_gang_leaves_no_partial_gang_and_no_double_bind(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")  # exactly room for the gang: 4 × 2 cpu
    calls = 0

    async def first_bind_only(op: plan.Allocate) -> None:
        nonlocal calls
        calls += 1
        if calls > 1:  # the scheduler "dies" with the rest of the gang's binds in flight
            await asyncio.Event().wait()

    doomed = run_scheduler(hook=first_bind_only)
    schedbed.podgroup(api, ns, "gang", 4)
    schedbed.pods(api, ns, "gang", 4, scheduler=doomed.scheduler_name, cpu="2")
    first = apiserver.eventually(lambda: schedbed.bound(api, ns, "gang"), 15, "the first bind")
    doomed.stop()
    assert schedbed.bound(api, ns, "gang") == first and len(first) == 1  # a partial gang, as the crash left it
    node_of_first = schedbed.placement(api, ns)[first[0]].spec.node_name

    run_scheduler()  # back up: same name, fresh cache
    apiserver.eventually(
        lambda: len(schedbed.bound(api, ns, "gang")) == 4, 15, "the whole gang bound after the restart"
    )
    pods_now = schedbed.placement(api, ns)
    assert pods_now[first[0]].spec.node_name == node_of_first
    per_node = collections.Counter(p.spec.node_name for p in pods_now.values())
    assert sorted(per_node.values()) == [2, 2]  # nothing counted twice, nothing overcommitted
    evs = schedbed.events(api, ns)
    assert not [e for e in evs if e.reason == "FailedScheduling" and "bind" in e.message]
    scheduled = collections.Counter(e.involved_object.name for e in evs if e.reason == "Scheduled")
    assert all(count == 1 for count in scheduled.values()) and first[0] not in scheduled
    apiserver.eventually(lambda: schedbed.phase(api, ns, "gang") == "Running", 10, "Running")


async def renewals(api: client.Client, elector: lease.Elector, count: int, timeout: float = 10.0) -> None:
    """Return once the Lease has been renewed ``count`` times, each time by ``elector``."""
    path = paths.resource(lease.API, "leases", namespace=elector.namespace, name=elector.name)
    seen: set[str] = set()

    async def watch() -> None:
        while len(seen) <= count:
            spec = (await api.request("GET", path)).get("spec") or {}
            assert spec.get("holderIdentity") == elector.identity, spec
            seen.add(str(spec.get("renewTime")))
            await asyncio.sleep(apiserver.POLL_SECONDS)

    await asyncio.wait_for(watch(), timeout)


def test_leader_election_one_leader_then_handover(lc: cluster.LocalCluster) -> None:
    async def scenario() -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            name = "lease-" + uuid.uuid4().hex[:6]
            timing = {"lease_seconds": 3.0, "renew_seconds": 2.0, "retry_seconds": 0.3}
            a = lease.Elector(api, name=name, identity="a", **timing)
            b = lease.Elector(api, name=name, identity="b", **timing)
            assert await a.try_once() and a.is_leader()
            assert not await b.try_once() and not b.is_leader()  # the Lease is held and fresh
            run_b = asyncio.create_task(b.run())
            run_a = asyncio.create_task(a.run())
            # While a renews (3 times, b trying as often), b never leads.
            await renewals(api, a, 3)
            assert a.is_leader() and not b.is_leader() and not b.changed.is_set()
            run_a.cancel()  # a steps down and releases the Lease: b takes over promptly
            await asyncio.gather(run_a, return_exceptions=True)
            assert not a.is_leader()
            await asyncio.wait_for(b.changed.wait(), 3.0)  # b's first change: it leads
            assert b.is_leader()
            # a is back but b renews: a stays a follower (its stale write would get a 409).
            assert not await a.try_once()
            run_b.cancel()
            await asyncio.gather(run_b, return_exceptions=True)

    asyncio.run(scenario())
