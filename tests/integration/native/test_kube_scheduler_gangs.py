"""Kubernetes' own gang scheduling on the test bed: the objects ``bridge.native`` makes, placed by kube-scheduler.

A control plane with the 1.37 Workload API served (``LocalCluster(native_gangs=True)``: the
``GenericWorkload`` gate and ``scheduling.k8s.io/v1beta1``), the built kube-scheduler with the
same gate as the ``volcano`` scheduler name our stamps use, and three simulated nodes of 4 cpu.
Our Volcano PodGroups (as the adapters make them) are translated into a Workload and a native
PodGroup, and the pods join with ``spec.schedulingGroup``: a gang that fits binds whole, one
that needs one node more than there is binds nothing, and a Spark-like group of one binds alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge.native import workloads as native_workloads
from tests.support import apiserver, nativebed
from vbridge.localcluster import binaries

pytestmark = pytest.mark.integration
NS = "native"


@pytest.fixture(scope="module")
def api(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[k8s.ApiClient]:
    workdir = tmp_path_factory.mktemp("native")
    with nativebed.run(bins, workdir, namespace=NS, prefix="nat", scheduler_name="volcano", gate=False) as client:
        yield client


def volcano_group(name: str, min_member: int) -> dict[str, Any]:
    owner = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": name, "uid": "0" * 8, "controller": True}
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": NS, "ownerReferences": [owner]},
        "spec": {"minMember": min_member, "queue": "default"},
    }


def submit(api: k8s.ApiClient, name: str, *, members: int, cpu: str) -> list[str]:
    """The group's Workload and PodGroup, then its pods; returns the pod names."""
    pg = volcano_group(name, members)
    custom = k8s.CustomObjectsApi(api)
    for body, plural in ((native_workloads.workload(pg), "workloads"), (native_workloads.podgroup(pg), "podgroups")):
        body["metadata"].pop("ownerReferences")  # no TFJob exists on this bed to own them
        custom.create_namespaced_custom_object("scheduling.k8s.io", "v1beta1", NS, plural, body)
    names = []
    for i in range(members):
        spec = {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
        }
        pod = {"metadata": {"name": f"{name}-{i}"}, "spec": native_workloads.stamp(spec, name)}
        k8s.CoreV1Api(api).create_namespaced_pod(NS, pod)
        names.append(pod["metadata"]["name"])
    return names


def nodes_of(api: k8s.ApiClient, names: list[str]) -> list[str | None]:
    return [k8s.CoreV1Api(api).read_namespaced_pod(n, NS).spec.node_name for n in names]


def all_bound(api: k8s.ApiClient, names: list[str]) -> list[str] | None:
    placed = nodes_of(api, names)
    return [n for n in placed if n] if all(placed) else None


def condition(api: k8s.ApiClient, name: str, kind: str) -> dict[str, Any] | None:
    pg = k8s.CustomObjectsApi(api).get_namespaced_custom_object("scheduling.k8s.io", "v1beta1", NS, "podgroups", name)
    return next((c for c in (pg.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def test_a_gang_that_fits_is_bound_whole_by_kube_scheduler(api: k8s.ApiClient) -> None:
    pods = submit(api, "fits", members=3, cpu="3")
    placed = apiserver.eventually(lambda: all_bound(api, pods), 60, "the gang bound")
    assert sorted(placed) == ["nat-0", "nat-1", "nat-2"]  # 3 cpu each: one per node
    scheduled = apiserver.eventually(lambda: condition(api, "fits", "PodGroupInitiallyScheduled"), 30, "condition")
    assert scheduled["status"] == "True"


def test_a_gang_one_node_too_big_binds_nothing(api: k8s.ApiClient) -> None:
    apiserver.eventually(lambda: all_bound(api, ["fits-0", "fits-1", "fits-2"]), 60, "the first gang")
    pods = submit(api, "toobig", members=4, cpu="1")  # 3 × 1 cpu free: one short of the gang
    failed = apiserver.eventually(lambda: condition(api, "toobig", "PodGroupInitiallyScheduled"), 60, "condition")
    assert (failed["status"], failed["reason"]) == ("False", "Unschedulable")
    assert nodes_of(api, pods) == [None] * 4


def test_a_group_of_one_is_basic_and_binds_alone(api: k8s.ApiClient) -> None:
    assert native_workloads.workload(volcano_group("driver", 1))["spec"]["podGroupTemplates"][0][
        "schedulingPolicy"
    ] == {"basic": {}}
    [pod] = submit(api, "driver", members=1, cpu="1")
    apiserver.eventually(lambda: nodes_of(api, [pod])[0], 60, "the group of one bound")
