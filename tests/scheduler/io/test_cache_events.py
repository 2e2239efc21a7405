"""What the cache counts as an event that could let a parked gang through, and what wakes the loop.

``Cache._apply`` stores one watch event and sorts it; no I/O (the cache is made without a client).
"""

from __future__ import annotations

import copy
from typing import Any

from bridge import keys
from scheduler.io import cache as sched_cache


def pod(name: str, *, node: str | None = None, group: str = "g", phase: str = "Pending") -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": "ns",
            "name": name,
            "uid": f"u-{name}",
            "resourceVersion": "1",
            "annotations": {keys.GROUP_NAME: group},
        },
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase},
    }


def node(name: str, *, cpu: str = "4", ready: str = "True", beat: str = "t0") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "resourceVersion": beat},
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu},
            "conditions": [{"type": "Ready", "status": ready, "lastHeartbeatTime": beat}],
        },
    }


def made() -> sched_cache.Cache:
    return sched_cache.Cache(api=None)  # type: ignore[arg-type]  # no I/O in these tests


def test_our_own_condition_write_on_a_pending_pod_wakes_nothing() -> None:
    c = made()
    assert c._apply("pods", "ADDED", pod("p"))
    written = copy.deepcopy(pod("p"))
    written["metadata"]["resourceVersion"] = "2"
    written["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    before = c.generation
    assert not c._apply("pods", "MODIFIED", written)
    assert c.generation == before


def test_a_new_pending_pod_wakes_the_loop_and_grows_its_group_only() -> None:
    c = made()
    assert c._apply("pods", "ADDED", pod("p", group="big"))
    assert c.take_grown() == {"ns/big"}
    assert c.take_grown() == set()
    assert c.generation == 0  # nothing freed


def test_pods_leaving_or_finishing_count_as_freed_room() -> None:
    c = made()
    c._apply("pods", "ADDED", pod("a", node="n1", phase="Running"))
    c._apply("pods", "ADDED", pod("b", node="n1", phase="Running"))
    assert c._apply("pods", "MODIFIED", pod("a", node="n1", phase="Succeeded"))
    assert c.generation == 1
    deleting = pod("b", node="n1", phase="Running")
    deleting["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    assert c._apply("pods", "MODIFIED", deleting)
    assert c.generation == 2
    assert c._apply("pods", "DELETED", deleting)
    assert c.generation == 3
    assert c._apply("pods", "MODIFIED", pod("c", node="n1", phase="Running")) and c.generation == 3  # a bind lands


def test_a_node_heartbeat_wakes_nothing_but_a_node_change_does() -> None:
    c = made()
    assert c._apply("nodes", "ADDED", node("n1"))
    assert c.generation == 1
    assert not c._apply("nodes", "MODIFIED", node("n1", beat="t1"))
    assert c._apply("nodes", "MODIFIED", node("n1", cpu="8", beat="t2"))
    assert c._apply("nodes", "MODIFIED", node("n1", cpu="8", ready="False", beat="t3"))
    assert c.generation == 3


def test_status_only_writes_of_podgroups_and_queues_wake_nothing() -> None:
    c = made()
    group = {"metadata": {"namespace": "ns", "name": "g", "resourceVersion": "1"}, "spec": {"minMember": 3}}
    assert c._apply("podgroups", "ADDED", group)
    assert c.take_grown() == {"ns/g"} and c.generation == 0
    status = {**group, "metadata": {**group["metadata"], "resourceVersion": "2"}, "status": {"phase": "Inqueue"}}
    assert not c._apply("podgroups", "MODIFIED", status)
    assert c._apply("podgroups", "MODIFIED", {**status, "spec": {"minMember": 2}})  # minMember lowered
    assert c.generation == 1
    queue = {"metadata": {"name": "q", "resourceVersion": "1"}, "spec": {"weight": 1}, "status": {"state": "Open"}}
    c._apply("queues", "ADDED", queue)
    counts = {**queue, "status": {"state": "Open", "pending": 4}}
    assert not c._apply("queues", "MODIFIED", counts)
    assert c._apply("queues", "MODIFIED", {**queue, "status": {"state": "Closed"}})
    assert c.generation == 3


def test_a_lifted_gate_grows_the_group() -> None:
    c = made()
    gated = pod("p", group="g")
    gated["spec"] = {"schedulingGates": [{"name": "vbridge.io/podgroup"}]}
    c._apply("pods", "ADDED", gated)
    assert c.take_grown() == set()
    c._apply("pods", "MODIFIED", pod("p", group="g"))
    assert c.take_grown() == {"ns/g"}


def group(name: str, *, version: str, phase: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": version}, "status": {"phase": phase}}


def phases(c: sched_cache.Cache) -> dict[str, str]:
    return {g["metadata"]["name"]: g["status"]["phase"] for g in c.inputs()["podgroups"]}


def test_a_decided_phase_shows_until_the_watch_brings_a_newer_version() -> None:
    c = made()
    c._apply("podgroups", "ADDED", group("g", version="1", phase="Running"))
    c._apply("podgroups", "ADDED", group("h", version="1", phase="Running"))
    c.decide("ns/g", "1", "Pending")  # reclaimed whole: the write is queued, not landed
    assert phases(c) == {"g": "Pending", "h": "Running"}
    assert c.store["podgroups"]["ns/g"]["status"]["phase"] == "Running"  # the store is the watch's
    c._apply("podgroups", "MODIFIED", group("g", version="2", phase="Inqueue"))  # anyone's newer write
    assert phases(c) == {"g": "Inqueue", "h": "Running"}
    c.decide("ns/h", "0", "Pending")  # decided on a version the watch has already replaced
    assert phases(c)["h"] == "Running"
