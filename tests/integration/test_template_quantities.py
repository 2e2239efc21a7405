"""Template quantities out of apimachinery's range are denied through the real apiserver, naming the
field, before a single pod is made from them (each such pod create would hold kube-apiserver's CPU
while it rounds "1e-999999999"), on CREATE and on UPDATE."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import bridgethread, upstream
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
VALUES = ["1e-999999999", "1e999999999", "1E-30", "9" * 200]


@pytest.fixture(scope="module", autouse=True)
def crds(control_plane: cluster.LocalCluster) -> None:
    upstream.install(control_plane, "spark-operator", "training-operator")


def _vcjob(value: str) -> dict[str, Any]:
    return vcjob.simple("big", cpu=value)


def _tfjob(value: str) -> dict[str, Any]:
    return kf.tfjob("big", Worker=kf.replica(2, kf.container(cpu="1", memory=value)))


def _spark(value: str) -> dict[str, Any]:
    return spark.app(batchScheduler="volcano", executor={"coreLimit": value})


KINDS: list[tuple[Callable[[str], dict[str, Any]], str]] = [
    (_vcjob, "spec.tasks[0].template.spec.containers[0].resources.requests.cpu"),
    (_tfjob, "spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.requests.memory"),
    (_spark, "spec.executor.coreLimit"),
]


def _call(api: k8s.ApiClient, ns: str, body: dict[str, Any], name: str | None = None) -> str:
    """The apiserver's denial of creating ``body`` (replacing object ``name`` when given)."""
    body = copy.deepcopy(body)
    body["metadata"].pop("namespace", None)
    group, version = body["apiVersion"].split("/")
    crd, plural = k8s.CustomObjectsApi(api), body["kind"].lower() + "s"
    with pytest.raises(k8s.ApiException) as info:
        if name is None:
            crd.create_namespaced_custom_object(group, version, ns, plural, body)
        else:
            crd.replace_namespaced_custom_object(group, version, ns, plural, name, body)
    assert info.value.status == 400, info.value.body
    return str(info.value.body)


@pytest.mark.parametrize(("build", "field"), KINDS, ids=["vcjob", "tfjob", "sparkapplication"])
def test_out_of_range_template_quantities_are_denied(
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    namespace: str,
    build: Callable[[str], dict[str, Any]],
    field: str,
) -> None:
    for value in VALUES:
        assert f"volcano-bridge: {field} " in _call(api_client, namespace, build(value))
    sane = build("2")
    sane["metadata"].pop("namespace", None)
    group, version = sane["apiVersion"].split("/")
    crd = k8s.CustomObjectsApi(api_client)
    made = crd.create_namespaced_custom_object(group, version, namespace, sane["kind"].lower() + "s", sane)
    changed = {**build("1e-999999999"), "metadata": made["metadata"]}
    assert f"volcano-bridge: {field} " in _call(api_client, namespace, changed, made["metadata"]["name"])
    for pod in k8s.CoreV1Api(api_client).list_namespaced_pod(namespace).items:
        assert "e-999999999" not in str(pod.spec.containers[0].resources)
