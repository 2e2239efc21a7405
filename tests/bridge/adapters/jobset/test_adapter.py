"""The JobSet adapter beyond its golden cases: the queue, Kueue's label, what is not ours, finished."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from bridge import errors, queues
from bridge.adapters import base, registry
from bridge.adapters.jobset import adapter as jobset_adapter
from tests.builders import jobset as js

JOBSET = jobset_adapter.JobSetAdapter()
QUEUES = {"default": queues.QueueFacts(), "research": queues.QueueFacts(), "ops": queues.QueueFacts()}
CTX = base.Context(namespace="team-a", queues=QUEUES)
QUEUE = "scheduling.volcano.sh/queue-name"


def _group(obj: dict[str, Any], ctx: base.Context = CTX) -> dict[str, Any]:
    admitted = JOBSET.admit(obj, ctx)
    assert admitted is not None
    group = JOBSET.podgroup(admitted.desired, ctx)
    assert group is not None
    return group


def test_the_registry_routes_jobsets_to_it() -> None:
    assert [type(a) for a in registry.for_object(js.jobset("x", js.rjob("a")))] == [jobset_adapter.JobSetAdapter]
    assert registry.by_path("/mutate/jobset-x-k8s-io-jobset") is not None


@pytest.mark.parametrize(
    ("labels", "annotations", "namespace", "queue"),
    [
        ({}, {}, {}, "default"),
        ({}, {}, {QUEUE: "ops"}, "ops"),
        ({QUEUE: "research"}, {}, {QUEUE: "ops"}, "research"),
        ({}, {QUEUE: "research"}, {QUEUE: "ops"}, "research"),
        ({QUEUE: "ops"}, {QUEUE: "research"}, {}, "research"),  # the annotation wins over the label
    ],
)
def test_the_queue_is_the_jobsets_annotation_or_label_then_the_usual_resolution(
    labels: dict[str, str], annotations: dict[str, str], namespace: dict[str, str], queue: str
) -> None:
    ctx = base.Context(namespace="team-a", queues=QUEUES, namespace_annotations=namespace)
    obj = js.jobset("x", js.rjob("a"), labels=labels, annotations=annotations)
    assert _group(obj, ctx)["spec"]["queue"] == queue
    assert JOBSET.queue_of(obj, ctx) == queue


def test_a_queue_that_does_not_exist_is_denied() -> None:
    with pytest.raises(errors.QueueError, match="does not exist"):
        JOBSET.admit(js.jobset("x", js.rjob("a"), labels={QUEUE: "nope"}), CTX)


def test_kueues_queue_name_is_never_our_queue_and_admission_says_so() -> None:
    obj = js.jobset("x", js.rjob("a"), labels={"kueue.x-k8s.io/queue-name": "research"})
    admitted = JOBSET.admit(obj, CTX)
    assert admitted is not None
    assert _group(obj)["spec"]["queue"] == "default"
    assert len(admitted.warnings) == 1
    assert "Kueue LocalQueue" in admitted.warnings[0] and "'default'" in admitted.warnings[0]
    plain = JOBSET.admit(js.jobset("x", js.rjob("a")), CTX)
    assert plain is not None and plain.warnings == ()


def test_opted_out_or_run_by_another_controller_is_not_ours() -> None:
    opted_out = js.jobset("x", js.rjob("a"), labels={"vbridge.io/gang-scheduling": "disabled"})
    elsewhere = js.jobset("x", js.rjob("a"), managedBy="kueue.x-k8s.io/multikueue")
    for obj in (opted_out, elsewhere):
        assert JOBSET.admit(obj, CTX) is None
        assert JOBSET.podgroup(obj, CTX) is None
    ours = js.jobset("x", js.rjob("a"), managedBy="jobset.sigs.k8s.io/jobset-controller")
    assert JOBSET.admit(ours, CTX) is not None


def test_every_pod_template_is_stamped_with_its_replicated_job_as_task() -> None:
    admitted = JOBSET.admit(js.torchtune("tune"), CTX)
    assert admitted is not None
    for rj in admitted.desired["spec"]["replicatedJobs"]:
        template = rj["template"]["spec"]["template"]
        assert template["metadata"]["annotations"] == {
            "scheduling.k8s.io/group-name": "tune",
            "volcano.sh/task-spec": rj["name"],
        }
        assert template["spec"]["schedulerName"] == "volcano"


def test_a_scheduler_the_user_chose_is_kept() -> None:
    spec = {**js.pod(), "schedulerName": "kai-scheduler"}
    admitted = JOBSET.admit(js.jobset("x", js.rjob("a", spec=spec)), CTX)
    assert admitted is not None
    assert admitted.desired["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["schedulerName"] == (
        "kai-scheduler"
    )


def test_the_group_is_the_first_stage_with_the_room_of_the_whole_and_the_stages_annotated() -> None:
    group = _group(js.deepspeed("ds", nodes=3))
    assert group["spec"]["minMember"] == 3
    assert group["spec"]["minTaskMember"] == {"node": 3}
    assert group["spec"]["minResources"] == {"cpu": "7", "memory": "14Gi", "nvidia.com/gpu": "3"}
    assert json.loads(group["metadata"]["annotations"]["vbridge.io/stages"])[1] == {
        "tasks": {"launcher": 1},
        "after": "node Ready",
    }


def test_a_jobset_without_pods_needs_no_group() -> None:
    admitted = JOBSET.admit(js.jobset("x", js.rjob("a", replicas=0)), CTX)
    assert admitted is not None and JOBSET.podgroup(admitted.desired, CTX) is None


def test_a_running_jobset_made_before_us_is_left_alone_until_it_is_suspended() -> None:
    before = js.jobset("x", js.rjob("a"))
    assert JOBSET.podgroup(before, CTX) is None  # its pods name no group
    relabelled = {**before, "metadata": {**before["metadata"], "labels": {"team": "a"}}}
    assert JOBSET.admit(relabelled, dataclasses.replace(CTX, previous=before)) is None
    suspended = {**relabelled, "spec": {**relabelled["spec"], "suspend": True}}
    admitted = JOBSET.admit(suspended, dataclasses.replace(CTX, previous=before))
    assert admitted is not None and JOBSET.podgroup(admitted.desired, CTX) is not None
    # an old object of any shape is read without a failure (admission shapes only the new one)
    assert JOBSET.admit(relabelled, dataclasses.replace(CTX, previous={"spec": [], "metadata": "x"})) is None
    # once stamped, an UPDATE is stamped (unchanged) like a CREATE
    again = JOBSET.admit(admitted.desired, dataclasses.replace(CTX, previous=admitted.desired))
    assert again is not None and again.desired == admitted.desired


def test_a_malformed_pod_template_is_denied_with_its_path() -> None:
    spec = js.pod()
    spec["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    with pytest.raises(errors.InvalidObjectError, match=r"replicatedJobs\[0\]"):
        JOBSET.admit(js.jobset("x", js.rjob("a", spec=spec)), CTX)


@pytest.mark.parametrize(
    ("status", "done"),
    [
        ({}, False),
        ({"conditions": [{"type": "StartupPolicyInProgress", "status": "True"}]}, False),
        ({"conditions": [{"type": "Suspended", "status": "True"}]}, False),
        ({"conditions": [{"type": "Completed", "status": "False"}]}, False),
        ({"conditions": [{"type": "Completed", "status": "True"}]}, True),
        ({"conditions": [{"type": "Failed", "status": "True"}]}, True),
        ({"terminalState": "Failed"}, True),
    ],
)
def test_a_jobset_is_finished_by_its_terminal_state_or_conditions(status: dict[str, Any], done: bool) -> None:
    assert JOBSET.finished({**js.jobset("x", js.rjob("a")), "status": status}) is done
