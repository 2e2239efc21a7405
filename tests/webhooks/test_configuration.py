"""The MutatingWebhookConfiguration as generated from the adapter registry."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bridge.adapters import registry
from webhooks import configuration


def build(**kw: Any) -> dict[str, Any]:
    return configuration.build(ca_bundle=b"CA", url="https://bridge:9443/", **kw)


def hooks(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["name"]: h for h in body["webhooks"]}


def test_one_webhook_per_adapter_routed_to_its_path() -> None:
    body = build()
    assert [h["clientConfig"]["url"] for h in body["webhooks"]] == [
        "https://bridge:9443" + a.registration.path for a in registry.ADAPTERS
    ]
    assert all(base64.b64decode(h["clientConfig"]["caBundle"]) == b"CA" for h in body["webhooks"])
    tf = hooks(body)["tfjob.kubeflow.org.vbridge.io"]
    assert tf["rules"] == [
        {
            "apiGroups": ["kubeflow.org"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["tfjobs"],
            "scope": "Namespaced",
        }
    ]
    assert tf["sideEffects"] == "None" and tf["reinvocationPolicy"] == "Never"


def test_failure_policies_come_from_the_registry_and_pods_never_block() -> None:
    by_name = hooks(build())
    for adapter in registry.ADAPTERS:
        reg = adapter.registration
        assert by_name[configuration.webhook_name(reg)]["failurePolicy"] == reg.failure_policy
    # Pods, the PodGroups and Queues the scheduler judges again, and Commands (the controller
    # refuses one with no author recorded) never block on a bridge outage.
    never_block = {"pods", "podgroups", "queues", "commands"}
    pods = [h for h in by_name.values() if h["rules"][0]["resources"][0] in never_block]
    kinds = sum(1 for a in registry.ADAPTERS if a.registration.plural in never_block)
    assert len(pods) == kinds >= 6 and {h["failurePolicy"] for h in pods} == {"Ignore"}
    jobs = [h for h in by_name.values() if h["rules"][0]["resources"][0] not in never_block]
    assert jobs and {h["failurePolicy"] for h in jobs} == {"Fail"}


def test_excluded_namespaces_are_left_out_sorted_and_once() -> None:
    body = build(exclude_namespaces=("volcano-bridge", "kube-system", "volcano-bridge"))
    namespaced = [h for h in body["webhooks"] if h["rules"][0]["scope"] == "Namespaced"]
    assert len(namespaced) == len(body["webhooks"]) - 1
    for hook in namespaced:
        assert hook["namespaceSelector"]["matchExpressions"] == [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "volcano-bridge"]}
        ]
    (queues,) = [h for h in body["webhooks"] if h["rules"][0]["scope"] == "Cluster"]
    assert queues["rules"][0]["resources"] == ["queues"] and "namespaceSelector" not in queues


def test_pod_webhooks_select_their_labels_and_skip_grouped_pods() -> None:
    by_name = hooks(build())
    assert by_name["pod.spark.apache.org.vbridge.io"]["objectSelector"] == {
        "matchExpressions": [
            {"key": "spark-role", "operator": "Exists"},
            {"key": "vbridge.io/grouped", "operator": "DoesNotExist"},
        ]
    }
    assert by_name["pod.kubeflow.org.vbridge.io"]["objectSelector"]["matchExpressions"][0] == {
        "key": "training.kubeflow.org/job-name",
        "operator": "Exists",
    }
    assert "objectSelector" not in by_name["tfjob.kubeflow.org.vbridge.io"]


def test_match_conditions_skip_mirror_pods_and_done_pods_with_the_scheduler_name() -> None:
    by_name = hooks(build(scheduler_name="gang"))
    spark = {c["name"]: c["expression"] for c in by_name["pod.spark.apache.org.vbridge.io"]["matchConditions"]}
    assert set(spark) == {"not-a-mirror-pod", "not-done-already"}
    assert "kubernetes.io/config.mirror" in spark["not-a-mirror-pod"]
    assert "object.spec.schedulerName == 'gang'" in spark["not-done-already"] and "{scheduler}" not in str(spark)
    assert spark["not-done-already"].startswith("!(")
    assert [c["name"] for c in by_name["tfjob.kubeflow.org.vbridge.io"]["matchConditions"]] == ["changed-on-update"]


def test_updates_are_sent_only_when_the_spec_or_the_annotations_change() -> None:
    """The scheduler writes a PodGroup's status on the object: those writes must not reach us."""
    by_name = hooks(build())
    for adapter in registry.ADAPTERS:
        reg = adapter.registration
        names = [c["name"] for c in by_name[configuration.webhook_name(reg)].get("matchConditions", [])]
        assert ("changed-on-update" in names) == ("UPDATE" in reg.operations), reg.name
    (changed,) = by_name["podgroup.scheduling.volcano.sh.vbridge.io"]["matchConditions"]
    assert changed["expression"].startswith("request.operation != 'UPDATE' || ")
    assert "object.spec != oldObject.spec" in changed["expression"]
    assert "object.metadata.annotations != oldObject.metadata.annotations" in changed["expression"]


def test_a_service_reference_for_the_chart_and_one_of_url_or_service_required() -> None:
    body = configuration.build(ca_bundle=b"CA", service=("vb", "vb-webhook", 443))
    assert body["webhooks"][0]["clientConfig"]["service"] == {
        "namespace": "vb",
        "name": "vb-webhook",
        "port": 443,
        "path": registry.ADAPTERS[0].registration.path,
    }
    with pytest.raises(ValueError, match="either url or service"):
        configuration.build(ca_bundle=b"CA")


def test_on_the_native_backend_pod_webhooks_skip_only_pods_already_in_a_native_group() -> None:
    by_name = hooks(build(backend="native"))
    for name in ("pod.spark.apache.org.vbridge.io", "pod.kubeflow.org.vbridge.io"):
        done = {c["name"]: c["expression"] for c in by_name[name]["matchConditions"]}["not-done-already"]
        assert done == f"!({configuration.NATIVE_POD_DONE})"
    assert hooks(build())["tfjob.kubeflow.org.vbridge.io"] == by_name["tfjob.kubeflow.org.vbridge.io"]
