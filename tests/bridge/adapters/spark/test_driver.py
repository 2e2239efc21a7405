"""The pure decisions of the spark-submit reconciler: which pods, which group, the gate, the condition."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import errors, patching, queues
from bridge.adapters import base
from bridge.adapters.spark import driver, templates
from bridge.adapters.spark import pod as spark_pod
from tests.builders import spark

CTX = base.Context(namespace="team-a", queues={"default": queues.QueueFacts()})
GROUP = "spark-0123456789abcdef0123456789abcdef-podgroup"


def admitted(role: str = "driver", **kw: Any) -> dict[str, Any]:
    result = spark_pod.SparkPodAdapter().admit(spark.submit_pod(role, **kw), CTX)
    assert result is not None
    return result.desired


def test_only_gated_drivers_and_executors_of_our_groups_need_work() -> None:
    assert driver.gated_driver(admitted()) and not driver.gated_driver(spark.submit_pod("driver"))
    assert driver.ungrouped_executor(admitted("executor"))
    assert not driver.ungrouped_executor(admitted("executor", annotations={"scheduling.k8s.io/group-name": "g"}))
    going = patching.assoc(admitted("executor"), ("metadata", "deletionTimestamp"), "2025-01-01T00:00:00Z")
    assert not driver.ungrouped_executor(going)


def test_a_malformed_conf_is_an_invalid_object_naming_the_setting() -> None:
    with pytest.raises(errors.InvalidObjectError, match=r"spark\.executor\.instances must be a non-negative integer"):
        driver.podgroup(admitted(), CTX, conf={"spark.executor.instances": "abc"}, template=None)


def test_the_group_of_a_driver_sized_from_its_conf() -> None:
    group = driver.podgroup(admitted(), CTX, conf={"spark.executor.instances": "1"}, template=None)
    assert group is not None and group["metadata"]["name"] == GROUP
    # the driver's own requests (1 cpu, 896Mi) + one default executor (1 cpu, 1g + 384Mi)
    assert group["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "2", "memory": "2304Mi"}}


def test_a_group_named_by_others_is_not_ours_to_build() -> None:
    feature_step = admitted(annotations={"scheduling.k8s.io/group-name": "spark-pi-pg"})
    assert driver.podgroup(feature_step, CTX, conf={}, template=None) is None
    assert not driver.group_is_ours(feature_step) and driver.group_is_ours(admitted())


def test_a_refused_queue_is_a_queue_error() -> None:
    with pytest.raises(errors.QueueError, match="queue 'gpu' does not exist"):
        driver.podgroup(admitted(), CTX, conf={}, template={"spec": {"queue": "gpu"}})


def test_lifting_the_gate_keeps_other_gates_and_drops_an_empty_list() -> None:
    gated = admitted()
    assert "schedulingGates" not in driver.without_gate(gated)["spec"]
    other = patching.assoc(gated, ("spec", "schedulingGates"), [{"name": "x"}, *gated["spec"]["schedulingGates"]])
    assert driver.without_gate(other)["spec"]["schedulingGates"] == [{"name": "x"}]


def test_the_condition_is_written_once_per_cause() -> None:
    first = driver.with_condition(admitted(), ready=False, reason="PodGroupNotCreated", message="m", now="t1")
    assert first is not None
    assert first["status"]["conditions"] == [
        {
            "type": "vbridge.io/PodGroupReady",
            "status": "False",
            "reason": "PodGroupNotCreated",
            "message": "m",
            "lastTransitionTime": "t1",
        }
    ]
    assert driver.with_condition(first, ready=False, reason="PodGroupNotCreated", message="m", now="t2") is None
    other = driver.with_condition(first, ready=False, reason="QueueRejected", message="q", now="t2")
    assert other is not None and other["status"]["conditions"][0]["lastTransitionTime"] == "t1"  # still False
    ready = driver.with_condition(other, ready=True, reason="PodGroupReady", message="ok", now="t3")
    assert ready is not None and [c["status"] for c in ready["status"]["conditions"]] == ["True"]
    assert ready["status"]["conditions"][0]["lastTransitionTime"] == "t3"


def test_client_mode_executors_make_a_group_only_where_nobody_else_did() -> None:
    executor = {**admitted("executor"), "metadata": {**admitted("executor")["metadata"], "uid": "u-exec"}}
    group = driver.executor_podgroup(executor, CTX)
    assert group["spec"] == {"minMember": 1, "queue": "default"}
    assert group["metadata"]["ownerReferences"][0]["controller"] is False
    assert driver.executor_may_make(None)
    assert driver.executor_may_make(group)
    assert not driver.executor_may_make({"metadata": {"name": GROUP}})  # Spark made it
    owned = {**group, "metadata": {**group["metadata"], "ownerReferences": [{"kind": "Pod", "controller": True}]}}
    assert not driver.executor_may_make(owned)  # a driver owns it


@pytest.mark.parametrize(
    ("pod_annotations", "conf", "namespace_annotations", "expected"),
    [
        ({"vbridge.io/podgroup-template": "high.yaml"}, {}, {}, "high"),
        ({}, {"spark.kubernetes.scheduler.volcano.podGroupTemplateFile": "/tmp/high.yml"}, {}, "high"),
        ({}, {}, {"vbridge.io/podgroup-template": "high"}, "high"),
        ({}, {}, {}, "default"),
        ({"vbridge.io/podgroup-template": "missing"}, {}, {}, "default"),
    ],
)
def test_template_choice_first_match_wins(
    pod_annotations: dict[str, str], conf: dict[str, str], namespace_annotations: dict[str, str], expected: str
) -> None:
    found = {"high": {"spec": {"queue": "high"}}, "default": {"spec": {}}}
    name, body = templates.choose(
        found, pod_annotations=pod_annotations, conf=conf, namespace_annotations=namespace_annotations
    )
    assert (name, body) == (expected, found[expected])
    assert templates.choose({}, pod_annotations={}, conf={}, namespace_annotations={}) == (None, None)
