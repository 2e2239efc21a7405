"""The real mpi-operator (v0.8.2, default flags: no --gang-scheduling) with our bridge: MPIJob v2beta1.

Its own cluster, because the training-operator's MPIJob v1 CRD has the same name. The example is
the module's ``examples/v2beta1/pi/pi.yaml``, unchanged except for the namespace, in a namespace
opted in with ``vbridge.io/gang-scheduling=enabled``. The launcher pod comes from a batch/v1 Job
(kube-controller-manager's Job controller), the workers straight from the operator.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge.localcluster import binaries
from tests.integration import test_spark_submit as common
from tests.integration.test_controlplane import eventually
from tests.support import operator_env

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = common.GROUP_NAME


@pytest.fixture(scope="module")
def env(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[k8s.ApiClient, Any, common.Gang]]:
    yield from operator_env.running("mpi-operator", bins, tmp_path_factory)


def example(rel: str) -> dict[str, Any]:
    return operator_env.upstream_example("mpi-operator", rel)


@pytest.mark.timeout(600)
def test_mpijob_v2beta1_pi_example(env: tuple[k8s.ApiClient, Any, common.Gang]) -> None:
    api, op, gang = env
    ns = "mpi-pi"
    labels = {"vbridge.io/gang-scheduling": "enabled"}
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns, labels=labels)))
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "kubeflow.org", "v2beta1", ns, "mpijobs", example("v2beta1/pi/pi.yaml")
    )
    [pg] = eventually(lambda: common.podgroups(api, ns), what="the MPIJob's PodGroup")
    assert pg["metadata"]["name"] == "pi"
    assert pg["spec"]["minMember"] == 3  # launcher + 2 workers, as mpi-operator counts
    assert pg["spec"]["minResources"] == {"cpu": "3", "memory": "3Gi"}  # limits stand in for requests

    def all_pods() -> list[dict[str, Any]] | None:
        found = common.pods(api, ns, "training.kubeflow.org/job-name=pi")
        return found if len(found) == 3 else None

    pods = eventually(all_pods, timeout=60, what=f"the launcher and 2 workers\n{op.tail()}")
    roles = sorted(p["metadata"]["labels"]["training.kubeflow.org/job-role"] for p in pods)
    assert roles == ["launcher", "worker", "worker"]
    for pod in pods:
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"][GROUP_NAME] == "pi"
    assert len(common.podgroups(api, ns)) == 1
    if gang.on:
        common.eventually_bound(api, ns, "training.kubeflow.org/job-name=pi", 3)
        eventually(lambda: succeeded(api, ns), timeout=120, what=f"the MPIJob to succeed\n{op.tail()}")


def succeeded(api: k8s.ApiClient, ns: str) -> bool:
    obj = k8s.CustomObjectsApi(api).get_namespaced_custom_object("kubeflow.org", "v2beta1", ns, "mpijobs", "pi")
    conds = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conds)
