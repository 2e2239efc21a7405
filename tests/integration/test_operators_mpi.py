"""The real mpi-operator (v0.8.2, default flags: no --gang-scheduling) with our bridge: MPIJob v2beta1.

Its own cluster, because the training-operator's MPIJob v1 CRD has the same name. The example is
the module's ``examples/v2beta1/pi/pi.yaml``, unchanged except for the namespace, in a namespace
opted in with ``vbridge.io/gang-scheduling=enabled``. The launcher pod comes from a batch/v1 Job
(kube-controller-manager's Job controller), the workers straight from the operator.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from bridge.localcluster import binaries, cluster, depcrds, operators
from tests.integration import test_spark_submit as common
from tests.integration.test_controlplane import eventually
from tests.support import bridgethread

pytestmark = [pytest.mark.integration, pytest.mark.operators]
GROUP_NAME = common.GROUP_NAME


@pytest.fixture(scope="module")
def env(
    bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[k8s.ApiClient, Any, common.Gang]]:
    binary = common.operator_binary("mpi-operator")
    lc = cluster.LocalCluster(tmp_path_factory.mktemp("mpi-operator"), bins=bins)
    lc.start()
    bridge = None
    try:
        bridge = bridgethread.BridgeThread(lc).start()
        with operators.Operator("mpi-operator", lc, binary=binary) as op:
            api = k8s_config.new_client_from_config(config_file=str(lc.kubeconfig))
            gang = common.Gang(lc, api)
            try:
                yield api, op, gang
            finally:
                gang.stop()
                api.close()
    finally:
        if bridge is not None:
            bridge.stop()
        lc.stop()


def example(rel: str) -> dict[str, Any]:
    module, version, _ = depcrds.SETS["mpi-operator"]
    body: dict[str, Any] = yaml.safe_load(
        pathlib.Path(depcrds.module_dir(module, version) / "examples" / rel).read_text()
    )
    body["metadata"].pop("namespace", None)
    return body


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
