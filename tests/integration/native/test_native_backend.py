"""The native backend end to end: ``--backend native``, kube-scheduler places the gangs.

A control plane with the Workload API (``LocalCluster(native_gangs=True)``), our webhooks and
reconcilers on ``backend="native"``, kube-scheduler as ``default-scheduler`` (with the gate), and
three simulated nodes of 4 cpu. A Volcano Job written for Volcano is admitted unchanged; our
controllers make its Volcano PodGroup (the record), its Workload and native PodGroup (owned by
the job), and its pods stamped with ``schedulingGroup``, the queue gate and kube-scheduler's
name. Once our scheduler (``backend="native"``: its queue half) admitted the group and lifted
the gate, the gang binds whole; a gang of 4 where only 3 fit binds nothing; deleting the job
takes the native objects with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from tests.builders import vcjob as builders_vcjob
from tests.support import apiserver, nativebed
from vbridge.localcluster import binaries

pytestmark = pytest.mark.integration
NS = "native-e2e"


@pytest.fixture(scope="module")
def api(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[k8s.ApiClient]:
    workdir = tmp_path_factory.mktemp("native-backend")
    with nativebed.run(bins, workdir, namespace=NS, prefix="nb", backend="native") as client:
        yield client


def vcjob(name: str, *, replicas: int, cpu: str) -> dict[str, Any]:
    """A Volcano Job as a user writes it for Volcano, whose pods run until the test ends."""
    return builders_vcjob.simple(name, replicas, run_seconds=3600, cpu=cpu)


def _custom(api: k8s.ApiClient) -> k8s.CustomObjectsApi:
    return k8s.CustomObjectsApi(api)


def pods_of(api: k8s.ApiClient, job: str) -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"volcano.sh/job-name={job}").items)


def native_objects(api: k8s.ApiClient, group: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    try:
        return tuple(  # type: ignore[return-value]
            _custom(api).get_namespaced_custom_object("scheduling.k8s.io", "v1beta1", NS, plural, group)
            for plural in ("workloads", "podgroups")
        )
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def submit(api: k8s.ApiClient, name: str, *, replicas: int, cpu: str) -> tuple[str, list[Any]]:
    """The job created; returns its group's name and its pods, once all exist."""
    job = _custom(api).create_namespaced_custom_object(
        "batch.volcano.sh", "v1alpha1", NS, "jobs", vcjob(name, replicas=replicas, cpu=cpu)
    )
    group = f"{name}-{job['metadata']['uid']}"
    pods = apiserver.eventually(lambda: (p := pods_of(api, name)) and len(p) == replicas and p, what=f"{name}'s pods")
    return group, pods


def gates(pod: Any) -> list[str]:
    return [g.name for g in pod.spec.scheduling_gates or []]


def ungated(api: k8s.ApiClient, job: str) -> list[Any] | None:
    """The job's pods once our scheduler lifted the queue gate from every one."""
    found = pods_of(api, job)
    return found if found and not any(keys.QUEUE_GATE in gates(p) for p in found) else None


def test_a_volcano_job_is_gang_scheduled_by_kube_scheduler(api: k8s.ApiClient) -> None:
    group, pods = submit(api, "fits", replicas=3, cpu="1")
    volcano_pg = _custom(api).get_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", NS, "podgroups", group)
    assert volcano_pg["spec"]["minMember"] == 3  # the record of the gang stays ours
    workload, native_pg = apiserver.eventually(lambda: native_objects(api, group), what="the native objects")
    assert workload["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert native_pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert [o["kind"] for o in native_pg["metadata"]["ownerReferences"]] == ["Job"]
    for pod in pods:
        assert pod.spec.scheduler_name == "default-scheduler"
        assert pod.spec.scheduling_group.pod_group_name == group
        # made gated: kube-scheduler leaves it alone until our scheduler lifts the gate
        assert keys.QUEUE_GATE not in gates(pod) or pod.spec.node_name is None
    apiserver.eventually(lambda: ungated(api, "fits"), timeout=60, what="our scheduler to lift the gates")

    def bound() -> list[Any] | None:
        found = pods_of(api, "fits")
        return found if all(p.spec.node_name for p in found) else None

    assert len(apiserver.eventually(bound, what="the gang bound")) == 3


def test_a_gang_of_four_where_three_fit_binds_nothing(api: k8s.ApiClient) -> None:
    # 'fits' holds 1 cpu on each of the 3 nodes of 4 cpu (kube-scheduler spreads by least
    # allocated): a pod of 2 cpu fits once a node, so 3 of these 4 do. Their 8 cpu are within the
    # queue's capacity beside the 3 held (12 cpu): our scheduler admits the group, lifts the gate.
    assert len({p.spec.node_name for p in pods_of(api, "fits")}) == 3
    group, _ = submit(api, "too-big", replicas=4, cpu="2")
    apiserver.eventually(lambda: native_objects(api, group), what="the native objects")
    apiserver.eventually(lambda: ungated(api, "too-big"), timeout=60, what="our scheduler to lift the gates")

    def unschedulable() -> bool:
        pg = _custom(api).get_namespaced_custom_object("scheduling.k8s.io", "v1beta1", NS, "podgroups", group)
        return any(
            c["type"] == "PodGroupInitiallyScheduled" and c["status"] == "False"
            for c in (pg.get("status") or {}).get("conditions") or []
        )

    apiserver.eventually(unschedulable, timeout=60, what="kube-scheduler's verdict on the gang")
    assert [p.spec.node_name for p in pods_of(api, "too-big")] == [None] * 4


def test_deleting_the_job_takes_its_native_objects(api: k8s.ApiClient) -> None:
    group, _ = submit(api, "goes", replicas=2, cpu="100m")
    apiserver.eventually(lambda: native_objects(api, group), what="the native objects")
    _custom(api).delete_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs", "goes")
    apiserver.eventually(lambda: native_objects(api, group) is None, timeout=60, what="the native objects gone")
