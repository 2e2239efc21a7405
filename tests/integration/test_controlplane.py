"""The foundation, against the real kube-apiserver: CRDs, queues, pods on simulated nodes, GC, Jobs."""

from __future__ import annotations

import pathlib
import socket
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.support import apiserver, simthread
from vbridge.localcluster import binaries, cluster
from vbridge.nodesim import RUN_SECONDS

pytestmark = pytest.mark.integration


def test_auto_resolves_to_volcano_without_the_workload_api(control_plane: cluster.LocalCluster) -> None:
    assert apiserver.backend(control_plane.kubeconfig, "auto") == "volcano"
    assert apiserver.backend(control_plane.kubeconfig, "native") == "native"  # as said, served or not


def test_default_queues_exist_and_are_open(api_client: k8s.ApiClient) -> None:
    crd = k8s.CustomObjectsApi(api_client)
    queues = {q["metadata"]["name"]: q for q in crd.list_cluster_custom_object(*apiserver.PG, "queues")["items"]}
    assert {"default", "root"} <= set(queues)
    assert queues["default"]["spec"] == {"weight": 1, "reclaimable": True, "dequeueStrategy": "traverse"}
    assert queues["default"]["status"]["state"] == "Open"


def test_queue_and_podgroup_round_trip_and_print_volcano_columns(
    api_client: k8s.ApiClient, bins: binaries.Binaries, control_plane: cluster.LocalCluster
) -> None:
    crd = k8s.CustomObjectsApi(api_client)
    crd.create_cluster_custom_object(
        *apiserver.PG,
        "queues",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "research"},
            "spec": {"weight": 3, "capability": {"cpu": "20", "memory": "64Gi"}},
        },
    )
    crd.create_namespaced_custom_object(
        *apiserver.PG,
        "default",
        "podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "gang"},
            "spec": {
                "minMember": 3,
                "queue": "research",
                "minResources": {"cpu": "3", "memory": "3Gi"},
                "minTaskMember": {"worker": 2, "ps": 1},
            },
            "status": {"phase": "Pending", "running": 0},
        },
    )
    queue = crd.get_cluster_custom_object(*apiserver.PG, "queues", "research")
    assert queue["spec"]["weight"] == 3 and queue["spec"]["capability"] == {"cpu": "20", "memory": "64Gi"}
    pg = crd.get_namespaced_custom_object(*apiserver.PG, "default", "podgroups", "gang")
    assert pg["spec"]["minTaskMember"] == {"worker": 2, "ps": 1}
    assert pg["status"]["phase"] == "Pending"

    wide = apiserver.kubectl(bins, control_plane, "get", "pg", "gang", "-n", "default", "-o", "wide").splitlines()
    assert wide[0].split() == ["NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"]
    assert wide[1].split()[:4] == ["gang", "Pending", "3", "0"] and wide[1].split()[-1] == "research"
    narrow = apiserver.kubectl(bins, control_plane, "get", "podgroup-v1beta1", "-n", "default").splitlines()
    assert "QUEUE" not in narrow[0]
    assert "research" in apiserver.kubectl(bins, control_plane, "get", "q")


def test_apiserver_fills_in_volcanos_defaults_from_our_crds(api_client: k8s.ApiClient) -> None:
    """A PodGroup without a queue goes to ``default``; a Queue without a weight or strategy gets Volcano's."""
    crd = k8s.CustomObjectsApi(api_client)
    api_version = "/".join(apiserver.PG)
    made = crd.create_namespaced_custom_object(
        *apiserver.PG,
        "default",
        "podgroups",
        {"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": "no-queue"}, "spec": {"minMember": 1}},
    )
    assert made["spec"]["queue"] == "default"
    bare = crd.create_cluster_custom_object(
        *apiserver.PG, "queues", {"apiVersion": api_version, "kind": "Queue", "metadata": {"name": "bare"}, "spec": {}}
    )
    assert (bare["spec"]["weight"], bare["spec"]["dequeueStrategy"]) == (1, "traverse")


def test_schema_rejects_what_volcano_rejects(api_client: k8s.ApiClient) -> None:
    crd = k8s.CustomObjectsApi(api_client)
    with pytest.raises(k8s.ApiException) as bad_weight:
        crd.create_cluster_custom_object(
            *apiserver.PG,
            "queues",
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": "bad"},
                "spec": {"weight": 0},
            },
        )
    # Refused by the CRD's schema (422) or, before it, by our Queue webhook on the same bound (400).
    assert bad_weight.value.status in (400, 422) and "weight" in bad_weight.value.body
    with pytest.raises(k8s.ApiException) as bad_member:
        crd.create_namespaced_custom_object(
            *apiserver.PG,
            "default",
            "podgroups",
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": "bad"},
                "spec": {"minMember": -1},
            },
        )
    assert bad_member.value.status in (400, 422) and "minMember" in bad_member.value.body


def _pod(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "schedulerName": "nobody",
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
            ],
        },
    }


def test_pod_bound_through_binding_runs_then_succeeds(
    api_client: k8s.ApiClient, sim_nodes: simthread.SimThread
) -> None:
    core = k8s.CoreV1Api(api_client)
    node = apiserver.eventually(lambda: core.read_node("sim-node-0"), what="simulated node")
    ready = {c.type: c.status for c in node.status.conditions}
    assert ready["Ready"] == "True"
    assert node.status.allocatable["nvidia.com/gpu"] == "2"
    assert not node.spec.taints  # the not-ready taint new nodes get is lifted, as the lifecycle controller would

    core.create_namespaced_pod("default", _pod("runs-once", {RUN_SECONDS: "1"}))
    core.create_namespaced_pod_binding(
        "runs-once",
        "default",
        k8s.V1Binding(
            metadata=k8s.V1ObjectMeta(name="runs-once"), target=k8s.V1ObjectReference(kind="Node", name="sim-node-0")
        ),
        _preload_content=False,
    )
    running = apiserver.eventually(
        lambda: (p := core.read_namespaced_pod("runs-once", "default")).status.phase == "Running" and p,
        what="pod Running",
    )
    assert running.status.pod_ip and running.spec.node_name == "sim-node-0"
    done = apiserver.eventually(
        lambda: (p := core.read_namespaced_pod("runs-once", "default")).status.phase == "Succeeded" and p,
        what="pod Succeeded",
    )
    assert done.status.container_statuses[0].state.terminated.exit_code == 0


def test_failed_exit_code_and_deletion_of_a_running_pod(
    api_client: k8s.ApiClient, sim_nodes: simthread.SimThread
) -> None:
    core = k8s.CoreV1Api(api_client)
    failing = _pod("fails", {RUN_SECONDS: "0.5", "sim.vbridge.io/exit-code": "3"})
    failing["spec"]["nodeName"] = "sim-node-1"
    core.create_namespaced_pod("default", failing)
    dead = apiserver.eventually(
        lambda: (p := core.read_namespaced_pod("fails", "default")).status.phase == "Failed" and p
    )
    assert dead.status.container_statuses[0].state.terminated.exit_code == 3

    forever = _pod("forever")
    forever["spec"]["nodeName"] = "sim-node-1"
    core.create_namespaced_pod("default", forever)
    apiserver.eventually(lambda: core.read_namespaced_pod("forever", "default").status.phase == "Running")
    core.delete_namespaced_pod("forever", "default")  # default 30 s grace: the simulator ends it now

    apiserver.eventually(
        lambda: apiserver.gone(lambda: core.read_namespaced_pod("forever", "default")),
        timeout=10,
        what="terminating pod to be deleted",
    )


def test_garbage_collector_removes_what_an_owner_owns(api_client: k8s.ApiClient) -> None:
    core, crd = k8s.CoreV1Api(api_client), k8s.CustomObjectsApi(api_client)
    owner = core.create_namespaced_config_map(
        "default", k8s.V1ConfigMap(metadata=k8s.V1ObjectMeta(name="owner"), data={"a": "b"})
    )
    crd.create_namespaced_custom_object(
        *apiserver.PG,
        "default",
        "podgroups",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {
                "name": "owned",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": "owner",
                        "uid": owner.metadata.uid,
                        "controller": True,
                    }
                ],
            },
            "spec": {"minMember": 1},
        },
    )
    core.delete_namespaced_config_map("owner", "default")

    apiserver.eventually(
        lambda: apiserver.gone(
            lambda: crd.get_namespaced_custom_object(*apiserver.PG, "default", "podgroups", "owned")
        ),
        timeout=60,
        what="the garbage collector to delete the owned PodGroup",
    )


def test_batch_job_creates_its_pod(api_client: k8s.ApiClient) -> None:
    batch, core = k8s.BatchV1Api(api_client), k8s.CoreV1Api(api_client)
    batch.create_namespaced_job(
        "default",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "launcher"},
            "spec": {
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}
            },
        },
    )
    pods = apiserver.eventually(
        lambda: core.list_namespaced_pod("default", label_selector="job-name=launcher").items,
        what="the Job controller to create a pod",
    )
    assert pods[0].metadata.owner_references[0].kind == "Job"


def test_namespace_deletion_completes(api_client: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name="short-lived")))
    apiserver.eventually(
        lambda: core.list_namespaced_service_account("short-lived").items, what="default service account"
    )
    core.delete_namespace("short-lived")

    apiserver.eventually(
        lambda: apiserver.gone(lambda: core.read_namespace("short-lived")), timeout=60, what="namespace deletion"
    )


def test_a_port_taken_before_the_apiserver_listens_is_chosen_again(
    bins: binaries.Binaries, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race CI met: a port found free is taken (here: by a listener of ours) before the
    apiserver binds it; the control plane picks another and starts."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        held = taken.getsockname()[1]
        real = cluster.free_port
        ports = iter([held])
        monkeypatch.setattr(cluster, "free_port", lambda: next(ports, None) or real())
        with cluster.LocalCluster(tmp_path / "lc", bins=bins) as lc:
            assert lc.server != f"https://127.0.0.1:{held}"
            assert "address already in use" in (tmp_path / "lc" / "logs" / "kube-apiserver.log").read_text()
            api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
            with api:
                assert k8s.CoreV1Api(api).list_namespace().items
