"""Volcano's reclaim and queue tree on top of kube-scheduler, on a real control plane.

One control plane with the Workload API (``LocalCluster(native_gangs=True)``), two simulated
nodes of 4 cpu, kube-scheduler 1.37 as ``default-scheduler``; each test runs our scheduler on
the native backend with its own conf (``configure.parse(conf, backend="native")``): reclaim
evicts whole gangs of the queue above its share and admits the waiting one, which
kube-scheduler then binds; with the capacity plugin's tree every level is held to its share at
admission. The same control plane answers ``bridge.k8s.backends.resolve`` for ``auto``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from bridge.k8s import client, kubeconfigs
from scheduler import configure
from tests.builders import native
from tests.support import apiserver, nativebed, nativegangs, schedthread
from vbridge.controllers import native as native_controller
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration
RECLAIM = 'actions: "enqueue, allocate, reclaim"'
TREE = (
    'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n'
    "- plugins: [{name: overcommit, arguments: {overcommit-factor: 2.0}}, {name: predicates},"
    " {name: capacity, enableHierarchy: true}]\n"
)  # ×2 overcommit: the cluster would admit 16 cpu, so what holds eng-a back is the tree


@pytest.fixture(scope="module")
def bed(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[cluster.LocalCluster, k8s.ApiClient]]:
    with nativebed.plane(bins, tmp_path_factory.mktemp("native-reclaim"), prefix="nr", nodes_count=2) as out:
        yield out


@pytest.fixture
def plane(bed: tuple[cluster.LocalCluster, k8s.ApiClient]) -> cluster.LocalCluster:
    return bed[0]


@pytest.fixture
def api(bed: tuple[cluster.LocalCluster, k8s.ApiClient]) -> k8s.ApiClient:
    return bed[1]


@pytest.fixture
def ns(api: k8s.ApiClient) -> Iterator[str]:
    with nativegangs.namespace(api, "nr") as name:
        yield name


def ours(plane: cluster.LocalCluster, conf: str) -> schedthread.SchedThread:
    return schedthread.SchedThread(plane, configure.parse(conf, backend="native")).start()


def queue(api: k8s.ApiClient, name: str, **spec: object) -> str:
    """A Queue, Closed until ``state(…, "Open")``: the first cycle that admits sees all demand."""
    custom = k8s.CustomObjectsApi(api)
    body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
    custom.create_cluster_custom_object(*apiserver.PG, "queues", {**body, "spec": {"weight": 1, **spec}})
    state(api, name, "Closed")
    return name


def state(api: k8s.ApiClient, name: str, value: str) -> None:
    k8s.CustomObjectsApi(api).patch_cluster_custom_object_status(
        *apiserver.PG, "queues", name, {"status": {"state": value}}
    )


def existing(api: k8s.ApiClient, keys_: list[str]) -> list[str]:
    core = k8s.CoreV1Api(api)
    names = {f"{p.metadata.namespace}/{p.metadata.name}" for p in core.list_pod_for_all_namespaces().items}
    return [k for k in keys_ if k in names]


def test_reclaim_evicts_whole_gangs_until_the_other_queue_has_its_share(
    plane: cluster.LocalCluster, api: k8s.ApiClient, ns: str
) -> None:
    sched = ours(plane, RECLAIM)
    try:
        qa, qb = queue(api, f"{ns}-a"), queue(api, f"{ns}-b")
        state(api, qa, "Open")
        gangs = {
            f"a{i}": nativegangs.submit(api, native.gang(f"a{i}", ns, members=2, cpu="1", queue=qa)) for i in range(4)
        }
        every_a = [k for keys_ in gangs.values() for k in keys_]
        apiserver.eventually(  # qa alone deserves the whole 8 cpu
            lambda: len(nativegangs.bound(api, every_a)) == 8 or None,
            90,
            lambda: f"qa fills the cluster; {nativegangs.describe(api, every_a)}",
        )
        claim = [
            k for i in range(2) for k in nativegangs.submit(api, native.gang(f"b{i}", ns, members=2, cpu="1", queue=qb))
        ]
        apiserver.eventually(lambda: sched.sees(claim), 30, "our cache to hold qb's gangs")
        state(api, qb, "Open")
        apiserver.eventually(  # equal weights: qb deserves 4, reclaimed from qa whole gang by whole gang
            lambda: len(nativegangs.bound(api, claim)) == 4 or None,
            120,
            lambda: f"qb's gangs bound; {nativegangs.describe(api, existing(api, claim + every_a))}",
        )
        sched.cycles.next(2)
        left = {name: existing(api, keys_) for name, keys_ in gangs.items()}
        assert sorted(len(v) for v in left.values()) == [0, 0, 2, 2], left  # two gangs gone whole, none in part
        for name, keys_ in left.items():
            assert nativegangs.bound(api, keys_) == keys_, f"{name}: {nativegangs.describe(api, keys_)}"
            assert nativegangs.phase(api, ns, name) == ("Running" if keys_ else "Pending")
        events = k8s.CoreV1Api(api).list_namespaced_event(ns, field_selector="reason=Reclaimed").items
        assert {e.involved_object.name for e in events} == {k.split("/")[1] for v in gangs.values() for k in v} - {
            k.split("/")[1] for v in left.values() for k in v
        }
    finally:
        sched.stop()


def test_a_two_level_tree_holds_every_level_to_its_share_at_admission(
    plane: cluster.LocalCluster, api: k8s.ApiClient, ns: str
) -> None:
    sched = ours(plane, TREE)
    try:
        eng = queue(api, f"{ns}-eng", parent="root", deserved={"cpu": "4"})
        leaf = queue(api, f"{ns}-eng-a", parent=eng)
        sci = queue(api, f"{ns}-sci", parent="root", deserved={"cpu": "4"})
        mine = {
            f"e{i}": nativegangs.submit(api, native.gang(f"e{i}", ns, members=2, cpu="1", queue=leaf)) for i in range(4)
        }
        theirs = [
            k
            for i in range(2)
            for k in nativegangs.submit(api, native.gang(f"s{i}", ns, members=2, cpu="1", queue=sci))
        ]
        every = [k for keys_ in mine.values() for k in keys_] + theirs
        apiserver.eventually(lambda: sched.sees(every), 30, "our cache to hold the gangs")
        for q in (eng, leaf, sci):
            state(api, q, "Open")
        apiserver.eventually(  # sci asks its 4: eng (and its leaf) gets its 4
            lambda: len(nativegangs.bound(api, every)) == 8 or None,
            90,
            lambda: f"8 cpu placed; {nativegangs.describe(api, every)}",
        )
        sched.cycles.next(2)
        assert len(nativegangs.bound(api, theirs)) == 4
        waiting = [name for name, keys_ in mine.items() if nativegangs.gated(api, keys_) == keys_]
        assert len(waiting) == 2, {name: nativegangs.describe(api, keys_) for name, keys_ in mine.items()}
        for name in waiting:
            assert nativegangs.phase(api, ns, name) == "Pending"
            pg = k8s.CustomObjectsApi(api).get_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name)
            text = " ".join(c.get("message", "") for c in pg["status"].get("conditions") or [])
            assert f"its ancestor {eng}'s deserved share at admission" in text, text
    finally:
        sched.stop()


def test_auto_resolves_to_native_where_the_workload_api_is_served(plane: cluster.LocalCluster) -> None:
    assert apiserver.backend(plane.kubeconfig, "auto") == "native"
    assert apiserver.backend(plane.kubeconfig, "volcano") == "volcano"


def test_a_change_the_workload_api_refuses_is_a_warning_event(
    plane: cluster.LocalCluster, api: k8s.ApiClient, ns: str
) -> None:
    """A gang of 3 made a group of 1 would turn its twins from gang to basic: the apiserver
    refuses that change of policy, the reconciler says so on the Volcano PodGroup."""
    custom = k8s.CustomObjectsApi(api)
    body = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": ns},
    }
    custom.create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", {**body, "spec": {"minMember": 3}})

    async def reconcile() -> None:
        async with client.Client(kubeconfigs.load(plane.kubeconfig)) as conn:
            pg = custom.get_namespaced_custom_object(*apiserver.PG, ns, "podgroups", "g")
            await native_controller.NativeReconciler(conn).reconcile(pg)

    asyncio.run(reconcile())
    twin = custom.get_namespaced_custom_object(*nativegangs.NATIVE, ns, "podgroups", "g")
    assert twin["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert not k8s.CoreV1Api(api).list_namespaced_event(ns, field_selector="reason=NativeGroupNotSynced").items
    custom.patch_namespaced_custom_object(*apiserver.PG, ns, "podgroups", "g", {"spec": {"minMember": 1}})
    asyncio.run(reconcile())
    events = k8s.CoreV1Api(api).list_namespaced_event(ns, field_selector="reason=NativeGroupNotSynced").items
    assert events and all(e.type == "Warning" and e.involved_object.kind == "PodGroup" for e in events)
    assert {e.involved_object.name for e in events} == {"g"}
    assert any("not brought in line" in e.message for e in events), [e.message for e in events]
    twin = custom.get_namespaced_custom_object(*nativegangs.NATIVE, ns, "podgroups", "g")
    assert twin["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}  # refused: unchanged
