"""The whole native path with nothing lifted by hand: our webhooks and reconcilers on
``backend="native"``, our scheduler's queue half (``configure.parse(backend="native")``) and
kube-scheduler 1.37. A Volcano Job written for Volcano is admitted gated; our scheduler admits its
group in the default queue and lifts the gate; kube-scheduler binds the gang whole. A gang that
can never fit (more cpu than the cluster has) is never released: it stays behind our gate with a
condition saying why, and kube-scheduler never sees it.
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
NS = "native-gate"


@pytest.fixture(scope="module")
def api(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[k8s.ApiClient]:
    workdir = tmp_path_factory.mktemp("native-gate")
    with nativebed.run(bins, workdir, namespace=NS, prefix="ng", backend="native", gate=True) as client:
        yield client


def _pods(api: k8s.ApiClient, job: str) -> list[Any]:
    return list(k8s.CoreV1Api(api).list_namespaced_pod(NS, label_selector=f"volcano.sh/job-name={job}").items)


def _group(api: k8s.ApiClient, name: str) -> dict[str, Any]:
    custom = k8s.CustomObjectsApi(api)
    job = custom.get_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs", name)
    pg: dict[str, Any] = custom.get_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", NS, "podgroups", f"{name}-{job['metadata']['uid']}"
    )
    return pg


def _submit(api: k8s.ApiClient, name: str, replicas: int, cpu: str) -> None:
    body = builders_vcjob.simple(name, replicas, run_seconds=3600, cpu=cpu)
    k8s.CustomObjectsApi(api).create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", NS, "jobs", body)


def test_our_gate_admits_and_kube_scheduler_binds_the_gang_whole(api: k8s.ApiClient) -> None:
    _submit(api, "whole", 3, "1")

    def bound() -> list[Any] | None:
        found = _pods(api, "whole")
        done = len(found) == 3 and all(p.spec.node_name and not p.spec.scheduling_gates for p in found)
        return found if done else None

    pods = apiserver.eventually(bound, timeout=120, what="the gang ungated by our queue and bound by kube-scheduler")
    assert {p.spec.scheduler_name for p in pods} == {"default-scheduler"}
    assert {p.spec.scheduling_group.pod_group_name for p in pods} == {_group(api, "whole")["metadata"]["name"]}
    status = apiserver.eventually(
        # The phase turns Running on the bound members; the count follows as the pods start.
        lambda: (
            (s := _group(api, "whole").get("status") or {}).get("phase") == "Running" and s.get("running") == 3 and s
        ),
        timeout=60,
        what="our PodGroup Running with its three pods",
    )
    assert status["running"] == 3


def test_a_gang_that_can_never_fit_stays_behind_our_gate(api: k8s.ApiClient) -> None:
    _submit(api, "never", 2, "64")  # 64 cpu a pod: no node has that many
    pods = apiserver.eventually(lambda: (p := _pods(api, "never")) and len(p) == 2 and p, what="the pods")

    def held() -> dict[str, Any] | None:
        conds = (_group(api, "never").get("status") or {}).get("conditions") or []
        return next((c for c in conds if c.get("type") == "Unschedulable" and c.get("status") == "True"), None)

    cond = apiserver.eventually(held, timeout=60, what="our condition on the held group")
    assert cond["message"], cond
    for pod in _pods(api, "never"):
        assert keys.QUEUE_GATE in [g.name for g in pod.spec.scheduling_gates or []], pod.spec.scheduling_gates
        assert pod.spec.node_name is None
    assert len(pods) == 2
