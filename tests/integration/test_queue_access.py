"""Queue access holds on every path, for a batch user with only the namespaced ``edit`` role.

Each test acts as a fresh user bound to the built-in ``edit`` ClusterRole in one namespace
(impersonated, never cluster admin) and tries one path into a queue that does not admit the
namespace (``vbridge.io/allowed-namespaces: vip-*``): an UPDATE that changes a job's queue, a
PodGroup made directly, a pod that names its queue, a namespace annotation that names the
queue, and a namespace the webhook skips (kube-system), where the reconciler and then the
scheduler refuse instead. A pod names its group by ``scheduling.k8s.io/group-name`` within its
own namespace only, so its group was judged where it was made (the PodGroup and kube-system
tests); a pod that names a queue itself is a client-mode Spark executor.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge.adapters.vcjob import names
from scheduler import configure
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import apiserver, bridgethread, schedbed, schedthread, simthread, upstream, users
from vbridge.localcluster import binaries, cluster

pytestmark = pytest.mark.integration
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
NODES = [f"sim-node-{i}" for i in range(4)]
TF = ("kubeflow.org", "v1")
VC = ("batch.volcano.sh", "v1alpha1")


@pytest.fixture(scope="module", autouse=True)
def _rbac(control_plane: cluster.LocalCluster, bins: binaries.Binaries, api_client: k8s.ApiClient) -> None:
    upstream.install(control_plane, "training-operator")
    users.aggregate_edit(api_client, bins.path("helm"))


@pytest.fixture
def vip(api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread) -> Iterator[str]:
    """A queue for the vip-* namespaces only, known to the bridge before the test acts."""
    name = "vip-" + uuid.uuid4().hex[:6]
    body = {
        "apiVersion": "/".join(apiserver.PG),
        "kind": "Queue",
        "metadata": {"name": name, "annotations": {"vbridge.io/allowed-namespaces": "vip-*"}},
        "spec": {"weight": 1},
    }
    custom = k8s.CustomObjectsApi(api_client)
    custom.create_cluster_custom_object(*apiserver.PG, "queues", body)
    apiserver.eventually(lambda: bridge.bridge is not None and name in bridge.bridge.facts.queues, what="the queue")
    yield name
    custom.delete_cluster_custom_object(*apiserver.PG, "queues", name)


@pytest.fixture
def as_editor(
    api_client: k8s.ApiClient, control_plane: cluster.LocalCluster
) -> Iterator[Callable[[str], k8s.ApiClient]]:
    """A client acting as a new user with ``edit`` in the given namespace only."""
    made: list[k8s.ApiClient] = []

    def make(namespace: str) -> k8s.ApiClient:
        _, client = users.editor(api_client, control_plane, namespace)
        assert users.can(client, "create", "kubeflow.org", "tfjobs", namespace)
        assert not users.can(client, "update", "scheduling.volcano.sh", "queues", "")  # not an admin
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def refused(call: Callable[[], object], text: str = "does not admit namespace", status: int = 403) -> str:
    """The apiserver's answer to ``call``, which must be our webhook's denial."""
    with pytest.raises(k8s.ApiException) as info:
        call()
    assert info.value.status == status and text in str(info.value.body), info.value.body
    return str(info.value.body)


def _tfjob(name: str, **policy: Any) -> dict[str, Any]:
    job = kf.tfjob(name, Worker=kf.replica(1, kf.container("main", "100m", "64Mi")))
    job["metadata"].pop("namespace")
    if policy:
        job["spec"]["runPolicy"] = {"schedulingPolicy": policy}
    return job


def _podgroup(name: str, queue: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "/".join(apiserver.PG),
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": 1, "queue": queue, **spec},
    }


def _events(api: k8s.ApiClient, ns: str, name: str, reason: str) -> list[Any]:
    listed = k8s.CoreV1Api(api).list_namespaced_event(ns, field_selector=f"involvedObject.name={name}")
    return [e for e in listed.items if e.reason == reason]


def test_an_update_that_moves_a_job_to_a_foreign_queue_is_denied(
    as_editor: Callable[[str], k8s.ApiClient], vip: str, namespace: str
) -> None:
    user = k8s.CustomObjectsApi(as_editor(namespace))
    user.create_namespaced_custom_object(*TF, namespace, "tfjobs", _tfjob("train"))
    by_annotation = {"metadata": {"annotations": {QUEUE_NAME: vip}}}
    refused(lambda: user.patch_namespaced_custom_object(*TF, namespace, "tfjobs", "train", by_annotation))
    by_field = {"spec": {"runPolicy": {"schedulingPolicy": {"queue": vip}}}}
    refused(lambda: user.patch_namespaced_custom_object(*TF, namespace, "tfjobs", "train", by_field))
    job = user.get_namespaced_custom_object(*TF, namespace, "tfjobs", "train")
    assert QUEUE_NAME not in (job["metadata"].get("annotations") or {}) and "runPolicy" not in job["spec"]
    # A Volcano Job's queue is its field once admitted: moving it is judged as well.
    vcjob = {
        "apiVersion": "/".join(VC),
        "kind": "Job",
        "metadata": {"name": "vj"},
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}
            ],
        },
    }
    created = user.create_namespaced_custom_object(*VC, namespace, "jobs", vcjob)
    assert created["spec"]["queue"] == "default"
    moved = {"spec": {"queue": vip}}
    refused(lambda: user.patch_namespaced_custom_object(*VC, namespace, "jobs", "vj", moved))


def test_a_podgroup_made_directly_may_not_name_a_foreign_queue(
    as_editor: Callable[[str], k8s.ApiClient], vip: str, namespace: str
) -> None:
    user = k8s.CustomObjectsApi(as_editor(namespace))
    body = refused(
        lambda: user.create_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", _podgroup("g", vip))
    )
    assert f"queues open to namespace '{namespace}'" in body and "default" in body
    user.create_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", _podgroup("g", "default"))
    patch = {"spec": {"queue": vip}}
    refused(lambda: user.patch_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", "g", patch))
    negative = {"spec": {"minResources": {"cpu": "-4"}}}
    refused(
        lambda: user.patch_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", "g", negative),
        text="spec.minResources.cpu must not be negative",
        status=400,
    )
    group = user.get_namespaced_custom_object(*apiserver.PG, namespace, "podgroups", "g")
    assert group["spec"]["queue"] == "default" and "minResources" not in group["spec"]


def test_a_pod_that_names_a_foreign_queue_is_denied(
    as_editor: Callable[[str], k8s.ApiClient], vip: str, namespace: str
) -> None:
    core = k8s.CoreV1Api(as_editor(namespace))
    executor = spark.submit_pod("executor", annotations={QUEUE_NAME: vip})  # client mode: its group is ours to make
    executor["metadata"]["namespace"] = namespace
    refused(lambda: core.create_namespaced_pod(namespace, executor))
    executor["metadata"]["annotations"] = {}
    created = core.create_namespaced_pod(namespace, executor)
    assert created.metadata.annotations[apiserver.GROUP_NAME].endswith("-podgroup")


def test_a_namespace_annotation_naming_a_foreign_queue_moves_nothing_there(
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    as_editor: Callable[[str], k8s.ApiClient],
    vip: str,
    namespace: str,
) -> None:
    user = k8s.CustomObjectsApi(as_editor(namespace))
    user.create_namespaced_custom_object(*TF, namespace, "tfjobs", _tfjob("before"))
    group = apiserver.eventually(lambda: _group(api_client, namespace, "before"), what="the job's PodGroup")
    assert group["spec"]["queue"] == "default"
    # An administrator's mistake (users cannot annotate namespaces): the namespace names vip.
    k8s.CoreV1Api(api_client).patch_namespace(namespace, {"metadata": {"annotations": {QUEUE_NAME: vip}}})

    def seen() -> bool:
        ns = bridge.bridge.facts.namespaces.get(namespace) if bridge.bridge else None
        return ns is not None and ns.annotations.get(QUEUE_NAME) == vip

    apiserver.eventually(seen, what="the bridge to see the namespace annotation")
    refused(lambda: user.create_namespaced_custom_object(*TF, namespace, "tfjobs", _tfjob("after")))
    # The job made before: its next reconcile resolves to vip, and refuses to move its group.
    user.patch_namespaced_custom_object(*TF, namespace, "tfjobs", "before", {"metadata": {"labels": {"touch": "1"}}})
    events = apiserver.eventually(
        lambda: _events(api_client, namespace, "before", "QueueNotAllowed"), what="the QueueNotAllowed Event"
    )
    assert events[0].type == "Warning" and f"queue '{vip}' does not admit namespace '{namespace}'" in events[0].message
    assert _group(api_client, namespace, "before")["spec"]["queue"] == "default"


def _group(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any] | None:
    try:
        return schedbed.get_pg(api, ns, name)
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


@pytest.fixture
def scheduler(
    control_plane: cluster.LocalCluster, sim_nodes: simthread.SimThread, api_client: k8s.ApiClient
) -> Iterator[schedthread.SchedThread]:
    for name in NODES:  # the not-ready taint new nodes get, lifted as the lifecycle controller would
        k8s.CoreV1Api(api_client).patch_node(name, {"spec": {"taints": None}})
    conf = configure.parse("", scheduler_name="vb-" + uuid.uuid4().hex[:8])
    thread = schedthread.SchedThread(control_plane, conf, connections=8, name="access-scheduler").start()
    try:
        yield thread
    finally:
        thread.stop()


def test_in_a_namespace_the_webhook_skips_nothing_is_placed_in_a_foreign_queue(
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    as_editor: Callable[[str], k8s.ApiClient],
    scheduler: schedthread.SchedThread,
    vip: str,
) -> None:
    ns, tag = "kube-system", uuid.uuid4().hex[:6]
    user = as_editor(ns)
    custom = k8s.CustomObjectsApi(user)
    job, held, sane = f"train-{tag}", f"held-{tag}", f"sane-{tag}"
    try:
        # The webhook is not called here: the reconciler refuses to make the group in vip.
        custom.create_namespaced_custom_object(*TF, ns, "tfjobs", _tfjob(job, queue=vip))
        events = apiserver.eventually(lambda: _events(api_client, ns, job, "QueueNotAllowed"), what="the Event")
        assert f"PodGroup {job} not made or moved: queue '{vip}' does not admit namespace 'kube-system'" in (
            events[0].message
        )
        assert _group(api_client, ns, job) is None
        # A group made by hand in vip is held by the scheduler; one beside it in default runs.
        custom.create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", _podgroup(held, vip))
        custom.create_namespaced_custom_object(*apiserver.PG, ns, "podgroups", _podgroup(sane, "default"))
        pods = [
            p
            for g in (held, sane)
            for p in schedbed.pods(user, ns, g, 1, scheduler=scheduler.scheduler_name, cpu="100m")
        ]
        apiserver.eventually(lambda: schedbed.bound(api_client, ns, sane), what="the sane pod to be bound")
        apiserver.eventually(lambda: scheduler.sees(schedbed.keys(ns, pods)), what="the scheduler to see both pods")
        scheduler.cycles.next(2)
        assert not schedbed.bound(api_client, ns, held)
        conditions = (schedbed.get_pg(api_client, ns, held).get("status") or {}).get("conditions") or []
        assert [(c["type"], c["reason"]) for c in conditions] == [("Unschedulable", "QueueNotAllowed")]
        assert f"queue '{vip}' does not admit namespace 'kube-system'" in conditions[0]["message"]
    finally:
        admin = k8s.CustomObjectsApi(api_client)
        for plural, names, group in (("tfjobs", [job], TF), ("podgroups", [held, sane], apiserver.PG)):
            for name in names:
                try:
                    admin.delete_namespaced_custom_object(*group, ns, plural, name)
                except k8s.ApiException as exc:
                    if exc.status != 404:
                        raise
        for name in (f"{held}-0", f"{sane}-0"):
            try:
                k8s.CoreV1Api(api_client).delete_namespaced_pod(name, ns, grace_period_seconds=0)
            except k8s.ApiException as exc:
                if exc.status != 404:
                    raise


def test_a_volcano_job_in_a_namespace_the_webhook_skips_gets_no_group_in_a_foreign_queue(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, as_editor: Callable[[str], k8s.ApiClient], vip: str
) -> None:
    """The Volcano Job controller's own check (before it, only the scheduler held such a group):
    a Job in kube-system naming vip gets no PodGroup and no pod, and one Warning Event."""
    ns, job = "kube-system", "vc-" + uuid.uuid4().hex[:6]
    custom = k8s.CustomObjectsApi(as_editor(ns))
    try:
        custom.create_namespaced_custom_object(*VC, ns, "jobs", vcjob.simple(job, 2, queue=vip))
        events = apiserver.eventually(lambda: _events(api_client, ns, job, "QueueNotAllowed"), what="the Event")
        assert f"PodGroup not made: queue '{vip}' does not admit namespace 'kube-system'" in events[0].message
        group = names.podgroup(k8s.CustomObjectsApi(api_client).get_namespaced_custom_object(*VC, ns, "jobs", job))
        assert _group(api_client, ns, group) is None
        pods = k8s.CoreV1Api(api_client).list_namespaced_pod(ns, label_selector=f"volcano.sh/job-name={job}")
        assert not pods.items, [p.metadata.name for p in pods.items]
    finally:
        k8s.CustomObjectsApi(api_client).delete_namespaced_custom_object(*VC, ns, "jobs", job)
