"""A Volcano PodGroup as the native Workload and PodGroup (pure)."""

from __future__ import annotations

from typing import Any

from bridge import keys, staging
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


def staged(*stages: dict[str, int]) -> dict[str, Any]:
    """A JobSet's group: the first stage its gang, the stages on its annotation."""
    pg = group(sum(stages[0].values()))
    pg["metadata"]["annotations"] = {keys.STAGES: staging.encode((s, "") for s in stages)}
    return pg


def test_a_staged_group_is_one_template_and_one_native_group_per_stage() -> None:
    pg = staged({"node": 3}, {"launcher": 1})
    templates = native_workloads.workload(pg)["spec"]["podGroupTemplates"]
    assert [(t["name"], t["schedulingPolicy"]) for t in templates] == [
        ("stage-1", {"gang": {"minCount": 3}}),
        ("stage-2", {"basic": {}}),
    ]
    groups = native_workloads.podgroups(pg)
    assert [(g["metadata"]["name"], g["spec"]["workloadRef"]) for g in groups] == [
        ("mnist", {"workloadName": "mnist", "templateName": "stage-1"}),
        ("mnist-stage-2", {"workloadName": "mnist", "templateName": "stage-2"}),
    ]
    assert native_workloads.podgroup(pg) == groups[0]
    assert all(g["metadata"]["ownerReferences"] == [OWNER] for g in groups)


def test_stages_past_a_workloads_eight_templates_share_the_last() -> None:
    pg = staged(*({f"t{i}": 2} for i in range(10)))
    templates = native_workloads.workload(pg)["spec"]["podGroupTemplates"]
    assert len(templates) == native_workloads.MOST_TEMPLATES
    assert templates[-1]["schedulingPolicy"] == {"gang": {"minCount": 6}}  # stages 8, 9 and 10
    assert native_workloads.stage_group("mnist", 9) == native_workloads.stage_group("mnist", 7) == "mnist-stage-8"


def test_a_group_of_one_stage_or_an_unreadable_annotation_keeps_the_one_template() -> None:
    for raw in (staging.encode([({"node": 4}, "")]), "not json"):
        pg = group(4)
        pg["metadata"]["annotations"] = {keys.STAGES: raw}
        assert [t["name"] for t in native_workloads.workload(pg)["spec"]["podGroupTemplates"]] == ["gang"]
        assert [g["metadata"]["name"] for g in native_workloads.podgroups(pg)] == ["mnist"]


def test_a_tasks_pods_join_the_first_stage_that_brings_any() -> None:
    stages = [{"leader"}, {"leader", "worker"}, {"launcher"}]
    assert [native_workloads.stage_of(stages, t) for t in ("leader", "worker", "launcher", "none")] == [0, 1, 2, 0]
