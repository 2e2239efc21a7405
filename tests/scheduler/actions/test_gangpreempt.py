"""gangpreempt: victims per job, surplus replicas first, whole victim jobs only as a whole, and
nothing evicted unless the preemptor's whole gang then fits."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

CONF = 'actions: "enqueue, allocate, gangpreempt"'
NO_WHOLE = CONF + "\nconfigurations:\n- name: gangpreempt\n  arguments: {allowWholeBundle: false}\n"
CLASSES = [b.priority_class("high", 1000)]
LATER = "2025-01-01T00:10:00Z"


def running(group: str, node: str, first: int, count: int, *, cpu: str = "1", preemptable: bool | None = None) -> list:
    return [
        b.pod(
            f"{group}{i}",
            group=group,
            cpu=cpu,
            memory=None,
            node=node,
            preemptable=preemptable,
            created=f"2025-01-01T00:0{i}:00Z",
        )
        for i in range(first, first + count)
    ]


def high(count: int, cpu: str = "1", *, min_member: int | None = None) -> tuple[list, list]:
    pods = [b.pod(f"h{i}", group="h", cpu=cpu, memory=None, created=LATER) for i in range(count)]
    group = b.podgroup("h", min_member=min_member or count, priority_class="high", created=LATER)
    return pods, [group]


H2, HG2 = high(2)
H1X2, HG1X2 = high(1, "2")
H3X3, HG3X3 = high(3, "3")

SCENARIOS = [
    scenarios.Scenario(
        # l runs 6 with minMember 4: its 2 newest replicas go, m (no surplus) is untouched
        id="gangpreempt-takes-surplus-replicas-first",
        nodes=[b.node("n1"), b.node("n2")],
        pods=running("l", "n1", 0, 4) + running("l", "n2", 4, 2) + running("m", "n2", 0, 2) + H2,
        podgroups=[
            b.podgroup("l", min_member=4, phase="Running"),
            b.podgroup("m", min_member=2, phase="Running"),
            *HG2,
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        binds={},
        evictions=frozenset({"l5", "l4"}),
        pipelined={"h0": "n2", "h1": "n2"},
    ),
    scenarios.Scenario(
        # one free cpu already: one surplus replica is enough, the second is not evicted
        id="gangpreempt-evicts-no-more-surplus-than-needed",
        nodes=[b.node("n1")],
        pods=running("l", "n1", 0, 3) + H2,
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), *HG2],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset({"l2"}),
        pipelined={"h0": "n1", "h1": "n1"},
    ),
    scenarios.Scenario(
        # no surplus anywhere: one whole job (the newer, scheduled last) goes, all of it; never half of each
        id="gangpreempt-evicts-a-whole-job-not-pieces-of-two",
        nodes=[b.node("n1")],
        pods=running("a", "n1", 0, 2) + running("c", "n1", 2, 2) + H1X2,
        podgroups=[
            b.podgroup("a", min_member=2, phase="Running"),
            b.podgroup("c", min_member=2, phase="Running", created="2025-01-01T00:01:00Z"),
            *HG1X2,
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset({"c2", "c3"}),
        pipelined={"h0": "n1"},
    ),
    scenarios.Scenario(
        id="gangpreempt-allow-whole-bundle-false-takes-surplus-only",
        nodes=[b.node("n1")],
        pods=running("a", "n1", 0, 2) + running("c", "n1", 2, 2) + H1X2,
        podgroups=[
            b.podgroup("a", min_member=2, phase="Running"),
            b.podgroup("c", min_member=2, phase="Running", created="2025-01-01T00:01:00Z"),
            *HG1X2,
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=NO_WHOLE,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        # 3 × 3 cpu on two 4-cpu nodes: even with every victim gone only two fit, so nothing is evicted
        id="gangpreempt-evicts-nothing-when-the-gang-cannot-fit",
        nodes=[b.node("n1"), b.node("n2")],
        pods=running("l", "n1", 0, 4) + running("l", "n2", 4, 4) + H3X3,
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), *HG3X3],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        binds={},
        evictions=frozenset(),
        pipelined={},
        conditions={"h": ("Unschedulable", "NotEnoughResources", "3/3 tasks in gang unschedulable")},
    ),
    scenarios.Scenario(
        # a has one replica it may not lose (preemptable "false"): it has no whole bundle, and its
        # one surplus replica is not enough, so a is never left below minMember
        id="gangpreempt-never-breaks-a-gang-it-cannot-evict-whole",
        nodes=[b.node("n1")],
        pods=running("a", "n1", 0, 3) + running("a", "n1", 3, 1, preemptable=False) + H1X2,
        podgroups=[b.podgroup("a", min_member=3, phase="Running"), *HG1X2],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        # l6 (newest, on n2) is tried first but the 3-cpu pod lands on n1: l6 is not evicted
        id="gangpreempt-drops-victims-on-nodes-the-gang-does-not-use",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[
            *(pod for i in (0, 4, 5) for pod in running("l", "n1", i, 1)),
            *(pod for i in (1, 2, 3, 6) for pod in running("l", "n2", i, 1)),
            *high(1, "3")[0],
        ],
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), *high(1, "3")[1]],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset({"l5", "l4"}),
        pipelined={"h0": "n1"},
    ),
    scenarios.Scenario(
        # l has surplus 2 over minMember 2, but its one ps (the newest) is its task's minTaskMember:
        # the two newest workers go instead
        id="gangpreempt-surplus-honours-min-task-member",
        nodes=[b.node("n1")],
        pods=[
            *(
                b.pod(
                    f"w{i}",
                    group="l",
                    cpu="1",
                    memory=None,
                    node="n1",
                    task="worker",
                    created=f"2025-01-01T00:0{i}:00Z",
                )
                for i in range(3)
            ),
            b.pod("ps", group="l", cpu="1", memory=None, node="n1", task="ps", created="2025-01-01T00:05:00Z"),
            *H2,
        ],
        podgroups=[b.podgroup("l", min_member=2, min_task_member={"ps": 1, "worker": 1}, phase="Running"), *HG2],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset({"w2", "w1"}),
        pipelined={"h0": "n1", "h1": "n1"},
    ),
    scenarios.Scenario(
        # 3 cpu: a's 2 surplus replicas are tried first, then c must go whole; c alone is enough,
        # so a's replicas are not evicted after all
        id="gangpreempt-keeps-surplus-a-whole-job-made-unnecessary",
        nodes=[b.node("n1"), b.node("n2")],
        pods=running("a", "n1", 0, 2)
        + running("a", "n2", 2, 2)
        + running("c", "n1", 0, 2)
        + running("c", "n2", 2, 2)
        + high(3)[0],
        podgroups=[
            b.podgroup("a", min_member=2, phase="Running"),
            b.podgroup("c", min_member=4, phase="Running", created="2025-01-01T00:01:00Z"),
            *high(3)[1],
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset({"c0", "c1", "c2", "c3"}),
        bound_counts={"h": 0},
    ),
    scenarios.Scenario(
        id="gangpreempt-never-equal-priority",
        nodes=[b.node("n1")],
        pods=[*running("l", "n1", 0, 4), b.pod("h0", group="h", cpu="2", memory=None, created=LATER)],
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), b.podgroup("h", created=LATER)],
        queues=[b.queue()],
        conf=CONF,
        evictions=frozenset(),
    ),
    scenarios.Scenario(
        id="gangpreempt-never-crosses-queues",
        nodes=[b.node("n1")],
        pods=[*running("l", "n1", 0, 4), *H1X2],
        podgroups=[b.podgroup("l", min_member=1, phase="Running", queue="other"), *HG1X2],
        queues=[b.queue(), b.queue("other")],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset(),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_gangpreempt(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
