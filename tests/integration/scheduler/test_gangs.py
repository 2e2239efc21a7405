"""Gangs against a real kube-apiserver with simulated nodes: all or nothing, never deadlocked, Spark's late members."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from kubernetes import client as k8s

from tests.support import apiserver, gangcheck, schedbed, schedthread

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]


def test_gang_that_does_not_fit_binds_nothing_and_says_why(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")
    sched = run_scheduler()
    schedbed.podgroup(api, ns, "gang", 3)
    schedbed.pods(api, ns, "gang", 3, scheduler=sched.scheduler_name, cpu="3")  # each node holds one: 2 of 3 fit

    def unschedulable() -> dict[str, Any] | None:
        conds = (schedbed.get_pg(api, ns, "gang").get("status") or {}).get("conditions") or []
        # Before the pods exist it is NotEnoughTasks; once they do, NotEnoughResources.
        return next((c for c in conds if c["type"] == "Unschedulable" and c["reason"] == "NotEnoughResources"), None)

    cond = apiserver.eventually(unschedulable, 20, "an Unschedulable/NotEnoughResources condition on the PodGroup")
    assert "3/3 tasks in gang unschedulable" in cond["message"]
    assert not schedbed.bound(api, ns, "gang")
    # Every pod is told why (the first cycles may have seen fewer pods: NotEnoughTasks).
    apiserver.eventually(
        lambda: (
            {
                e.involved_object.name
                for e in schedbed.events(api, ns)
                if e.involved_object.kind == "Pod"
                and e.type == "Warning"
                and "3/3 tasks in gang unschedulable" in e.message
            }
            == {"gang-0", "gang-1", "gang-2"}
        ),
        10,
        "a FailedScheduling event on every pod",
    )
    pods = schedbed.placement(api, ns)
    scheduled = [c for c in pods["gang-0"].status.conditions or [] if c.type == "PodScheduled"]
    assert scheduled and scheduled[0].status == "False" and scheduled[0].reason == "Unschedulable"
    assert any(e.involved_object.kind == "PodGroup" and e.reason == "Unschedulable" for e in schedbed.events(api, ns))
    # Steady state: nothing changes, so cycles keep running and write nothing. Two cycles let
    # the writes of the cycles that told every pod why land; the three after must be quiet.
    sched.cycles.next(2)
    quiet = sched.cycles.next(3)
    assert all(r.writes == 0 and not r.outcome.bound for r in quiet), quiet
    assert not schedbed.bound(api, ns, "gang")
    assert sched.scheduler is not None
    with httpx.Client(base_url=f"http://127.0.0.1:{sched.scheduler.metrics.port}") as http:
        assert http.get("/healthz").status_code == 200
        text = http.get("/metrics").text
    assert 'volcano_schedule_attempts_total{result="unschedulable"}' in text
    assert "volcano_e2e_scheduling_latency_milliseconds_count" in text


def test_competing_gangs_never_deadlock_and_both_finish(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")
    sched = run_scheduler()
    for gang in ("a", "b"):  # each needs 6 of the 8 cpu: they can only run in turn
        schedbed.podgroup(api, ns, gang, 2)
    schedbed.pods(api, ns, "a", 2, scheduler=sched.scheduler_name, cpu="3", run_seconds=2)
    schedbed.pods(api, ns, "b", 2, scheduler=sched.scheduler_name, cpu="3", run_seconds=2)

    def finished() -> bool:
        return all(schedbed.phase(api, ns, g) == "Completed" for g in ("a", "b"))

    try:
        apiserver.eventually(finished, 40, "both gangs to complete")
    except AssertionError as exc:
        state = {n: (p.spec.node_name, p.status.phase) for n, p in schedbed.placement(api, ns).items()}
        pgs = {g: schedbed.get_pg(api, ns, g).get("status") for g in ("a", "b")}
        raise AssertionError(f"{exc}: {state}, {pgs}") from None
    assert {p.status.phase for p in schedbed.placement(api, ns).values()} == {"Succeeded"}
    # Never stuck halfway (the deadlock): each gang's two binds went out in one cycle, and the
    # two gangs in different cycles, one after the other.
    log = gangcheck.BindLog()
    for report in sched.reports:
        log.record(report)
    binds = log.binds()
    assert gangcheck.split_gangs(binds, {f"{ns}/a": 2, f"{ns}/b": 2}) == [], log.failed()
    assert binds[f"{ns}/a-0"].cycle != binds[f"{ns}/b-0"].cycle


def test_spark_executors_find_their_capacity_while_a_gang_waits(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="8", memory="32Gi")  # 16 cpu
    sched = run_scheduler()
    name = sched.scheduler_name
    app = "spark-" + uuid.uuid4().hex
    spark = {"spark-app-selector": app}
    # As spark-operator does: minMember 1, minResources = driver (2) + two executors (4 each).
    schedbed.podgroup(api, ns, "spark", 1, min_resources={"cpu": "10", "memory": "6Gi"})
    schedbed.pods(
        api, ns, "spark", 1, scheduler=name, cpu="2", labels={**spark, "spark-role": "driver"}, prefix="driver"
    )
    apiserver.eventually(lambda: schedbed.bound(api, ns, "driver"), 15, "the driver bound")
    apiserver.eventually(
        lambda: schedbed.placement(api, ns)["driver-0"].status.phase == "Running", 15, "the driver running"
    )
    # A competing gang needing 8 cpu arrives: 14 are free, but 8 are owed to the executors.
    schedbed.podgroup(api, ns, "rival", 2)
    rival = schedbed.keys(ns, schedbed.pods(api, ns, "rival", 2, scheduler=name, cpu="4"))
    apiserver.eventually(lambda: sched.sees(rival), 15, "the scheduler to see the rival's pods")
    waited = sched.cycles.next(3)  # three cycles decided with the rival in view
    assert not [pod for r in waited for pod in r.outcome.bound if pod in rival]
    assert not schedbed.bound(api, ns, "rival")
    executors = {**spark, "spark-role": "executor"}
    schedbed.pods(api, ns, "spark", 2, scheduler=name, cpu="4", labels=executors, prefix="exec")
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "exec")) == 2, 10, "both executors bound")
    assert not schedbed.bound(api, ns, "rival")  # 6 cpu left: the rival still waits, whole
