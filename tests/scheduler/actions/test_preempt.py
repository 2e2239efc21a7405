"""preempt: within a queue, by priority, whole gang or nothing, honouring volcano.sh/preemptable."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

CONF = 'actions: "enqueue, allocate, preempt"'
CLASSES = [b.priority_class("high", 1000)]
LATER = "2025-01-01T00:10:00Z"


def low(group: str, node: str, count: int, *, preemptable: bool | None = None, queue: str = "default") -> list:
    return [
        b.pod(
            f"{group}{i}",
            group=group,
            cpu="1",
            memory=None,
            node=node,
            preemptable=preemptable,
            created=f"2025-01-01T00:00:0{i}Z",
        )
        for i in range(count)
    ]


SCENARIOS = [
    scenarios.Scenario(
        id="preempt-evicts-newest-lower-priority-surplus",
        nodes=[b.node("n1")],
        pods=[*low("l", "n1", 4), b.pod("h0", group="h", cpu="2", memory=None, created=LATER)],
        podgroups=[
            b.podgroup("l", min_member=1, phase="Running"),
            b.podgroup("h", priority_class="high", created=LATER),
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        binds={},
        evictions=frozenset({"l3", "l2"}),
        pipelined={"h0": "n1"},
    ),
    scenarios.Scenario(
        id="preempt-whole-gang-or-nothing",
        nodes=[b.node("n1"), b.node("n2")],
        pods=low("l", "n1", 4)
        + low("m", "n2", 4)
        + [b.pod(f"h{i}", group="h", cpu="3", memory=None, created=LATER) for i in range(2)],
        podgroups=[
            b.podgroup("l", min_member=1, phase="Running"),
            b.podgroup("m", min_member=4, phase="Running"),  # no surplus: its gang must not break
            b.podgroup("h", min_member=2, priority_class="high", created=LATER),
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        binds={},
        evictions=frozenset(),
        pipelined={},
        conditions={"h": ("Unschedulable", "NotEnoughResources", "2/2 tasks in gang unschedulable")},
    ),
    scenarios.Scenario(
        id="preempt-respects-preemptable-false",
        nodes=[b.node("n1")],
        pods=[*low("l", "n1", 4, preemptable=False), b.pod("h0", group="h", cpu="2", memory=None, created=LATER)],
        podgroups=[
            b.podgroup("l", min_member=1, phase="Running"),
            b.podgroup("h", priority_class="high", created=LATER),
        ],
        queues=[b.queue()],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        id="preempt-never-equal-priority",
        nodes=[b.node("n1")],
        pods=[*low("l", "n1", 4), b.pod("h0", group="h", cpu="2", memory=None, created=LATER)],
        podgroups=[b.podgroup("l", min_member=1, phase="Running"), b.podgroup("h", created=LATER)],
        queues=[b.queue()],
        conf=CONF,
        evictions=frozenset(),
    ),
    scenarios.Scenario(
        id="preempt-never-crosses-queues",
        nodes=[b.node("n1")],
        pods=[*low("l", "n1", 4), b.pod("h0", group="h", cpu="2", memory=None, created=LATER)],
        podgroups=[
            b.podgroup("l", min_member=1, phase="Running", queue="other"),
            b.podgroup("h", priority_class="high", created=LATER),
        ],
        queues=[b.queue(), b.queue("other")],
        priorityclasses=CLASSES,
        conf=CONF,
        evictions=frozenset(),
    ),
    scenarios.Scenario(
        id="preempt-never-evicts-critical-pods",
        nodes=[b.node("n1")],
        pods=[
            b.pod(f"c{i}", group="c", cpu="1", memory=None, node="n1", priority_class="system-cluster-critical")
            for i in range(4)
        ]
        + [b.pod("h0", group="h", cpu="2", memory=None, created=LATER)],
        podgroups=[
            b.podgroup("c", min_member=1, phase="Running"),
            b.podgroup("h", priority_class="high", created=LATER),
        ],
        queues=[b.queue()],
        priorityclasses=[*CLASSES, b.priority_class("system-cluster-critical", 10)],
        conf=CONF,
        evictions=frozenset(),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_preempt(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
