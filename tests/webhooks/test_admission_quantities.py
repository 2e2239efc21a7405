"""Every quantity of every template of every kind admitted is one apimachinery keeps as written,
on CREATE and on UPDATE: the denial names the field. Through ``admission.handle``, so the pods
go through their decoding view as the webhook reads them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bridge.adapters import base, registry
from tests.builders import jobset as js
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import admission as support

# Exponents past either bound, a decimal below 1n, a binary past 2^63 - 1, a huge digit string.
OUT_OF_RANGE = ["1e-999999999", "1e999999999", "1E-30", "-1e-30", "0.0000000001", "8Ei", "9" * 5000]
SANE = "500m"


def _resources(value: str) -> dict[str, Any]:
    return {"requests": {"cpu": value}}


def _vcjob_task(value: str) -> dict[str, Any]:
    return vcjob.simple("j", cpu=value)


def _vcjob_volume(value: str) -> dict[str, Any]:
    job = vcjob.simple("j")
    job["spec"]["volumes"] = [{"mountPath": "/data", "volumeClaim": {"resources": {"requests": {"storage": value}}}}]
    return job


def _tfjob(value: str) -> dict[str, Any]:
    return kf.tfjob(Worker=kf.replica(1, kf.container(cpu=value)))


def _jobset_launcher(value: str) -> dict[str, Any]:
    job = js.deepspeed("ds")
    job["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": value}
    }
    return job


def _pytorchjob_init(value: str) -> dict[str, Any]:
    job = kf.pytorchjob(Master=kf.replica(1))
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["initContainers"] = [
        {"name": "init", "resources": {"limits": {"memory": value}}}
    ]
    return job


def _mpijob_overhead(value: str, version: str = "v2beta1") -> dict[str, Any]:
    job = kf.mpijob(version=version, Launcher=kf.replica(1), Worker=kf.replica(2))
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["overhead"] = {"cpu": value}
    return job


def _mpijob_v1_pod_resources(value: str) -> dict[str, Any]:
    job = _mpijob_overhead(SANE, version="v1")
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["resources"] = {"limits": {"cpu": value}}
    return job


def _xgboostjob(value: str) -> dict[str, Any]:
    return kf.xgboostjob(Master=kf.replica(1, kf.container(memory=value)), Worker=kf.replica(2))


def _paddlejob_ephemeral(value: str) -> dict[str, Any]:
    job = kf.paddlejob(Worker=kf.replica(2))
    job["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"ephemeral-storage": value}
    }
    return job


def _jaxjob(value: str) -> dict[str, Any]:
    return kf.jaxjob(Worker=kf.replica(2, kf.container(cpu=value, limits=True)))


def _spark_core_request(value: str) -> dict[str, Any]:
    return spark.app(batchScheduler="volcano", driver={"coreRequest": value})


def _spark_executor_template(value: str) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "spark-kubernetes-executor", "resources": _resources(value)}]}}
    return spark.app(executor={"template": template})  # not even ours: its pods reach the apiserver


def _spark_volume(value: str) -> dict[str, Any]:
    return spark.app(batchScheduler="volcano", volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": value}}])


def _spark_connect_server(value: str) -> dict[str, Any]:
    connect = spark.connect()
    connect["spec"]["server"]["template"]["spec"]["containers"][0]["resources"] = _resources(value)
    return connect


def _spark_pod(value: str) -> dict[str, Any]:
    pod = spark.submit_pod("executor")
    pod["spec"]["containers"][0]["resources"]["limits"] = {"ephemeral-storage": value}
    return pod


def _kubeflow_pod(value: str) -> dict[str, Any]:
    pod = kf.operator_pod("mnist", "Worker")
    pod["spec"]["volumes"] = [
        {"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": value}}}}}}
    ]
    return pod


def _jobset_pod(value: str) -> dict[str, Any]:
    pod = js.operator_pod("ds", "launcher")
    pod["spec"]["initContainers"] = [{"name": "i", "image": "x", "resources": {"limits": {"memory": value}}}]
    return pod


def _podgroup(value: str) -> dict[str, Any]:
    spec = {"minMember": 1, "minResources": {"nvidia.com/gpu": value}}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": spec}


def _queue(field: str) -> Callable[[str], dict[str, Any]]:
    def build(value: str) -> dict[str, Any]:
        spec: dict[str, Any] = {"weight": 1}
        if field == "guarantee":
            spec["guarantee"] = {"resource": {"memory": value}}
        else:
            spec[field] = {"memory": value}
        return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": spec}

    return build


# (adapter, builder, the field path the denial names)
CASES: list[tuple[str, Callable[[str], dict[str, Any]], str]] = [
    ("batch.volcano.sh/job", _vcjob_task, "spec.tasks[0].template.spec.containers[0].resources.requests.cpu"),
    ("batch.volcano.sh/job", _vcjob_volume, "spec.volumes[0].volumeClaim.resources.requests.storage"),
    ("kubeflow.org/tfjob", _tfjob, "spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.requests.cpu"),
    (
        "kubeflow.org/pytorchjob",
        _pytorchjob_init,
        "spec.pytorchReplicaSpecs.Master.template.spec.initContainers[0].resources.limits.memory",
    ),
    (
        "jobset.x-k8s.io/jobset",
        _jobset_launcher,
        "spec.replicatedJobs[1].template.spec.template.spec.containers[0].resources.requests.cpu",
    ),
    ("kubeflow.org/mpijob", _mpijob_overhead, "spec.mpiReplicaSpecs.Worker.template.spec.overhead.cpu"),
    (
        "kubeflow.org/mpijob-v1",
        _mpijob_v1_pod_resources,
        "spec.mpiReplicaSpecs.Launcher.template.spec.resources.limits.cpu",
    ),
    (
        "kubeflow.org/xgboostjob",
        _xgboostjob,
        "spec.xgbReplicaSpecs.Master.template.spec.containers[0].resources.requests.memory",
    ),
    (
        "kubeflow.org/paddlejob",
        _paddlejob_ephemeral,
        "spec.paddleReplicaSpecs.Worker.template.spec.containers[0].resources.limits.ephemeral-storage",
    ),
    ("kubeflow.org/jaxjob", _jaxjob, "spec.jaxReplicaSpecs.Worker.template.spec.containers[0].resources.limits.cpu"),
    ("sparkoperator.k8s.io/sparkapplication", _spark_core_request, "spec.driver.coreRequest"),
    (
        "sparkoperator.k8s.io/sparkapplication",
        _spark_executor_template,
        "spec.executor.template.spec.containers[0].resources.requests.cpu",
    ),
    ("sparkoperator.k8s.io/sparkapplication", _spark_volume, "spec.volumes[0].emptyDir.sizeLimit"),
    (
        "sparkoperator.k8s.io/sparkconnect",
        _spark_connect_server,
        "spec.server.template.spec.containers[0].resources.requests.cpu",
    ),
    ("spark.apache.org/pod", _spark_pod, "spec.containers[0].resources.limits.ephemeral-storage"),
    (
        "kubeflow.org/pod",
        _kubeflow_pod,
        "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests.storage",
    ),
    ("jobset.x-k8s.io/pod", _jobset_pod, "spec.initContainers[0].resources.limits.memory"),
    ("scheduling.volcano.sh/podgroup", _podgroup, "spec.minResources.nvidia.com/gpu"),
    ("scheduling.volcano.sh/queue", _queue("capability"), "spec.capability.memory"),
    ("scheduling.volcano.sh/queue", _queue("deserved"), "spec.deserved.memory"),
    ("scheduling.volcano.sh/queue", _queue("guarantee"), "spec.guarantee.resource.memory"),
]
IDS = [f"{name}:{field}" for name, _, field in CASES]


def _adapter(name: str) -> base.Adapter:
    (found,) = [a for a in registry.ADAPTERS if a.registration.name == name]
    return found


def _answer(adapter: base.Adapter, obj: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    reg = adapter.registration
    kind = (reg.group, obj["apiVersion"].rpartition("/")[2], reg.kind)
    operation = "CREATE" if old is None else "UPDATE"
    return support.answer(support.review(obj, kind=kind, operation=operation, old=old), reg.path)


def test_every_kind_that_holds_quantities_is_covered() -> None:
    covered = {name for name, _, _ in CASES}
    assert covered == {a.registration.name for a in registry.ADAPTERS} - {"bus.volcano.sh/command"}


@pytest.mark.parametrize(("name", "build", "field"), CASES, ids=IDS)
def test_the_sane_value_is_admitted(name: str, build: Callable[[str], dict[str, Any]], field: str) -> None:
    assert _answer(_adapter(name), build(SANE))["allowed"] is True


@pytest.mark.parametrize("value", OUT_OF_RANGE, ids=lambda v: v[:16])
@pytest.mark.parametrize(("name", "build", "field"), CASES, ids=IDS)
def test_an_out_of_range_value_is_denied_naming_its_field(
    name: str, build: Callable[[str], dict[str, Any]], field: str, value: str
) -> None:
    adapter = _adapter(name)
    created = _answer(adapter, build(value))
    assert created["allowed"] is False and created["status"]["code"] == 400, created
    message = created["status"]["message"]
    assert message.startswith(f"volcano-bridge: {field} "), message
    assert any(why in message for why in ("is above 2^63 - 1", "is below 1n", "characters; a quantity needs")), message
    if "UPDATE" in adapter.registration.operations:
        updated = _answer(adapter, build(value), old=build(SANE))
        assert updated["allowed"] is False and updated["status"]["message"] == message
