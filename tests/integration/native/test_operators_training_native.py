"""The real training-operator (v1.9.4) on the native backend: its own examples, unchanged,
gang-scheduled by kube-scheduler.

As ``tests/integration/test_operators_training.py`` runs them on the volcano backend, in a
namespace opted in with ``vbridge.io/gang-scheduling=enabled``; here the bridge runs with
``backend="native"`` on a control plane with the Workload API and kube-scheduler places the
pods. Each job gets its Volcano PodGroup (our record) and a native PodGroup of the same name
whose ``minCount`` is our ``minMember``; every pod the operator creates joins it
(``spec.schedulingGroup``, which the operator, built on an older ``k8s.io/api``, drops from the
template, so the pod webhook sets it), waits on the queue gate, and once the gate is lifted
(``tests.support.queuegate``) the whole job binds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import keys
from tests.support import apiserver, nativebed, queuegate, upstream
from vbridge.localcluster import binaries

pytestmark = [pytest.mark.integration, pytest.mark.operators]
CASES = [  # (example, job name, gang size)
    ("tensorflow/simple.yaml", "tfjob-simple", 2),
    ("pytorch/simple.yaml", "pytorch-simple", 2),
    ("mpi/tensorflow-mnist.yaml", "tensorflow-mnist", 3),
]


@pytest.fixture(scope="module")
def api(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[k8s.ApiClient]:
    workdir = tmp_path_factory.mktemp("native-training")
    with nativebed.run(
        bins,
        workdir,
        namespace="native-ops",
        prefix="nt",
        nodes_count=4,
        cpu="8",
        backend="native",
        operator="training-operator",
    ) as client:
        yield client


def _native_pg(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any] | None:
    try:
        out: dict[str, Any] = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "scheduling.k8s.io", "v1beta1", ns, "podgroups", name
        )
        return out
    except k8s.ApiException as exc:
        if exc.status == 404:
            return None
        raise


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("rel", "job", "size"), CASES, ids=[c[1] for c in CASES])
def test_operator_example_is_gang_scheduled_by_kube_scheduler(
    api: k8s.ApiClient, rel: str, job: str, size: int
) -> None:
    ns = job
    labels = {"vbridge.io/gang-scheduling": "enabled"}
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=ns, labels=labels)))
    body = upstream.example("training-operator", rel)
    k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "kubeflow.org", "v1", ns, body["kind"].lower() + "s", body
    )
    native = apiserver.eventually(lambda: _native_pg(api, ns, job), timeout=60, what=f"{job}'s native PodGroup")
    assert native["spec"]["schedulingPolicy"] == {"gang": {"minCount": size}}

    def pods() -> list[dict[str, Any]] | None:
        found = apiserver.pods(api, ns, f"training.kubeflow.org/job-name={job}")
        return found if len(found) >= size else None

    for pod in apiserver.eventually(pods, timeout=120, what=f"{job}'s pods"):
        assert pod["spec"]["schedulerName"] == "default-scheduler"
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": job}
        assert {"name": keys.QUEUE_GATE} in pod["spec"].get("schedulingGates", [])
    apiserver.eventually(lambda: queuegate.lift(api, ns) or None, what="the gates lifted")

    def bound() -> list[dict[str, Any]] | None:
        found = apiserver.pods(api, ns, f"training.kubeflow.org/job-name={job}")
        return found if len(found) >= size and all(p["spec"].get("nodeName") for p in found) else None

    apiserver.eventually(bound, timeout=120, what=f"{job} bound whole by kube-scheduler")
