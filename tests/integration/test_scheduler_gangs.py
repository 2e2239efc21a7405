"""The scheduler against a real kube-apiserver with simulated nodes: gangs, queues, Spark, eviction, restarts.

The module runs its own control plane so node capacities are exact and no other test's pods
or nodes interfere. Each test registers its own nodes (removed afterwards) and runs its own
scheduler under a unique ``schedulerName``, so leftovers of an earlier test are never
scheduled by a later one.
"""

from __future__ import annotations

import asyncio
import collections
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge.k8s import client, kubeconfigs
from scheduler import configure
from scheduler.api import plan
from scheduler.framework import config
from scheduler.io import binder, leader, loop
from tests.integration.test_controlplane import PG, eventually
from tests.support import loopthread, simthread
from vbridge.localcluster import binaries, cluster
from vbridge.nodesim import nodes

pytestmark = pytest.mark.integration

GROUP = "scheduling.k8s.io/group-name"
PREEMPT_CONF = 'actions: "enqueue, allocate, preempt, reclaim, backfill"'


class SchedThread(loopthread.LoopThread):
    """Our scheduler on a background loop; ``reports`` collects every cycle's report."""

    def __init__(
        self, lc: cluster.LocalCluster, conf: config.SchedulerConfig, *, hook: binder.Hook | None = None
    ) -> None:
        self.reports: list[loop.CycleReport] = []
        self.scheduler_name = conf.scheduler_name
        self.scheduler: loop.Scheduler | None = None

        async def main(ready: asyncio.Event) -> None:
            async with client.Client(kubeconfigs.load(lc.kubeconfig), connections=32) as api:
                sched = loop.Scheduler(
                    api, conf, period=0.5, bind_hook=hook, on_cycle=self.reports.append, metrics_port=0
                )
                self.scheduler = sched
                task = asyncio.create_task(sched.run())
                try:
                    await sched.cache.synced.wait()
                    ready.set()
                    await task
                finally:
                    # Let the scheduler unwind (close its streams) before the client closes.
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)

        super().__init__(main, "scheduler")


@pytest.fixture(scope="module")
def lc(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[cluster.LocalCluster]:
    own = cluster.LocalCluster(tmp_path_factory.mktemp("sched-cluster"), bins=bins)
    own.start()
    try:
        yield own
    finally:
        own.stop()


@pytest.fixture(scope="module")
def api(lc: cluster.LocalCluster) -> Iterator[k8s.ApiClient]:
    out = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
    try:
        yield out
    finally:
        out.close()


@pytest.fixture
def ns(api: k8s.ApiClient) -> Iterator[str]:
    name = "sched-" + uuid.uuid4().hex[:8]
    core = k8s.CoreV1Api(api)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        # Force-remove what we made, so no PodGroup or pod lingers into the next test.
        custom = k8s.CustomObjectsApi(api)
        for pg in custom.list_namespaced_custom_object(*PG, name, "podgroups")["items"]:
            custom.delete_namespaced_custom_object(*PG, name, "podgroups", pg["metadata"]["name"])
        core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
        core.delete_namespace(name)


@pytest.fixture
def make_nodes(lc: cluster.LocalCluster, api: k8s.ApiClient) -> Iterator[Callable[..., list[str]]]:
    threads: list[simthread.SimThread] = []
    names: list[str] = []

    def make(count: int, **spec: Any) -> list[str]:
        specs = nodes.pool(count, prefix="n" + uuid.uuid4().hex[:6], **spec)
        threads.append(simthread.SimThread(lc.kubeconfig, specs).start())
        names.extend(s.name for s in specs)
        for spec in specs:
            # The TaintNodesByCondition admission plugin taints new nodes not-ready; with the node
            # lifecycle controller off, nobody lifts it. Do what that controller would.
            k8s.CoreV1Api(api).patch_node(spec.name, {"spec": {"taints": None}})
        return [s.name for s in specs]

    yield make
    for thread in threads:
        thread.stop()
    for name in names:
        k8s.CoreV1Api(api).delete_node(name)


@pytest.fixture
def scheduler_name() -> str:
    return "vb-" + uuid.uuid4().hex[:8]


@pytest.fixture
def run_scheduler(lc: cluster.LocalCluster, scheduler_name: str) -> Iterator[Callable[..., SchedThread]]:
    threads: list[SchedThread] = []

    def start(conf_text: str = "", hook: binder.Hook | None = None) -> SchedThread:
        conf = configure.parse(conf_text, scheduler_name=scheduler_name)
        thread = SchedThread(lc, conf, hook=hook)
        threads.append(thread.start())
        return thread

    yield start
    for thread in threads:
        thread.stop()


# -- object helpers ------------------------------------------------------------------------


def podgroup(
    api: k8s.ApiClient,
    ns: str,
    name: str,
    min_member: int,
    *,
    queue: str = "default",
    min_resources: dict[str, str] | None = None,
    priority_class: str | None = None,
) -> None:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if priority_class:  # job priority comes from the PodGroup, as in Volcano
        spec["priorityClassName"] = priority_class
    if min_resources:
        spec["minResources"] = min_resources
    body = {"apiVersion": "/".join(PG), "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(*PG, ns, "podgroups", body)


def pods(
    api: k8s.ApiClient,
    ns: str,
    group: str,
    count: int,
    *,
    scheduler: str,
    cpu: str = "1",
    run_seconds: float | None = None,
    priority_class: str | None = None,
    labels: dict[str, str] | None = None,
    prefix: str | None = None,
) -> list[str]:
    names = []
    for i in range(count):
        name = f"{prefix or group}-{i}"
        annotations = {GROUP: group}
        if run_seconds is not None:
            annotations["sim.vbridge.io/run-seconds"] = str(run_seconds)
        spec: dict[str, Any] = {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
        }
        if priority_class:
            spec["priorityClassName"] = priority_class
        body = {"metadata": {"name": name, "annotations": annotations, "labels": labels or {}}, "spec": spec}
        k8s.CoreV1Api(api).create_namespaced_pod(ns, body)
        names.append(name)
    return names


def placement(api: k8s.ApiClient, ns: str) -> dict[str, Any]:
    """pod name -> the pod (as a dict), for every pod in the namespace."""
    items = k8s.CoreV1Api(api).list_namespaced_pod(ns).items
    return {p.metadata.name: p for p in items}


def bound(api: k8s.ApiClient, ns: str, prefix: str) -> list[str]:
    return [n for n, p in placement(api, ns).items() if n.startswith(prefix + "-") and p.spec.node_name]


def get_pg(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*PG, ns, "podgroups", name)
    return out


def events(api: k8s.ApiClient, ns: str) -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_event(ns).items)


def queue(api: k8s.ApiClient, name: str, weight: int) -> None:
    body = {
        "apiVersion": "/".join(PG),
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight, "reclaimable": True},
    }
    k8s.CustomObjectsApi(api).create_cluster_custom_object(*PG, "queues", body)


# -- tests ---------------------------------------------------------------------------------


def test_gang_that_does_not_fit_binds_nothing_and_says_why(
    api: k8s.ApiClient, ns: str, make_nodes: Callable[..., list[str]], run_scheduler: Callable[..., SchedThread]
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")
    sched = run_scheduler()
    podgroup(api, ns, "gang", 3)
    pods(api, ns, "gang", 3, scheduler=sched_name(sched), cpu="3")  # each node holds one: 2 of 3 fit

    def unschedulable() -> dict[str, Any] | None:
        conds = (get_pg(api, ns, "gang").get("status") or {}).get("conditions") or []
        # Before the pods exist it is NotEnoughTasks; once they do, NotEnoughResources.
        return next((c for c in conds if c["type"] == "Unschedulable" and c["reason"] == "NotEnoughResources"), None)

    cond = eventually(unschedulable, 20, "an Unschedulable/NotEnoughResources condition on the PodGroup")
    assert "3/3 tasks in gang unschedulable" in cond["message"]
    assert not bound(api, ns, "gang")
    # Every pod is told why (the first cycles may have seen fewer pods: NotEnoughTasks).
    eventually(
        lambda: (
            {
                e.involved_object.name
                for e in events(api, ns)
                if e.involved_object.kind == "Pod"
                and e.type == "Warning"
                and "3/3 tasks in gang unschedulable" in e.message
            }
            == {"gang-0", "gang-1", "gang-2"}
        ),
        10,
        "a FailedScheduling event on every pod",
    )
    scheduled = [c for c in placement(api, ns)["gang-0"].status.conditions or [] if c.type == "PodScheduled"]
    assert scheduled and scheduled[0].status == "False" and scheduled[0].reason == "Unschedulable"
    assert any(e.involved_object.kind == "PodGroup" and e.reason == "Unschedulable" for e in events(api, ns))
    # Steady state: nothing changes, so cycles keep running and write nothing.
    time.sleep(1.5)
    cycles = len(sched.reports)
    time.sleep(1.5)
    quiet = sched.reports[cycles:]
    assert quiet, "the scheduler kept cycling"
    assert all(r.writes == 0 and not r.outcome.bound for r in quiet)
    assert not bound(api, ns, "gang")
    assert sched.scheduler is not None
    with httpx.Client(base_url=f"http://127.0.0.1:{sched.scheduler.metrics.port}") as http:
        assert http.get("/healthz").status_code == 200
        text = http.get("/metrics").text
    assert 'volcano_schedule_attempts_total{result="unschedulable"}' in text
    assert "volcano_e2e_scheduling_latency_milliseconds_count" in text


def sched_name(sched: SchedThread) -> str:
    return sched.scheduler_name


def test_competing_gangs_never_deadlock_and_both_finish(
    api: k8s.ApiClient, ns: str, make_nodes: Callable[..., list[str]], run_scheduler: Callable[..., SchedThread]
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")
    sched = run_scheduler()
    for gang in ("a", "b"):  # each needs 6 of the 8 cpu: they can only run in turn
        podgroup(api, ns, gang, 2)
    pods(api, ns, "a", 2, scheduler=sched_name(sched), cpu="3", run_seconds=2)
    pods(api, ns, "b", 2, scheduler=sched_name(sched), cpu="3", run_seconds=2)
    deadline = time.monotonic() + 40
    finished: set[str] = set()
    partial_since: dict[str, float] = {}
    while time.monotonic() < deadline and finished != {"a", "b"}:
        by_gang = collections.Counter(n.split("-")[0] for n in bound(api, ns, "a") + bound(api, ns, "b"))
        # A gang's binds go out together but are separate requests: a reader may catch one of
        # two bound for an instant. Stuck halfway (the deadlock) is what must never happen.
        for gang in ("a", "b"):
            if by_gang[gang] == 1:
                partial_since.setdefault(gang, time.monotonic())
                assert time.monotonic() - partial_since[gang] < 1.0, f"gang {gang} stuck half bound"
            else:
                partial_since.pop(gang, None)
        finished = {g for g in ("a", "b") if (get_pg(api, ns, g).get("status") or {}).get("phase") == "Completed"}
        time.sleep(0.1)
    state = {n: (p.spec.node_name, p.status.phase) for n, p in placement(api, ns).items()}
    pgs = {g: get_pg(api, ns, g).get("status") for g in ("a", "b")}
    assert finished == {"a", "b"}, (state, pgs)
    phases = {p.status.phase for p in placement(api, ns).values()}
    assert phases == {"Succeeded"}


def test_queue_weights_give_their_shares_under_contention(
    api: k8s.ApiClient,
    ns: str,
    scheduler_name: str,
    make_nodes: Callable[..., list[str]],
    run_scheduler: Callable[..., SchedThread],
) -> None:
    make_nodes(4, cpu="4", memory="64Gi")  # 16 cpu
    heavy, light = f"heavy-{ns}", f"light-{ns}"
    queue(api, heavy, 3)
    queue(api, light, 1)
    for q, prefix in ((heavy, "h"), (light, "l")):  # each queue alone wants all 16 cpu
        for i in range(16):
            podgroup(api, ns, f"{prefix}{i}", 1, queue=q)
            pods(api, ns, f"{prefix}{i}", 1, scheduler=scheduler_name, cpu="1")
    run_scheduler()  # only now: the first cycle sees both queues' demand

    def shares() -> tuple[int, int] | None:
        placed = [n for n, p in placement(api, ns).items() if p.spec.node_name]
        got = (sum(n.startswith("h") for n in placed), sum(n.startswith("l") for n in placed))
        return got if sum(got) == 16 else None

    got = eventually(shares, 30, "all 16 cpu handed out")
    assert got == (12, 4)  # weights 3:1 of 16 cpu
    time.sleep(1.0)
    assert shares() == (12, 4)  # and it stays so


def test_spark_executors_find_their_capacity_while_a_gang_waits(
    api: k8s.ApiClient, ns: str, make_nodes: Callable[..., list[str]], run_scheduler: Callable[..., SchedThread]
) -> None:
    make_nodes(2, cpu="8", memory="32Gi")  # 16 cpu
    sched = run_scheduler()
    app = "spark-" + uuid.uuid4().hex
    spark = {"spark-app-selector": app}
    # As spark-operator does: minMember 1, minResources = driver (2) + two executors (4 each).
    podgroup(api, ns, "spark", 1, min_resources={"cpu": "10", "memory": "6Gi"})
    pods(
        api,
        ns,
        "spark",
        1,
        scheduler=sched_name(sched),
        cpu="2",
        labels={**spark, "spark-role": "driver"},
        prefix="driver",
    )
    eventually(lambda: bound(api, ns, "driver"), 15, "the driver bound")
    eventually(lambda: placement(api, ns)["driver-0"].status.phase == "Running", 15, "the driver running")
    # A competing gang needing 8 cpu arrives: 14 are free, but 8 are owed to the executors.
    podgroup(api, ns, "rival", 2)
    pods(api, ns, "rival", 2, scheduler=sched_name(sched), cpu="4")
    time.sleep(3.0)
    assert not bound(api, ns, "rival")
    executors = {**spark, "spark-role": "executor"}
    t0 = time.monotonic()
    pods(api, ns, "spark", 2, scheduler=sched_name(sched), cpu="4", labels=executors, prefix="exec")
    eventually(lambda: len(bound(api, ns, "exec")) == 2, 15, "both executors bound")
    assert time.monotonic() - t0 < 10
    assert not bound(api, ns, "rival")  # 6 cpu left: the rival still waits, whole


def test_preemption_evicts_for_a_whole_gang_or_not_at_all(
    api: k8s.ApiClient, ns: str, make_nodes: Callable[..., list[str]], run_scheduler: Callable[..., SchedThread]
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")  # 8 cpu
    scheduling = k8s.SchedulingV1Api(api)
    high, low = f"high-{ns}", f"low-{ns}"
    for name, value in ((high, 1000), (low, 1)):
        scheduling.create_priority_class(k8s.V1PriorityClass(metadata=k8s.V1ObjectMeta(name=name), value=value))
    try:
        sched = run_scheduler(PREEMPT_CONF)
        # An elastic low-priority job (minMember 1) fills the cluster.
        podgroup(api, ns, "low", 1, priority_class=low)
        pods(api, ns, "low", 4, scheduler=sched_name(sched), cpu="2", priority_class=low)
        eventually(lambda: len(bound(api, ns, "low")) == 4, 15, "the low job running")
        # A gang of 5 × 2 cpu can never fit in 8 cpu: nothing may be evicted for it.
        podgroup(api, ns, "huge", 5, priority_class=high)
        pods(api, ns, "huge", 5, scheduler=sched_name(sched), cpu="2", priority_class=high)
        time.sleep(3.0)
        assert all(p.metadata.deletion_timestamp is None for n, p in placement(api, ns).items() if n.startswith("low"))
        assert not [e for e in events(api, ns) if e.reason == "Preempted"]
        core = k8s.CoreV1Api(api)
        k8s.CustomObjectsApi(api).delete_namespaced_custom_object(*PG, ns, "podgroups", "huge")
        for i in range(5):
            core.delete_namespaced_pod(f"huge-{i}", ns, grace_period_seconds=0)
        # A gang of 2 × 2 cpu fits once two low pods go: exactly two are evicted, then it binds whole.
        podgroup(api, ns, "mid", 2, priority_class=high)
        pods(api, ns, "mid", 2, scheduler=sched_name(sched), cpu="2", priority_class=high)
        eventually(lambda: len(bound(api, ns, "mid")) == 2, 30, "the preempting gang bound")
        preempted = {e.involved_object.name for e in events(api, ns) if e.reason == "Preempted"}
        assert len(preempted) == 2 and all(n.startswith("low-") for n in preempted)
        survivors = [n for n, p in placement(api, ns).items() if n.startswith("low") and p.spec.node_name]
        assert sorted(survivors) == sorted({f"low-{i}" for i in range(4)} - preempted)
    finally:
        for name in (high, low):
            scheduling.delete_priority_class(name)


def test_reclaim_takes_back_a_share_for_a_whole_gang(
    api: k8s.ApiClient, ns: str, make_nodes: Callable[..., list[str]], run_scheduler: Callable[..., SchedThread]
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")  # 8 cpu
    first, second = f"qa-{ns}", f"qb-{ns}"
    queue(api, first, 1)
    queue(api, second, 1)
    sched = run_scheduler(PREEMPT_CONF)
    podgroup(api, ns, "elastic", 1, queue=first)  # alone, queue qa may use everything
    pods(api, ns, "elastic", 4, scheduler=sched_name(sched), cpu="2")
    eventually(lambda: len(bound(api, ns, "elastic")) == 4, 15, "the elastic job filling the cluster")
    podgroup(api, ns, "gang", 2, queue=second)  # qb deserves half: 4 cpu
    pods(api, ns, "gang", 2, scheduler=sched_name(sched), cpu="2")
    eventually(lambda: len(bound(api, ns, "gang")) == 2, 30, "the reclaiming gang bound whole")
    reclaimed = {e.involved_object.name for e in events(api, ns) if e.reason == "Reclaimed"}
    assert len(reclaimed) == 2 and all(n.startswith("elastic-") for n in reclaimed)


def test_killed_mid_gang_leaves_no_partial_gang_and_no_double_bind(
    api: k8s.ApiClient, ns: str, make_nodes: Callable[..., list[str]], run_scheduler: Callable[..., SchedThread]
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")  # exactly room for the gang: 4 × 2 cpu
    calls = 0

    async def first_bind_only(op: plan.Allocate) -> None:
        nonlocal calls
        calls += 1
        if calls > 1:  # the scheduler "dies" with the rest of the gang's binds in flight
            await asyncio.Event().wait()

    doomed = run_scheduler(hook=first_bind_only)
    podgroup(api, ns, "gang", 4)
    pods(api, ns, "gang", 4, scheduler=sched_name(doomed), cpu="2")
    first = eventually(lambda: bound(api, ns, "gang"), 15, "the first bind")
    doomed.stop()
    assert bound(api, ns, "gang") == first and len(first) == 1  # a partial gang, as the crash left it
    node_of_first = placement(api, ns)[first[0]].spec.node_name

    run_scheduler()  # back up: same name, fresh cache
    eventually(lambda: len(bound(api, ns, "gang")) == 4, 15, "the whole gang bound after the restart")
    pods_now = placement(api, ns)
    assert pods_now[first[0]].spec.node_name == node_of_first
    per_node = collections.Counter(p.spec.node_name for p in pods_now.values())
    assert sorted(per_node.values()) == [2, 2]  # nothing counted twice, nothing overcommitted
    evs = events(api, ns)
    assert not [e for e in evs if e.reason == "FailedScheduling" and "bind" in e.message]
    scheduled = collections.Counter(e.involved_object.name for e in evs if e.reason == "Scheduled")
    assert all(count == 1 for count in scheduled.values()) and first[0] not in scheduled
    eventually(lambda: (get_pg(api, ns, "gang").get("status") or {}).get("phase") == "Running", 10, "Running")


def test_leader_election_one_leader_then_handover(lc: cluster.LocalCluster) -> None:
    async def scenario() -> None:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as api:
            name = "lease-" + uuid.uuid4().hex[:6]
            timing = {"lease_seconds": 3.0, "renew_seconds": 2.0, "retry_seconds": 0.3}
            a = leader.Elector(api, name=name, identity="a", **timing)
            b = leader.Elector(api, name=name, identity="b", **timing)
            assert await a.try_once() and a.is_leader()
            assert not await b.try_once() and not b.is_leader()  # the Lease is held and fresh
            run_b = asyncio.create_task(b.run())
            run_a = asyncio.create_task(a.run())
            await asyncio.sleep(1.0)
            assert a.is_leader() and not b.is_leader()
            run_a.cancel()  # a steps down and releases the Lease: b takes over promptly
            await asyncio.gather(run_a, return_exceptions=True)
            assert not a.is_leader()
            deadline = time.monotonic() + 3.0
            while not b.is_leader() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert b.is_leader()
            # a is back but b renews: a stays a follower (its stale write would get a 409).
            assert not await a.try_once()
            run_b.cancel()
            await asyncio.gather(run_b, return_exceptions=True)

    asyncio.run(scenario())
