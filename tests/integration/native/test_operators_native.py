"""The real training-operator (v1.9.4) and mpi-operator (v0.8.2) on the native backend: their own
examples (TFJob, PyTorchJob, MPIJob v1, XGBoostJob, PaddleJob, JAXJob; MPIJob v2beta1), unchanged,
gang-scheduled by kube-scheduler.

As ``tests/integration/test_operators_training.py`` and ``test_operators_mpi.py`` run them on the volcano backend, in a
namespace opted in with ``vbridge.io/gang-scheduling=enabled``; here the bridge runs with
``backend="native"`` on a control plane with the Workload API and kube-scheduler places the
pods. Each job gets its Volcano PodGroup (our record) and a native PodGroup of the same name
whose ``minCount`` is our ``minMember``; every pod the operator creates joins it
(``spec.schedulingGroup``, which the operator, built on an older ``k8s.io/api``, drops from the
template, so the pod webhook sets it), waits on the queue gate, and once our scheduler
(``backend="native"``) admitted the group and lifted the gate the whole job binds.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from tests.support import nativebed, upstream
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
CASES = [  # (operator, example, job name, gang size)
    ("training-operator", "tensorflow/simple.yaml", "tfjob-simple", 2),
    ("training-operator", "pytorch/simple.yaml", "pytorch-simple", 2),
    ("training-operator", "mpi/tensorflow-mnist.yaml", "tensorflow-mnist", 3),
    ("training-operator", "xgboost/xgboostjob.yaml", "xgboost-dist-iris-test-train", 3),
    ("training-operator", "paddlepaddle/simple-cpu.yaml", "paddle-simple-cpu", 2),
    ("training-operator", "jax/cpu-demo/demo.yaml", "jaxjob-simple", 2),
    ("mpi-operator", "v2beta1/pi/pi.yaml", "pi", 3),
]


@pytest.fixture(scope="module", params=sorted({c[0] for c in CASES}))
def bed(
    request: pytest.FixtureRequest, bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, k8s.ApiClient]]:
    """(operator, client): one bed per operator, the cases of that operator on it."""
    workdir = tmp_path_factory.mktemp("native-" + request.param)
    with nativebed.run(
        bins,
        workdir,
        namespace="native-ops",
        prefix="nt",
        nodes_count=4,
        cpu="8",
        backend="native",
        operator=request.param,
    ) as client:
        yield request.param, client


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("operator", "rel", "job", "size"), CASES, ids=[c[2] for c in CASES])
def test_operator_example_is_gang_scheduled_by_kube_scheduler(
    bed: tuple[str, k8s.ApiClient], operator: str, rel: str, job: str, size: int
) -> None:
    running, api = bed
    if running != operator:
        pytest.skip(f"a case of {operator}, not of this bed's {running}")
    ns = job
    labels = {"vbridge.io/gang-scheduling": "enabled"}
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns, labels=labels)))
    body = upstream.example(operator, rel)
    group, version = body["apiVersion"].split("/")
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(group, version, ns, body["kind"].lower() + "s", body)
    placed = nativebed.gang_placed(api, ns, f"training.kubeflow.org/job-name={job}", job, size)
    assert len(placed) >= size
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in placed} == {job}
    assert all(p["spec"]["nodeName"] and not p["spec"].get("schedulingGates") for p in placed)
