"""A spark-submit driver whose conf cannot be sized says so: a Warning Event and a pod condition.

No spark-submit needed: the driver pod and its conf ConfigMap are created as spark-submit would
create them. Our webhook gates the driver; the reconciler reads the conf, finds a malformed
``spark.executor.instances`` and, instead of leaving the driver gated in silence, records the
Event ``PodGroupNotCreated`` and the condition ``vbridge.io/PodGroupReady=False`` on the pod.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s

from bridge.adapters.spark import driver
from tests.builders import spark
from tests.support import bridgethread

pytestmark = pytest.mark.integration
T = TypeVar("T")


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.mark.parametrize("instances", ["abc", "-3"])
def test_a_malformed_executor_count_is_an_event_and_a_condition_on_the_driver(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str, instances: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    pod = spark.submit_pod("driver")
    pod["metadata"]["namespace"] = namespace
    conf_map = pod["spec"]["volumes"][0]["configMap"]["name"]
    core.create_namespaced_config_map(
        namespace,
        {
            "metadata": {"name": conf_map},
            "data": {"spark.properties": f"spark.executor.instances={instances}\nspark.executor.memory=1g\n"},
        },
    )
    core.create_namespaced_pod(namespace, pod)
    name = pod["metadata"]["name"]
    expected = f"spark.executor.instances must be a non-negative integer, got {instances!r}; the driver stays gated"

    def condition() -> dict[str, Any] | None:
        read = api_client.sanitize_for_serialization(core.read_namespaced_pod(name, namespace))
        found = [c for c in (read.get("status") or {}).get("conditions") or [] if c["type"] == driver.CONDITION]
        return found[0] if found else None

    def warnings() -> list[Any]:
        listed = core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
        return [e for e in listed if e.reason == "PodGroupNotCreated" and e.type == "Warning"]

    cond = eventually(condition, "the PodGroupReady condition")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "PodGroupNotCreated", expected)
    [event] = eventually(warnings, "the Warning Event")
    assert event.message == expected
    time.sleep(1.0)  # the condition's own write comes back as a pod event: it must not repeat the Event
    assert len(warnings()) == 1
    live = core.read_namespaced_pod(name, namespace)
    assert [g.name for g in live.spec.scheduling_gates] == ["vbridge.io/podgroup"]
    groups = k8s.CustomObjectsApi(api_client).list_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", namespace, "podgroups"
    )["items"]
    assert groups == []


def test_a_driver_waiting_for_an_operators_group_is_ungated_when_it_comes_without_a_pod_event(
    api_client: k8s.ApiClient, bridge: bridgethread.BridgeThread, namespace: str
) -> None:
    core = k8s.CoreV1Api(api_client)
    pod = spark.submit_pod("driver", annotations={"scheduling.k8s.io/group-name": "spark-pi-pg"})
    pod["metadata"]["namespace"] = namespace
    core.create_namespaced_pod(namespace, pod)
    core.create_namespaced_config_map(namespace, spark.conf_map())
    name = pod["metadata"]["name"]
    time.sleep(1.5)  # the scenario: the operator makes its group later, and nothing touches the gated pod
    group = {"metadata": {"name": "spark-pi-pg"}, "spec": {"minMember": 1, "queue": "default"}}
    group |= {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup"}
    k8s.CustomObjectsApi(api_client).create_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", group
    )
    eventually(lambda: not core.read_namespaced_pod(name, namespace).spec.scheduling_gates, "the gate lifted", 20)
