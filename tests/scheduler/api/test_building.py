from __future__ import annotations

from scheduler.api import building, snapshot
from tests.builders import scheduler as b


def test_effective_request_init_containers_and_overhead() -> None:
    pod = b.pod("p0", cpu="1", memory="1Gi")
    pod["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "3"}}}]
    pod["spec"]["overhead"] = {"cpu": "100m"}
    snap = building.build(nodes=[b.node("n1")], pods=[pod], podgroups=[b.podgroup("pg")], queues=[b.queue()])
    task = snap.tasks["ns/p0"]
    assert (task.request.cpu, task.request.memory, task.request.get("pods")) == (3100, 2**30, 1)


def test_statuses_usage_and_ownership() -> None:
    releasing = b.pod("gone", group=None, cpu="1", node="n1", scheduler="other")
    releasing["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    snap = building.build(
        nodes=[b.node("n2"), b.node("n1")],
        pods=[
            b.pod("run", node="n1"),
            b.pod("done", node="n1", phase="Succeeded"),
            b.pod("wait"),
            releasing,
            b.pod("foreign", group=None, scheduler="other"),
        ],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
    )
    assert [n.name for n in snap.nodes] == ["n1", "n2"]
    assert {k: t.status for k, t in snap.tasks.items()} == {
        "ns/run": snapshot.TaskStatus.RUNNING,
        "ns/done": snapshot.TaskStatus.SUCCEEDED,
        "ns/wait": snapshot.TaskStatus.PENDING,
    }
    assert snap.used[0, 0] == 2000 and snap.releasing[0, 0] == 1000
    assert not snap.used.flags.writeable


def test_priority_preemptable_critical_spark() -> None:
    driver = b.pod(
        "d", priority_class="hi", preemptable=False, labels={"spark-role": "driver"}, namespace="kube-system"
    )
    snap = building.build(
        nodes=[],
        pods=[driver],
        podgroups=[b.podgroup("pg", namespace="kube-system", priority_class="hi")],
        queues=[],
        priorityclasses=[b.priority_class("hi", 7)],
    )
    task = snap.tasks["kube-system/d"]
    assert (task.priority, task.preemptable, task.critical, task.spark_role) == (7, False, True, "driver")
    assert snap.jobs["kube-system/pg"].priority == 7 and snap.jobs["kube-system/pg"].spark
