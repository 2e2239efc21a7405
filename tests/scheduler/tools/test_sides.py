"""tools.sides: on the native backend explain names the side a group waits on."""

from __future__ import annotations

from scheduler import configure
from scheduler.api import building
from scheduler.tools import explain, sides
from tests.builders import scheduler as b

NODES = [b.node(f"n{i}") for i in range(2)]  # 8 cpu


def explained(
    pods: list, podgroups: list, queues: list, key: str, condition: dict | None = None
) -> explain.Explanation:
    conf = configure.parse("", backend="native")
    snap = building.build(
        nodes=NODES, pods=pods, podgroups=podgroups, queues=queues, scheduler_name=conf.scheduler_name, native=True
    )
    return sides.attribute(explain.explain(snap, conf, key), conf, condition)


def test_a_group_its_closed_queue_keeps_waits_on_our_gate() -> None:
    exp = explained(
        [b.native_pod("p0", group="pg")],
        [b.podgroup("pg", queue="shut", min_resources={"cpu": "1"})],
        [b.queue(), b.queue("shut", state="Closed")],
        "ns/pg",
    )
    assert exp.side == sides.GATE
    assert exp.verdict.startswith("waits on our queue gate") and "Closed" in exp.verdict


def test_an_admitted_group_waits_on_kube_scheduler_with_its_condition() -> None:
    condition = {
        "type": "PodGroupInitiallyScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/2 nodes",
    }
    exp = explained(
        # 2 × 3 cpu fit the empty nodes (4 cpu each), only one beside the 2-cpu hog: admitted,
        # then kube-scheduler's to place (or not).
        [b.native_pod("hog", group="hog", cpu="2", memory=None, node="n0")]
        + [b.native_pod(f"p{i}", group="pg", cpu="3", memory=None) for i in range(2)],
        [b.podgroup("hog", queue="other", phase="Running"), b.podgroup("pg", min_member=2, min_resources={"cpu": "6"})],
        [b.queue(), b.queue("other")],
        "ns/pg",
        condition,
    )
    assert exp.side == sides.KUBE
    assert "PodGroupInitiallyScheduled=False Unschedulable: 0/2 nodes" in exp.verdict
    assert exp.native_condition == ("False", "Unschedulable", "0/2 nodes")


def test_the_volcano_backend_is_unchanged() -> None:
    conf = configure.parse("")
    snap = building.build(nodes=NODES, pods=[b.pod("p0", group="pg")], podgroups=[b.podgroup("pg")], queues=[b.queue()])
    exp = explain.explain(snap, conf, "ns/pg")
    assert sides.attribute(exp, conf, None) is exp and exp.side == ""
