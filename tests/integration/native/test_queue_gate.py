"""Volcano's queues on top of kube-scheduler: our scheduler admits (lifts the queue gate), kube-scheduler places.

One control plane with the Workload API (``LocalCluster(native_gangs=True)``), kube-scheduler
1.37 with its gate as ``default-scheduler``, two simulated nodes of 4 cpu, and our scheduler
with ``backend="native"`` (``configure.parse``): its cycles run enqueue with the default
plugins, then lift ``keys.QUEUE_GATE`` from the pods of each admitted group. Gangs are made as
the native backend's admission leaves them (``builders.native``). What must *not* happen is
checked after whole cycles of ours that saw the objects (``Cycles.next``).
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from scheduler import configure
from tests.builders import native
from tests.support import apiserver, nativegangs, schedthread, simthread
from vbridge import cli
from vbridge.localcluster import binaries, cluster, kubescheduler
from vbridge.nodesim import nodes

pytestmark = pytest.mark.integration
KUBECONFIG: list[pathlib.Path] = []  # the bed's, for the CLI


@pytest.fixture(scope="module")
def bed(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[k8s.ApiClient, schedthread.SchedThread]]:
    lc = cluster.LocalCluster(tmp_path_factory.mktemp("native-queues"), bins=bins, native_gangs=True)
    with apiserver.started(lc), apiserver.client_of(lc) as api:
        KUBECONFIG[:] = [lc.kubeconfig]
        sim = simthread.SimThread(lc.kubeconfig, nodes.pool(2, prefix="nq", cpu="4", memory="16Gi")).start()
        ks = ours = None
        try:
            for i in range(2):  # no node lifecycle controller lifts the not-ready taint here
                k8s.CoreV1Api(api).patch_node(f"nq-{i}", {"spec": {"taints": None}})
            ks = kubescheduler.start(lc, bins)
            ours = schedthread.SchedThread(lc, configure.parse("", backend="native")).start()
            yield api, ours
        finally:
            if ours is not None:
                ours.stop()
            if ks is not None:
                ks.stop()
            sim.stop()


@pytest.fixture
def ns(bed: tuple[k8s.ApiClient, schedthread.SchedThread]) -> Iterator[str]:
    api = bed[0]
    name = "nq-" + uuid.uuid4().hex[:6]
    core = k8s.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    custom = k8s.CustomObjectsApi(api)
    for pg in custom.list_namespaced_custom_object(*apiserver.PG, name, "podgroups")["items"]:
        custom.delete_namespaced_custom_object(*apiserver.PG, name, "podgroups", pg["metadata"]["name"])
    core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
    apiserver.eventually(lambda: not core.list_namespaced_pod(name).items, 60, "the test's pods gone")
    core.delete_namespace(name)


def queue(api: k8s.ApiClient, name: str, *, weight: int = 1, closed: bool = False) -> str:
    custom = k8s.CustomObjectsApi(api)
    body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
    custom.create_cluster_custom_object(*apiserver.PG, "queues", {**body, "spec": {"weight": weight}})
    if closed:
        state(api, name, "Closed")
    return name


def state(api: k8s.ApiClient, name: str, value: str) -> None:
    """Set a Queue's state as ``vcctl queue open|close`` ends up doing."""
    body = {"status": {"state": value}}
    k8s.CustomObjectsApi(api).patch_cluster_custom_object_status(*apiserver.PG, "queues", name, body)


def explain_text(bed: tuple[k8s.ApiClient, schedthread.SchedThread], ns: str, group: str) -> str:
    """``vbridge explain --backend native pg/GROUP`` as the CLI prints it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["explain", "--backend", "native", f"pg/{group}", "-n", ns, "--kubeconfig", str(KUBECONFIG[0])])
    assert code == 0, out.getvalue()
    return out.getvalue()


def phases(api: k8s.ApiClient, ns: str, pods: dict[str, list[str]]) -> dict[str, str]:
    return {f"{q}-{i}": nativegangs.phase(api, ns, f"{q}-{i}") for q, keys in pods.items() for i in range(len(keys))}


def test_queue_weights_give_their_shares(bed: tuple[k8s.ApiClient, schedthread.SchedThread], ns: str) -> None:
    api, ours = bed
    # Closed while the groups are made, so the first cycle that may admit sees both queues' demand.
    heavy, light = queue(api, f"{ns}-w3", weight=3, closed=True), queue(api, f"{ns}-w1", weight=1, closed=True)
    pods: dict[str, list[str]] = {q: [] for q in (heavy, light)}
    for q in (heavy, light):
        for i in range(8):  # each queue alone would take the whole 8 cpu
            pods[q] += nativegangs.submit(api, native.gang(f"{q}-{i}", ns, members=1, cpu="1", queue=q))
    every = pods[heavy] + pods[light]
    apiserver.eventually(lambda: ours.sees(every), 30, "our cache to hold the pods")
    for q in (heavy, light):
        state(api, q, "Open")
    apiserver.eventually(
        lambda: len(nativegangs.bound(api, every)) == 8 or None,
        90,
        lambda: (
            f"8 cpu placed; {nativegangs.describe(api, every)}; our groups: {phases(api, ns, pods)}; "
            f"queues: {[k8s.CustomObjectsApi(api).get_cluster_custom_object(*apiserver.PG, 'queues', q) for q in pods]}"
        ),
    )
    ours.cycles.next(2)
    assert (len(nativegangs.bound(api, pods[heavy])), len(nativegangs.bound(api, pods[light]))) == (6, 2)
    assert len(nativegangs.gated(api, every)) == 8  # the rest wait at our gate, not at kube-scheduler


def test_a_closed_queue_admits_nothing_new(bed: tuple[k8s.ApiClient, schedthread.SchedThread], ns: str) -> None:
    api, ours = bed
    shut = queue(api, f"{ns}-shut", closed=True)
    pods = nativegangs.submit(api, native.gang("late", ns, members=2, cpu="1", queue=shut))
    apiserver.eventually(lambda: ours.sees(pods), 30, "our cache to hold the pods")
    ours.cycles.next(2)
    assert nativegangs.gated(api, pods) == pods and not nativegangs.bound(api, pods)
    assert nativegangs.phase(api, ns, "late") == "Pending"
    out = explain_text(bed, ns, "late")
    assert "waits on our queue gate" in out and "Closed" in out


def test_a_gang_of_n_where_only_n_minus_1_fit_binds_nothing(
    bed: tuple[k8s.ApiClient, schedthread.SchedThread], ns: str
) -> None:
    api, ours = bed
    other = queue(api, f"{ns}-other")
    hog = nativegangs.submit(api, native.gang("hog", ns, members=1, cpu="2", queue=other))
    apiserver.eventually(lambda: nativegangs.bound(api, hog) or None, 60, "the 2-cpu pod placed")
    # 2 × 3 cpu fit the empty nodes (so our gate admits them: within the queue's share, the
    # capacity and overcommit), but beside the 2-cpu pod only one fits: kube-scheduler's gang
    # binds none.
    pods = nativegangs.submit(api, native.gang("pair", ns, members=2, cpu="3"))
    apiserver.eventually(lambda: not nativegangs.gated(api, pods), 60, "our gate lifted")
    failed = apiserver.eventually(lambda: nativegangs.native_condition(api, ns, "pair"), 60, "kube-scheduler's verdict")
    assert (failed["status"], failed["reason"]) == ("False", "Unschedulable")
    ours.cycles.next(2)
    assert nativegangs.bound(api, pods) == []
    assert nativegangs.phase(api, ns, "pair") == "Inqueue"
    out = explain_text(bed, ns, "pair")
    assert "waits on kube-scheduler" in out and "PodGroupInitiallyScheduled=False Unschedulable" in out


def test_two_gangs_that_cannot_both_fit_run_in_turn(
    bed: tuple[k8s.ApiClient, schedthread.SchedThread], ns: str
) -> None:
    api, ours = bed
    first = nativegangs.submit(api, native.gang("first", ns, members=2, cpu="4", run_seconds=4))
    apiserver.eventually(
        lambda: len(nativegangs.bound(api, first)) == 2 or None,
        60,
        lambda: f"the first gang bound; {nativegangs.describe(api, first + second)}",
    )
    second = nativegangs.submit(api, native.gang("second", ns, members=2, cpu="4"))
    apiserver.eventually(lambda: ours.sees(second), 30, "our cache to hold the second gang")
    ours.cycles.next(1)
    if not nativegangs.succeeded(api, first):  # while the first runs, the second waits at our gate
        assert nativegangs.gated(api, second) == second
    apiserver.eventually(
        lambda: len(nativegangs.bound(api, second)) == 2 or None,
        90,
        lambda: f"the second gang bound; {nativegangs.describe(api, first + second)}",
    )
    assert nativegangs.succeeded(api, first)
    assert apiserver.eventually(lambda: nativegangs.phase(api, ns, "first") == "Completed" or None, 30, "Completed")
