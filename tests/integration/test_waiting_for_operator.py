"""A Kubeflow job whose operator is not running: its PodGroup is admitted (Inqueue) and says, in a
condition and an Event ``kubectl describe podgroup`` shows, how many of its pods exist and that
the operator has not created the rest; ``vbridge explain`` says the same. Real apiserver, our
webhook, reconcilers and scheduler (as ``volcano``), the shared simulated nodes, no operator.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from tests.builders import kubeflow
from tests.support import apiserver, bridgethread, upstream, vcjobs
from vbridge import cli
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
scheduler = vcjobs.scheduler  # the fixture: our scheduler as ``volcano``
WHO = "the Kubeflow training-operator has not created them"


@pytest.fixture(scope="module")
def tfjob_crd(control_plane: cluster.LocalCluster) -> None:
    upstream.install(control_plane, "training-operator")


def _condition(api: k8s.ApiClient, ns: str, name: str) -> tuple[str, dict[str, Any]] | None:
    """(phase, Unschedulable condition) of PodGroup ``name`` once it has one."""
    group = next((g for g in apiserver.podgroups(api, ns) if g["metadata"]["name"] == name), None)
    status = (group or {}).get("status") or {}
    found = next((c for c in status.get("conditions") or [] if c["type"] == "Unschedulable"), None)
    return (status["phase"], found) if found else None


def _warnings(api: k8s.ApiClient, ns: str, name: str) -> list[str]:
    events = k8s.CoreV1Api(api).list_namespaced_event(ns, field_selector=f"involvedObject.name={name}").items
    return [e.message for e in events if e.involved_object.kind == "PodGroup" and e.type == "Warning"]


def test_a_tfjob_without_its_operator_says_it_waits_for_the_operator_to_create_its_pods(
    control_plane: cluster.LocalCluster,
    api_client: k8s.ApiClient,
    bridge: bridgethread.BridgeThread,
    scheduler: Any,
    tfjob_crd: None,
    namespace: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    job = kubeflow.tfjob("mnist", Worker=kubeflow.replica(2, kubeflow.container("tensorflow", "1", "1Gi")))
    job["metadata"]["namespace"] = namespace
    k8s.CustomObjectsApi(api_client).create_namespaced_custom_object("kubeflow.org", "v1", namespace, "tfjobs", job)

    phase, condition = apiserver.eventually(
        lambda: _condition(api_client, namespace, "mnist"), 30, "an Unschedulable condition on the TFJob's PodGroup"
    )
    assert (phase, condition["reason"], condition["message"]) == (
        "Inqueue",
        "NotEnoughTasks",
        f"0 of 2 pods exist: {WHO}",
    )
    assert apiserver.eventually(
        lambda: f"0 of 2 pods exist: {WHO}" in _warnings(api_client, namespace, "mnist"), 30, "the PodGroup's Event"
    )
    kc = f"--kubeconfig={control_plane.kubeconfig}"
    assert cli.main(["explain", "tfjob/mnist", "-n", namespace, kc]) == 0
    assert f"verdict: 0 of 2 pods exist: {WHO} (the PodGroup is admitted)" in capsys.readouterr().out

    # The operator makes one of the two pods: the condition and a new Event count it.
    pod = kubeflow.operator_pod("mnist", "worker")
    pod["metadata"]["namespace"] = namespace
    k8s.CoreV1Api(api_client).create_namespaced_pod(namespace, pod)
    apiserver.eventually(
        lambda: (c := _condition(api_client, namespace, "mnist")) and c[1]["message"] == f"1 of 2 pods exist: {WHO}",
        30,
        "the condition to count the pod that exists",
    )
    assert apiserver.eventually(
        lambda: f"1 of 2 pods exist: {WHO}" in _warnings(api_client, namespace, "mnist"), 30, "a new Event"
    )
