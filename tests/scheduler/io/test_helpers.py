"""Pure helpers of the scheduler's I/O shell: request bodies, status diffs, cache overlays."""

from __future__ import annotations

from typing import Any

from bridge import keys
from scheduler.api import plan
from scheduler.io import binder, bodies
from scheduler.io import cache as sched_cache


def pod(name: str, *, node: str | None = None, uid: str = "u1") -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "uid": uid}, "spec": {"nodeName": node} if node else {}}


def test_binding_body_carries_the_uid_precondition() -> None:
    body = binder.binding(plan.Allocate("ns/p", "u1", "n1"))
    assert body["metadata"] == {"name": "p", "uid": "u1"}
    assert body["target"]["name"] == "n1" and body["kind"] == "Binding"


def test_podgroup_status_keeps_transition_time_of_unchanged_condition() -> None:
    cond = plan.Condition("Unschedulable", "True", "NotEnoughResources", "1/2 tasks in gang unschedulable")
    verdict = plan.PodGroupVerdict("ns/pg", "Inqueue", (cond,), 0, 0, 0)
    live = {"conditions": [{"type": "Unschedulable", "status": "True", "lastTransitionTime": "T0"}]}
    out = bodies.podgroup_status(verdict, live, "T1")
    assert out["conditions"][0]["lastTransitionTime"] == "T0"
    assert bodies.podgroup_status(verdict, {}, "T1")["conditions"][0]["lastTransitionTime"] == "T1"


def test_podgroup_status_keeps_the_native_reconcilers_condition() -> None:
    """The scheduler writes the whole list: a refusal the native reconciler recorded stays."""
    refused = {"type": keys.NATIVE_SYNCED, "status": "False", "reason": "Refused", "message": "m"}
    live = {"conditions": [{"type": "Unschedulable", "status": "True", "lastTransitionTime": "T0"}, refused]}
    verdict = plan.PodGroupVerdict("ns/pg", "Inqueue", (), 0, 0, 0)
    assert bodies.podgroup_status(verdict, live, "T1")["conditions"] == [refused]


def test_queue_status_removes_resources_no_longer_held() -> None:
    verdict = plan.QueueVerdict("q", "Open", 0, 1, 2, 0, 0, {"cpu": "2"})
    out = bodies.queue_status(verdict, {"allocated": {"cpu": "1", "nvidia.com/gpu": "1"}})
    assert out["allocated"] == {"cpu": "2", "nvidia.com/gpu": None}


def test_queue_status_keeps_the_live_state_but_for_a_new_queue_and_a_drained_close() -> None:
    def state(verdict_state: str, live: str | None) -> str:
        verdict = plan.QueueVerdict("q", verdict_state, 0, 0, 0, 0, 0, {})
        return str(bodies.queue_status(verdict, {"state": live} if live else {})["state"])

    assert state("Open", None) == "Open"  # a new queue gets its state
    assert state("Closed", "Closing") == "Closed"  # drained
    assert state("Closed", "Open") == "Open"  # reopened after our snapshot: not clobbered
    assert state("Open", "Closed") == "Closed"  # closed after our snapshot
    assert state("Closing", "Open") == "Open"


def test_assumed_pods_show_bound_until_the_watch_confirms() -> None:
    c = sched_cache.Cache(api=None)  # type: ignore[arg-type]  # no I/O in this test
    c._apply("pods", "ADDED", pod("p"))
    c.assume("ns/p", "u1", "n1")
    assert c.inputs()["pods"][0]["spec"]["nodeName"] == "n1"
    assert c.store["pods"]["ns/p"]["spec"] == {}  # the stored object is untouched
    c._apply("pods", "MODIFIED", pod("p", node="n1"))
    assert c.assumed() == {}


def test_assumed_pod_of_another_uid_is_not_overlaid() -> None:
    c = sched_cache.Cache(api=None)  # type: ignore[arg-type]
    c._apply("pods", "ADDED", pod("p", uid="new"))
    c.assume("ns/p", "old", "n1")
    assert "nodeName" not in c.inputs()["pods"][0]["spec"]


def test_gated_pods_are_left_out_until_their_last_gate_is_lifted() -> None:
    c = sched_cache.Cache(api=None)  # type: ignore[arg-type]
    gated = pod("p")
    gated["spec"] = {"schedulingGates": [{"name": "vbridge.io/podgroup"}]}
    c._apply("pods", "ADDED", gated)
    c._apply("pods", "ADDED", pod("q"))
    assert [p["metadata"]["name"] for p in c.inputs()["pods"]] == ["q"]
    assert c._apply("pods", "MODIFIED", pod("p"))  # gate lifted: the scheduler wakes
    assert sorted(p["metadata"]["name"] for p in c.inputs()["pods"]) == ["p", "q"]
    c._apply("pods", "MODIFIED", gated)
    c._apply("pods", "DELETED", gated)
    c._apply("pods", "ADDED", pod("p"))  # a new pod of the same name, never gated
    assert len(c.inputs()["pods"]) == 2


def test_a_running_pods_status_update_does_not_wake_the_scheduler() -> None:
    c = sched_cache.Cache(api=None)  # type: ignore[arg-type]
    bound = {**pod("p", node="n1"), "status": {"phase": "Pending"}}
    c._apply("pods", "ADDED", bound)
    assert not c._apply("pods", "MODIFIED", {**bound, "status": {"phase": "Running"}})
    assert c._apply("pods", "MODIFIED", {**bound, "status": {"phase": "Succeeded"}})
