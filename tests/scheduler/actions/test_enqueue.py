"""enqueue: admission by minResources, closed queues, groups without minResources."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

LATER = "2025-01-01T00:10:00Z"
NODES = [b.node(f"n{i}") for i in range(4)]  # 16 cpu; ×1.2 overcommit = 19.2 admissible


SCENARIOS = [
    scenarios.Scenario(
        id="competing-gangs-enqueue-admits-one",
        nodes=NODES,
        pods=[b.pod(f"a{i}", group="a", cpu="4", memory=None) for i in range(4)]
        + [b.pod(f"b{i}", group="b", cpu="4", memory=None, created=LATER) for i in range(4)],
        podgroups=[
            b.podgroup("a", min_member=4, min_resources={"cpu": "16"}),
            b.podgroup("b", min_member=4, min_resources={"cpu": "16"}, created=LATER),
        ],
        queues=[b.queue()],
        bound_counts={"a": 4, "b": 0},
        phases={"a": "Running", "b": "Pending"},
        conditions={"b": ("Unschedulable", "NotEnoughResources", "PodGroup is pending")},
        pod_events={"b0": ("Unschedulable", "minResources")},
        queue_states={"default": ("Open", 1, 0)},
    ),
    scenarios.Scenario(
        id="competing-gangs-second-goes-after-first-finishes",
        nodes=NODES,
        pods=[b.pod(f"a{i}", group="a", cpu="4", memory=None, node=f"n{i}", phase="Succeeded") for i in range(4)]
        + [b.pod(f"b{i}", group="b", cpu="4", memory=None, created=LATER) for i in range(4)],
        podgroups=[
            b.podgroup("a", min_member=4, min_resources={"cpu": "16"}, phase="Running"),
            b.podgroup("b", min_member=4, min_resources={"cpu": "16"}, created=LATER),
        ],
        queues=[b.queue()],
        bound_counts={"b": 4},
        phases={"a": "Completed", "b": "Running"},
    ),
    scenarios.Scenario(
        id="closed-queue-takes-no-new-groups",
        nodes=NODES,
        pods=[b.pod("p0", group="pg")],
        podgroups=[b.podgroup("pg", queue="shut")],
        queues=[b.queue(), b.queue("shut", state="Closed")],
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "QueueClosed", "queue shut is Closed")},
        queue_states={"shut": ("Closed", 1, 0)},
    ),
    scenarios.Scenario(
        id="closing-queue-without-groups-becomes-closed",
        nodes=NODES,
        pods=[],
        podgroups=[],
        queues=[b.queue(), b.queue("winding", state="Closing")],
        queue_states={"winding": ("Closed", 0, 0)},
    ),
    scenarios.Scenario(
        id="group-without-min-resources-always-enqueued",
        nodes=[b.node("n1", cpu="1")],
        pods=[b.pod("hog", group="hog", cpu="1", node="n1"), b.pod("p0", group="pg", cpu="1", created=LATER)],
        podgroups=[b.podgroup("hog", phase="Running"), b.podgroup("pg", created=LATER)],
        queues=[b.queue()],
        binds={},
        phases={"pg": "Inqueue"},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "Insufficient cpu")},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_enqueue(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
