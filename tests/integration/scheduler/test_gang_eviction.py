"""Gang-level preemption and reclaim (gangpreempt, gangreclaim) against a real kube-apiserver:
surplus replicas go first, a running gang is never left below minMember (a whole job goes, or
none of it), a preemptor that cannot fit evicts nothing, and queues give back at gang level."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, schedbed, schedthread
from vbridge import cli
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]
CONF = 'actions: "enqueue, allocate, gangpreempt, gangreclaim, backfill"'


@pytest.fixture
def classes(api: k8s.ApiClient, ns: str) -> Iterator[dict[str, str]]:
    """PriorityClasses high (1000), low (10) and lowest (1), named after the test's namespace."""
    scheduling = k8s.SchedulingV1Api(api)
    names = {level: f"{level}-{ns}" for level in ("high", "low", "lowest")}
    for level, value in (("high", 1000), ("low", 10), ("lowest", 1)):
        scheduling.create_priority_class(k8s.V1PriorityClass(metadata=k8s.V1ObjectMeta(name=names[level]), value=value))
    try:
        yield names
    finally:
        for name in names.values():
            scheduling.delete_priority_class(name)


def _evicted(api: k8s.ApiClient, ns: str, reason: str) -> dict[str, str]:
    """pod → the event's message, for each pod with a ``reason`` (Preempted/Reclaimed) event."""
    return {e.involved_object.name: e.message for e in schedbed.events(api, ns) if e.reason == reason}


def _running(api: k8s.ApiClient, ns: str, group: str) -> list[str]:
    placed = schedbed.placement(api, ns)
    return [n for n in schedbed.bound(api, ns, group) if placed[n].metadata.deletion_timestamp is None]


def test_a_high_priority_gang_takes_surplus_replicas_first_and_never_half_a_gang(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run, classes: dict[str, str]
) -> None:
    make_nodes(3, cpu="4", memory="64Gi")  # 12 cpu
    sched = run_scheduler(CONF)
    name = sched.scheduler_name
    # a: 6 running, minMember 4 (2 surplus); b: 4 of minMember 4; c: 2 of minMember 2, lowest priority
    for group, count, minimum, level in (("a", 6, 4, "low"), ("b", 4, 4, "low"), ("c", 2, 2, "lowest")):
        schedbed.podgroup(api, ns, group, minimum, priority_class=classes[level])
        schedbed.pods(api, ns, group, count, scheduler=name, cpu="1", priority_class=classes[level])
    apiserver.eventually(
        lambda: [len(schedbed.bound(api, ns, g)) for g in "abc"] == [6, 4, 2], 30, "the cluster full of low jobs"
    )
    # A gang of 2 × 1 cpu: a's two surplus replicas go, nothing of b or c.
    schedbed.podgroup(api, ns, "h", 2, priority_class=classes["high"])
    schedbed.pods(api, ns, "h", 2, scheduler=name, cpu="1", priority_class=classes["high"])
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "h")) == 2, 30, "the first high gang bound whole")
    first = _evicted(api, ns, "Preempted")
    assert len(first) == 2 and all(pod.startswith("a-") for pod in first), first  # 2 of a's 6 (same second: any 2)
    assert all("surplus of" in message and "minMember 4" in message for message in first.values()), first
    assert len(_running(api, ns, "a")) == 4 and len(_running(api, ns, "b")) == 4
    # A second gang of 2: no surplus is left anywhere, so one whole job goes: c (lowest), both pods.
    schedbed.podgroup(api, ns, "k", 2, priority_class=classes["high"])
    schedbed.pods(api, ns, "k", 2, scheduler=name, cpu="1", priority_class=classes["high"])
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "k")) == 2, 30, "the second high gang bound whole")
    second = {pod: message for pod, message in _evicted(api, ns, "Preempted").items() if pod not in first}
    assert sorted(second) == ["c-0", "c-1"], second
    assert all("the whole of" in message for message in second.values()), second
    assert len(_running(api, ns, "a")) == 4 and len(_running(api, ns, "b")) == 4  # never below minMember


def test_a_gang_that_cannot_fit_even_after_every_eviction_evicts_nothing(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run, classes: dict[str, str]
) -> None:
    make_nodes(2, cpu="4", memory="64Gi")  # 8 cpu
    sched = run_scheduler(CONF)
    name = sched.scheduler_name
    schedbed.podgroup(api, ns, "low", 1, priority_class=classes["low"])
    schedbed.pods(api, ns, "low", 4, scheduler=name, cpu="2", priority_class=classes["low"])
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "low")) == 4, 30, "the low job running")
    # 3 × 3 cpu on two 4-cpu nodes: with every low pod gone still only two fit.
    schedbed.podgroup(api, ns, "huge", 3, priority_class=classes["high"])
    huge = schedbed.keys(ns, schedbed.pods(api, ns, "huge", 3, scheduler=name, cpu="3", priority_class=classes["high"]))
    apiserver.eventually(lambda: sched.sees(huge), 15, "the scheduler to see the huge gang")
    waited = sched.cycles.next(3)  # three cycles decided with the huge gang in view
    assert not [r.outcome.evicted for r in waited if r.outcome.evicted]
    assert not _evicted(api, ns, "Preempted")
    assert len(_running(api, ns, "low")) == 4 and not schedbed.bound(api, ns, "huge")


def test_a_queue_above_its_share_gives_back_a_whole_job_not_pieces(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="64Gi")  # 8 cpu
    first, second = f"qa-{ns}", f"qb-{ns}"
    schedbed.queue(api, first, 1)
    schedbed.queue(api, second, 1)
    sched = run_scheduler(CONF)
    name = sched.scheduler_name
    # qa alone fills the cluster: a (4 of minMember 2) and c (4 of minMember 4)
    for group, minimum in (("a", 2), ("c", 4)):
        schedbed.podgroup(api, ns, group, minimum, queue=first)
        schedbed.pods(api, ns, group, 4, scheduler=name, cpu="1")
    apiserver.eventually(
        lambda: [len(schedbed.bound(api, ns, g)) for g in "ac"] == [4, 4], 30, "queue qa filling the cluster"
    )
    # qb deserves half (4 cpu) for a gang of 2 × 2 cpu: a's 2 surplus replicas are not enough, so
    # a goes whole (all 4 pods, never down to 1 of its 2); c is not touched.
    schedbed.podgroup(api, ns, "b", 2, queue=second)
    schedbed.pods(api, ns, "b", 2, scheduler=name, cpu="2")
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "b")) == 2, 30, "the reclaiming gang bound whole")
    reclaimed = _evicted(api, ns, "Reclaimed")
    assert sorted(reclaimed) == ["a-0", "a-1", "a-2", "a-3"], reclaimed
    assert all(f"reclaimed from queue {first}" in message for message in reclaimed.values()), reclaimed
    assert len(_running(api, ns, "c")) == 4


def test_explain_names_beforehand_the_pods_the_scheduler_then_evicts(
    api: k8s.ApiClient,
    lc: cluster.LocalCluster,
    ns: str,
    make_nodes: Nodes,
    run_scheduler: Run,
    classes: dict[str, str],
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_nodes(2, cpu="4", memory="64Gi")  # 8 cpu
    sched = run_scheduler(CONF)
    name = sched.scheduler_name
    for group, minimum, level in (("a", 2, "low"), ("c", 4, "lowest")):
        schedbed.podgroup(api, ns, group, minimum, priority_class=classes[level])
        schedbed.pods(api, ns, group, 4, scheduler=name, cpu="1", priority_class=classes[level])
    apiserver.eventually(lambda: [len(schedbed.bound(api, ns, g)) for g in "ac"] == [4, 4], 30, "a full cluster")
    sched.stop()  # the high gang arrives while no scheduler runs: explain first, then schedule
    schedbed.podgroup(api, ns, "h", 3, priority_class=classes["high"])
    schedbed.pods(api, ns, "h", 3, scheduler=name, cpu="1", priority_class=classes["high"])
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    argv = ["explain", "pg/h", "-n", ns, "-o", "json", "--conf", str(conf), "--scheduler-name", name]
    assert cli.main([*argv, "--kubeconfig", str(lc.kubeconfig)]) == 0
    said = json.loads(capsys.readouterr().out)["evictions"]
    # 3 cpu: a's 2 surplus replicas are not enough, so the whole of c (lowest priority) goes
    assert sorted(e["pod"] for e in said) == [f"{ns}/c-{i}" for i in range(4)], said
    assert all(e["reason"] == "Preempted" and "the whole of" in e["why"] for e in said), said
    run_scheduler(CONF)
    apiserver.eventually(lambda: len(schedbed.bound(api, ns, "h")) == 3, 30, "the high gang bound whole")
    assert sorted(_evicted(api, ns, "Preempted")) == sorted(e["pod"].split("/", 1)[1] for e in said)
    assert len(_running(api, ns, "a")) == 4
