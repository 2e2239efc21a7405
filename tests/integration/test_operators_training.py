"""The real training-operator (v1.9.4, default flags: no --gang-scheduler-name) with our bridge.

TFJob, PyTorchJob and MPIJob v1 examples from the operator's own module (``examples/``), unchanged
except for the namespace, in a namespace opted in with ``vbridge.io/gang-scheduling=enabled``.
The operator's validating webhooks run too (its own configuration from manifests/base/webhook).
Each job gets exactly one PodGroup (ours), and every pod the operator creates carries the stamps.
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
Env = tuple[k8s.ApiClient, Any, common.Gang]
TASK_SPEC = "volcano.sh/task-spec"


@pytest.fixture(scope="module")
def env(bins: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    yield from operator_env.running("training-operator", bins, tmp_path_factory)


def example(rel: str) -> dict[str, Any]:
    return operator_env.upstream_example("training-operator", rel)


def opted_in_namespace(api: k8s.ApiClient, name: str) -> str:
    labels = {"vbridge.io/gang-scheduling": "enabled"}
    k8s.CoreV1Api(api).create_namespace(k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels=labels)))
    return name


def create(api: k8s.ApiClient, ns: str, body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = k8s.CustomObjectsApi(api).create_namespaced_custom_object(
        "kubeflow.org", "v1", ns, body["kind"].lower() + "s", body
    )
    return out


def job_pods(api: k8s.ApiClient, op: Any, ns: str, job: str, count: int) -> list[dict[str, Any]]:
    def probe() -> list[dict[str, Any]] | None:
        found = common.pods(api, ns, f"training.kubeflow.org/job-name={job}")
        return found if len(found) == count else None

    return eventually(probe, timeout=60, what=f"{count} pods of {job}\n{op.tail()}")


def check(
    api: k8s.ApiClient, op: Any, gang: common.Gang, ns: str, kind: str, job: str, roles: dict[str, int]
) -> dict[str, Any]:
    [pg] = eventually(lambda: common.podgroups(api, ns), what=f"{job}'s PodGroup")
    assert pg["metadata"]["name"] == job
    assert pg["spec"]["minMember"] == sum(roles.values())
    assert pg["spec"]["minTaskMember"] == {r.lower(): n for r, n in roles.items()}
    owner = pg["metadata"]["ownerReferences"][0]
    assert owner["name"] == job and owner["controller"] is True
    pods = job_pods(api, op, ns, job, sum(roles.values()))
    for pod in pods:
        role = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["metadata"]["annotations"][GROUP_NAME] == job
        assert pod["metadata"]["annotations"][TASK_SPEC] == role
    assert len(common.podgroups(api, ns)) == 1  # the operator made none of its own
    if gang.on:
        # Our scheduler binds the whole gang; the simulated nodes finish the pods, so the
        # operator sees its job through to the end.
        common.eventually_bound(api, ns, f"training.kubeflow.org/job-name={job}", sum(roles.values()))
        eventually(
            lambda: condition(api, ns, kind, job) == "Succeeded", timeout=120, what=f"{job} to succeed\n{op.tail()}"
        )
    return pg


def condition(api: k8s.ApiClient, ns: str, kind: str, job: str) -> str:
    obj = k8s.CustomObjectsApi(api).get_namespaced_custom_object("kubeflow.org", "v1", ns, kind, job)
    conds = [c["type"] for c in (obj.get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
    return conds[-1] if conds else ""


@pytest.mark.timeout(600)
def test_tfjob_simple_example(env: Env) -> None:
    api, op, gang = env
    ns = opted_in_namespace(api, "tf")
    create(api, ns, example("tensorflow/simple.yaml"))
    check(api, op, gang, ns, "tfjobs", "tfjob-simple", {"Worker": 2})


@pytest.mark.timeout(600)
def test_pytorchjob_simple_example(env: Env) -> None:
    api, op, gang = env
    ns = opted_in_namespace(api, "torch")
    create(api, ns, example("pytorch/simple.yaml"))
    check(api, op, gang, ns, "pytorchjobs", "pytorch-simple", {"Master": 1, "Worker": 1})


@pytest.mark.timeout(600)
def test_mpijob_v1_example(env: Env) -> None:
    api, op, gang = env
    ns = opted_in_namespace(api, "mpi-v1")
    create(api, ns, example("mpi/tensorflow-mnist.yaml"))
    check(api, op, gang, ns, "mpijobs", "tensorflow-mnist", {"Launcher": 1, "Worker": 2})


@pytest.mark.timeout(600)
def test_operator_validating_webhook_is_live(env: Env) -> None:
    api, _, _ = env
    ns = opted_in_namespace(api, "invalid")
    body = example("tensorflow/simple.yaml")
    body["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "not-tensorflow"
    with pytest.raises(k8s.ApiException) as denied:
        create(api, ns, body)
    assert "validator.tfjob.training-operator.kubeflow.org" in denied.value.body
