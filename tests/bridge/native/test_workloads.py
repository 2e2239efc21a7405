"""A Volcano PodGroup as the native Workload and PodGroup (pure)."""

from __future__ import annotations

from typing import Any

from bridge.native import workloads as native_workloads

OWNER = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "mnist", "uid": "u-1", "controller": True}


def group(min_member: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "mnist", "namespace": "team", "ownerReferences": [OWNER]},
        "spec": {"minMember": min_member, "queue": "default", **spec},
    }


def test_a_gang_is_one_template_with_min_count_all_or_nothing_and_its_priority() -> None:
    got = native_workloads.workload(group(4, priorityClassName="high"))
    assert got == {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "mnist", "namespace": "team", "ownerReferences": [OWNER]},
        "spec": {
            "controllerRef": {"apiGroup": "kubeflow.org", "kind": "TFJob", "name": "mnist"},
            "podGroupTemplates": [
                {
                    "name": "gang",
                    "schedulingPolicy": {"gang": {"minCount": 4}},
                    "disruptionMode": {"all": {}},
                    "priorityClassName": "high",
                }
            ],
        },
    }


def test_the_runtime_podgroup_refers_to_its_template_with_the_same_policy() -> None:
    got = native_workloads.podgroup(group(4))
    assert got["kind"] == "PodGroup" and got["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert got["metadata"]["ownerReferences"] == [OWNER]
    assert got["spec"] == {
        "workloadRef": {"workloadName": "mnist", "templateName": "gang"},
        "schedulingPolicy": {"gang": {"minCount": 4}},
        "disruptionMode": {"all": {}},
    }


def test_a_group_of_one_is_basic_and_disrupted_pod_by_pod() -> None:
    template = native_workloads.workload(group(1))["spec"]["podGroupTemplates"][0]
    assert template == {"name": "gang", "schedulingPolicy": {"basic": {}}}


def test_a_core_kind_owner_has_the_empty_api_group_and_no_owner_means_no_controller_ref() -> None:
    pg = group(2)
    pg["metadata"]["ownerReferences"] = [{**OWNER, "apiVersion": "v1", "kind": "Pod", "name": "driver"}]
    assert native_workloads.workload(pg)["spec"]["controllerRef"] == {"apiGroup": "", "kind": "Pod", "name": "driver"}
    pg["metadata"].pop("ownerReferences")
    assert "controllerRef" not in native_workloads.workload(pg)["spec"]


def test_stamp_sets_the_scheduling_group_and_leaves_the_input_alone() -> None:
    spec = {"containers": [{"name": "c"}]}
    assert native_workloads.stamp(spec, "mnist") == {**spec, "schedulingGroup": {"podGroupName": "mnist"}}
    assert "schedulingGroup" not in spec
