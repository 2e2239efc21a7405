"""The stage rule (``bridge.adapters.jobset.stages``): which pods exist together, in what order, and the room."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge import errors, podresources
from bridge.adapters.jobset import stages
from tests.builders import jobset as js

EXCLUSIVE = {"alpha.jobset.sigs.k8s.io/exclusive-topology": "topology.kubernetes.io/zone"}


def _plan(obj: dict[str, Any]) -> stages.Plan:
    return stages.plan(stages.parts(obj["spec"], obj["metadata"].get("annotations")))


def _shape(plan: stages.Plan) -> list[tuple[dict[str, int], str]]:
    return [(dict(s.tasks), s.after) for s in plan.stages]


def _room(plan: stages.Plan) -> dict[str, str]:
    return podresources.format_list(plan.room)


def test_replicated_jobs_without_depends_on_are_one_stage_of_replicas_times_parallelism() -> None:
    plan = _plan(
        js.jobset(
            "all",
            js.rjob("driver", spec=js.pod("1", "1Gi")),
            js.rjob("workers", replicas=3, parallelism=2, spec=js.pod("2", "2Gi")),
        )
    )
    assert _shape(plan) == [({"driver": 1, "workers": 6}, "")]
    assert plan.stages[0].pods == 7
    assert _room(plan) == {"cpu": "13", "memory": "13Gi"}


@pytest.mark.parametrize(
    ("parallelism", "completions", "per_job"),
    [(None, None, 1), (4, None, 4), (4, 2, 2), (2, 8, 2), (0, 3, 0)],
)
def test_a_job_runs_parallelism_pods_at_most_completions(
    parallelism: int | None, completions: int | None, per_job: int
) -> None:
    rj = js.rjob("a", replicas=2, parallelism=parallelism, completions=completions)
    found = stages.parts(js.jobset("p", rj)["spec"])
    assert found[0].pods == 2 * per_job


def test_a_chain_with_ready_and_complete_is_one_stage_per_release_and_room_for_what_coexists() -> None:
    # prep runs to completion; then the servers; the clients join the servers once those are Ready
    plan = _plan(
        js.jobset(
            "chain",
            js.rjob("prep", spec=js.pod("8", "8Gi")),
            js.rjob("servers", replicas=2, depends={"prep": "Complete"}, spec=js.pod("2", "4Gi")),
            js.rjob("clients", parallelism=3, depends={"servers": "Ready"}, spec=js.pod("1", "1Gi")),
        )
    )
    assert _shape(plan) == [
        ({"prep": 1}, ""),
        ({"servers": 2}, "prep Complete"),
        ({"clients": 3}, "servers Ready"),
    ]
    # prep is over before the others start: the room is the larger of prep and servers + clients, per resource
    assert _room(plan) == {"cpu": "8", "memory": "11Gi"}


def test_a_ready_dependency_keeps_running_beside_its_dependents() -> None:
    plan = _plan(js.deepspeed(nodes=3))
    assert _shape(plan) == [({"node": 3}, ""), ({"launcher": 1}, "node Ready")]
    assert _room(plan) == {"cpu": "7", "memory": "14Gi", "nvidia.com/gpu": "3"}


def test_initializers_complete_before_the_trainer_so_they_never_share_its_room() -> None:
    plan = _plan(js.torchtune(nodes=2))
    assert _shape(plan) == [
        ({"dataset-initializer": 1, "model-initializer": 1}, ""),
        ({"node": 2}, "dataset-initializer Complete, model-initializer Complete"),
    ]
    assert _room(plan) == {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "2"}


def test_complete_of_an_ancestor_is_over_for_every_descendant() -> None:
    # c waits for b Ready, b for a Complete: a never coexists with c either
    plan = _plan(
        js.jobset(
            "deep",
            js.rjob("a", spec=js.pod("10", "1Gi")),
            js.rjob("b", depends={"a": "Complete"}, spec=js.pod("1", "1Gi")),
            js.rjob("c", depends={"b": "Ready"}, spec=js.pod("1", "1Gi")),
        )
    )
    assert _room(plan) == {"cpu": "10", "memory": "2Gi"}


def test_in_order_makes_each_replicated_job_a_later_stage_that_keeps_the_earlier_running() -> None:
    plan = _plan(js.jobset("seq", js.rjob("a"), js.rjob("b", replicas=2), js.rjob("c"), in_order=True))
    assert _shape(plan) == [({"a": 1}, ""), ({"b": 2}, "a Ready"), ({"c": 1}, "b Ready")]
    assert _room(plan) == {"cpu": "4", "memory": "4Gi"}


def test_replicated_jobs_waiting_for_the_same_thing_are_one_stage() -> None:
    plan = _plan(
        js.jobset("fan", js.rjob("a"), js.rjob("b", depends={"a": "Ready"}), js.rjob("c", depends={"a": "Ready"}))
    )
    assert _shape(plan) == [({"a": 1}, ""), ({"b": 1, "c": 1}, "a Ready")]


def test_under_exclusive_topology_followers_are_a_stage_after_their_leaders() -> None:
    obj = js.jobset("tpu", js.rjob("slice", replicas=2, parallelism=4, completions=4), annotations=dict(EXCLUSIVE))
    assert _shape(_plan(obj)) == [({"slice": 2}, ""), ({"slice": 6}, "leaders of slice scheduled")]
    # the node-selector strategy creates every pod at once
    obj["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/node-selector"] = "true"
    assert _shape(_plan(obj)) == [({"slice": 8}, "")]


def test_a_dependent_of_an_exclusive_job_comes_after_its_followers() -> None:
    obj = js.jobset(
        "tpu",
        js.rjob("slice", replicas=2, parallelism=2, annotations=EXCLUSIVE),
        js.rjob("eval", depends={"slice": "Ready"}),
    )
    assert _shape(_plan(obj)) == [
        ({"slice": 2}, ""),
        ({"slice": 2}, "leaders of slice scheduled"),
        ({"eval": 1}, "slice Ready"),
    ]


def test_a_job_without_pods_releases_its_dependents_at_once() -> None:
    obj = js.jobset("z", js.rjob("a"), js.rjob("none", replicas=0), js.rjob("b", depends={"none": "Complete"}))
    assert _shape(_plan(obj)) == [({"a": 1, "b": 1}, "")]
    assert _plan(js.jobset("empty", js.rjob("a", replicas=0))).stages == ()


def test_describe_is_the_stages_as_json() -> None:
    plan = _plan(js.deepspeed(nodes=2))
    assert json.loads(plan.describe()) == [
        {"tasks": {"node": 2}, "after": ""},
        {"tasks": {"launcher": 1}, "after": "node Ready"},
    ]


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (js.jobset("x"), "needs spec.replicatedJobs"),
        (js.jobset("x", js.rjob("a"), js.rjob("a")), "'a' is used twice"),
        (js.jobset("x", {"replicas": 1}), r"replicatedJobs\[0\].name must be a non-empty string"),
        (js.jobset("x", js.rjob("a", replicas=-1)), r"replicatedJobs\[0\].replicas must be a non-negative integer"),
        (js.jobset("x", js.rjob("a", parallelism=-2)), "parallelism must be a non-negative integer"),
        (js.jobset("x", js.rjob("a", depends={"a": "Ready"})), "first replicatedJob cannot use dependsOn"),
        (js.jobset("x", js.rjob("a"), js.rjob("b", depends={"b": "Ready"})), "'b' is not a replicatedJob listed"),
        (js.jobset("x", js.rjob("a"), js.rjob("b", depends={"a": "Running"})), "status must be Ready or Complete"),
        (
            js.jobset("x", js.rjob("a"), js.rjob("b", depends={"a": "Ready"}), in_order=True),
            "InOrder and dependsOn cannot be used together",
        ),
    ],
)
def test_what_jobset_refuses_is_denied_with_the_member_named(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidObjectError, match=message):
        stages.parts(obj["spec"])
