"""Sharing the cluster against a real kube-apiserver: queue weights, preemption and reclaim, for whole gangs only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, schedbed, schedthread

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]


def test_queue_weights_give_their_shares_under_contention(
    api: k8s.ApiClient, ns: str, scheduler_name: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(4, cpu="4", memory="64Gi")  # 16 cpu
    heavy, light = f"heavy-{ns}", f"light-{ns}"
    schedbed.queue(api, heavy, 3)
    schedbed.queue(api, light, 1)
    for q, prefix in ((heavy, "h"), (light, "l")):  # each queue alone wants all 16 cpu
        for i in range(16):
            schedbed.podgroup(api, ns, f"{prefix}{i}", 1, queue=q)
            schedbed.pods(api, ns, f"{prefix}{i}", 1, scheduler=scheduler_name, cpu="1")
    sched = run_scheduler()  # only now: the first cycle sees both queues' demand

    def shares() -> tuple[int, int] | None:
        placed = [n for n, p in schedbed.placement(api, ns).items() if p.spec.node_name]
        got = (sum(n.startswith("h") for n in placed), sum(n.startswith("l") for n in placed))
        return got if sum(got) == 16 else None

    got = apiserver.eventually(shares, 30, "all 16 cpu handed out")
    assert got == (12, 4)  # weights 3:1 of 16 cpu
    later = sched.cycles.next(2)
    assert not [r.outcome for r in later if r.outcome.bound or r.outcome.evicted]
    assert shares() == (12, 4)  # and it stays so


def test_preemption_evicts_for_a_whole_gang_or_not_at_all(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")  # 8 cpu
    scheduling = k8s.SchedulingV1Api(api)
    high, low = f"high-{ns}", f"low-{ns}"
    for name, value in ((high, 1000), (low, 1)):
        scheduling.create_priority_class(k8s.V1PriorityClass(metadata=k8s.V1ObjectMeta(name=name), value=value))
    try:
        sched = run_scheduler(schedbed.PREEMPT_CONF)
        name = sched.scheduler_name
        # An elastic low-priority job (minMember 1) fills the cluster.
        schedbed.podgroup(api, ns, "low", 1, priority_class=low)
        schedbed.pods(api, ns, "low", 4, scheduler=name, cpu="2", priority_class=low)
        apiserver.eventually(lambda: len(schedbed.bound(api, ns, "low")) == 4, 15, "the low job running")
        # A gang of 5 × 2 cpu can never fit in 8 cpu: nothing may be evicted for it.
        schedbed.podgroup(api, ns, "huge", 5, priority_class=high)
        huge = schedbed.keys(ns, schedbed.pods(api, ns, "huge", 5, scheduler=name, cpu="2", priority_class=high))
        apiserver.eventually(lambda: sched.sees(huge), 15, "the scheduler to see the huge gang")
        waited = sched.cycles.next(3)  # three cycles decided with the huge gang in view
        assert not [r.outcome.evicted for r in waited if r.outcome.evicted]
        placed = schedbed.placement(api, ns)
        assert all(p.metadata.deletion_timestamp is None for n, p in placed.items() if n.startswith("low"))
        assert not [e for e in schedbed.events(api, ns) if e.reason == "Preempted"]
        core = k8s.CoreV1Api(api)
        k8s.CustomObjectsApi(api).delete_namespaced_custom_object(*apiserver.PG, ns, "podgroups", "huge")
        for i in range(5):
            core.delete_namespaced_pod(f"huge-{i}", ns, grace_period_seconds=0)
        # A gang of 2 × 2 cpu fits once two low pods go: exactly two are evicted, then it binds whole.
        schedbed.podgroup(api, ns, "mid", 2, priority_class=high)
        schedbed.pods(api, ns, "mid", 2, scheduler=name, cpu="2", priority_class=high)
        apiserver.eventually(lambda: len(schedbed.bound(api, ns, "mid")) == 2, 30, "the preempting gang bound")
        preempted = {e.involved_object.name for e in schedbed.events(api, ns) if e.reason == "Preempted"}
        assert len(preempted) == 2 and all(n.startswith("low-") for n in preempted)
        placed = schedbed.placement(api, ns)
        survivors = [n for n, p in placed.items() if n.startswith("low") and p.spec.node_name]
        assert sorted(survivors) == sorted({f"low-{i}" for i in range(4)} - preempted)
    finally:
        for name in (high, low):
            scheduling.delete_priority_class(name)


def test_reclaim_takes_back_a_share_for_a_whole_gang(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")  # 8 cpu
    first, second = f"qa-{ns}", f"qb-{ns}"
    schedbed.queue(api, first, 1)
    schedbed.queue(api, second, 1)
    sched = run_scheduler(schedbed.PREEMPT_CONF)
    name = sched.scheduler_name
    schedbed.podgroup(api, ns, "elastic", 1, queue=first)  # alone, queue qa may use everything
    schedbed.pods(api, ns, "elastic", 4, scheduler=name, cpu="2")
    apiserver.eventually(
        lambda: len(schedbed.bound(api, ns, "elastic")) == 4, 15, "the elastic job filling the cluster"
    )
    schedbed.podgroup(api, ns, "gang", 2, queue=second)  # qb deserves half: 4 cpu
    schedbed.pods(api, ns, "gang", 2, scheduler=name, cpu="2")
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "gang")) == 2, 30, "the reclaiming gang bound whole")
    reclaimed = {e.involved_object.name for e in schedbed.events(api, ns) if e.reason == "Reclaimed"}
    assert len(reclaimed) == 2 and all(n.startswith("elastic-") for n in reclaimed)
