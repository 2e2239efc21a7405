"""ungate (native backend): the queue half decides, kube-scheduler places; scenarios as data.

Pods are as the native backend's admission leaves them (``builders.scheduler.native_pod``:
kube-scheduler's name, ``spec.schedulingGroup``, our queue gate while unbound). The plan never
binds; it lifts the gate of the pods of admitted groups and nothing else.
"""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

LATER = "2025-01-01T00:10:00Z"
NODES = [b.node(f"n{i}") for i in range(4)]  # 16 cpu; ×1.2 overcommit = 19.2 admissible
WIDE = [b.node(f"w{i}") for i in range(8)]  # 32 cpu; ×1.2 = 38.4
NATIVE = "native"


def gang(name: str, size: int, created: str = b.T0) -> list[dict[str, object]]:
    return [b.native_pod(f"{name}{i}", group=name, cpu="4", memory=None, created=created) for i in range(size)]


SCENARIOS = [
    scenarios.Scenario(
        id="admitted-gang-is-ungated-not-bound",
        backend=NATIVE,
        nodes=NODES,
        pods=gang("a", 4),
        podgroups=[b.podgroup("a", min_member=4, min_resources={"cpu": "16"})],
        queues=[b.queue()],
        binds={},
        ungated=frozenset({"a0", "a1", "a2", "a3"}),
        phases={"a": "Inqueue"},
        conditions={"a": ("Unschedulable", "NotEnoughResources", "kube-scheduler places the pods")},
        queue_states={"default": ("Open", 0, 1)},
    ),
    scenarios.Scenario(
        id="second-gang-waits-at-the-queue-gate",
        backend=NATIVE,
        nodes=NODES,
        pods=gang("a", 4) + gang("b", 4, created=LATER),
        podgroups=[
            b.podgroup("a", min_member=4, min_resources={"cpu": "16"}),
            b.podgroup("b", min_member=4, min_resources={"cpu": "16"}, created=LATER),
        ],
        queues=[b.queue()],
        binds={},
        ungated=frozenset({"a0", "a1", "a2", "a3"}),
        phases={"a": "Inqueue", "b": "Pending"},
        conditions={"b": ("Unschedulable", "NotEnoughResources", "overcommit")},
        queue_states={"default": ("Open", 1, 1)},
    ),
    scenarios.Scenario(
        id="second-gang-released-when-the-first-finishes",
        backend=NATIVE,
        nodes=NODES,
        pods=[b.native_pod(f"a{i}", group="a", cpu="4", memory=None, node=f"n{i}", phase="Succeeded") for i in range(4)]
        + gang("b", 4, created=LATER),
        podgroups=[
            b.podgroup("a", min_member=4, min_resources={"cpu": "16"}, phase="Running"),
            b.podgroup("b", min_member=4, min_resources={"cpu": "16"}, created=LATER),
        ],
        queues=[b.queue()],
        binds={},
        ungated=frozenset({"b0", "b1", "b2", "b3"}),
        phases={"a": "Completed", "b": "Inqueue"},
    ),
    scenarios.Scenario(
        id="closed-queue-admits-nothing-new",
        backend=NATIVE,
        nodes=NODES,
        pods=gang("a", 1),
        podgroups=[b.podgroup("a", queue="shut", min_resources={"cpu": "4"})],
        queues=[b.queue(), b.queue("shut", state="Closed")],
        ungated=frozenset(),
        phases={"a": "Pending"},
        conditions={"a": ("Unschedulable", "QueueClosed", "queue shut is Closed")},
    ),
    scenarios.Scenario(
        id="closed-queue-keeps-what-it-admitted",
        backend=NATIVE,
        nodes=NODES,
        pods=[
            b.native_pod("a0", group="a", cpu="4", memory=None, node="n0"),
            b.native_pod("a1", group="a", cpu="4", memory=None),
        ],
        podgroups=[b.podgroup("a", queue="shut", phase="Running", min_resources={"cpu": "4"})],
        queues=[b.queue(), b.queue("shut", state="Closed")],
        ungated=frozenset({"a1"}),
        phases={"a": "Running"},
    ),
    scenarios.Scenario(
        id="weights-give-their-shares-at-admission",
        backend=NATIVE,
        nodes=WIDE,
        pods=[b.native_pod(f"{q}{i}", group=f"{q}{i}", cpu="4", memory=None) for q in "xy" for i in range(8)],
        podgroups=[
            b.podgroup(f"{q}{i}", queue=q, min_resources={"cpu": "4"}, created=f"2025-01-01T00:0{i}:00Z")
            for q in "xy"
            for i in range(8)
        ],
        queues=[b.queue(), b.queue("x", weight=3), b.queue("y", weight=1)],
        binds={},
        # 32 cpu: x deserves 24 (six groups), y 8 (two); overcommit (38.4) would take a ninth.
        ungated=frozenset({*(f"x{i}" for i in range(6)), "y0", "y1"}),
        conditions={
            "y2": ("Unschedulable", "NotEnoughResources", "queue y's deserved share"),
            "x6": ("Unschedulable", "NotEnoughResources", "queue x's deserved share"),
        },
        queue_states={"x": ("Open", 2, 6), "y": ("Open", 6, 2)},
    ),
    scenarios.Scenario(
        id="a-queue-alone-takes-what-it-asks",
        backend=NATIVE,
        nodes=NODES,
        pods=[b.native_pod(f"y{i}", group=f"y{i}", cpu="4", memory=None) for i in range(4)],
        podgroups=[b.podgroup(f"y{i}", queue="y", min_resources={"cpu": "4"}) for i in range(4)],
        queues=[b.queue(), b.queue("x", weight=3), b.queue("y", weight=1)],
        ungated=frozenset({"y0", "y1", "y2", "y3"}),
    ),
    scenarios.Scenario(
        # Groups whose pods come later: a Spark driver's (minResources count the executors it
        # makes once it runs; only the driver exists) and an operator's (no pod yet). Each asks
        # its queue at least its minResources, so the queue deserves them and both are admitted.
        id="groups-whose-pods-come-later-are-admitted-for-their-min-resources",
        backend=NATIVE,
        nodes=NODES,
        pods=[b.native_pod("driver", group="spark", cpu="1", memory=None)],
        podgroups=[
            b.podgroup("spark", min_member=1, min_resources={"cpu": "7"}),
            b.podgroup("tf", min_member=4, min_resources={"cpu": "4"}, created=LATER),
        ],
        queues=[b.queue()],
        ungated=frozenset({"driver"}),
        phases={"spark": "Inqueue", "tf": "Inqueue"},
    ),
    scenarios.Scenario(
        id="capability-caps-admission",
        backend=NATIVE,
        nodes=NODES,
        pods=[b.native_pod(f"c{i}", group=f"c{i}", cpu="4", memory=None) for i in range(3)],
        podgroups=[b.podgroup(f"c{i}", queue="c", min_resources={"cpu": "4"}) for i in range(3)],
        queues=[b.queue(), b.queue("c", capability={"cpu": "8"})],
        ungated=frozenset({"c0", "c1"}),
        conditions={"c2": ("Unschedulable", "NotEnoughResources", "capability")},
    ),
    scenarios.Scenario(
        id="running-group-gets-its-later-pods-ungated",
        backend=NATIVE,
        nodes=NODES,
        pods=[
            b.native_pod("r0", group="r", cpu="4", memory=None, node="n0"),
            b.native_pod("r1", group="r", cpu="4", memory=None, created=LATER),
        ],
        podgroups=[b.podgroup("r", min_member=1, phase="Running", min_resources={"cpu": "4"})],
        queues=[b.queue()],
        ungated=frozenset({"r1"}),
        phases={"r": "Running"},
    ),
    scenarios.Scenario(
        id="a-gang-larger-than-the-cluster-is-never-ungated",
        backend=NATIVE,
        nodes=NODES,
        pods=gang("big", 5),
        podgroups=[b.podgroup("big", min_member=5, min_resources={"cpu": "20"})],
        queues=[b.queue()],
        ungated=frozenset(),
        phases={"big": "Pending"},
    ),
    scenarios.Scenario(
        id="pods-without-a-group-are-kube-schedulers-alone",
        backend=NATIVE,
        nodes=NODES,
        pods=[b.pod("plain", group=None, scheduler="default-scheduler")],
        podgroups=[],
        queues=[b.queue()],
        ungated=frozenset(),
        untouched=frozenset({"plain"}),
    ),
    scenarios.Scenario(
        id="the-group-from-spec-scheduling-group-alone",
        backend=NATIVE,
        nodes=NODES,
        pods=[
            {
                **b.native_pod("s0", group="s", cpu="1", memory=None),
                "metadata": {
                    "name": "s0",
                    "namespace": "ns",
                    "uid": "uid-s0",
                    "creationTimestamp": "2025-01-01T00:00:00Z",
                },
            }
        ],
        podgroups=[b.podgroup("s", min_resources={"cpu": "1"})],
        queues=[b.queue()],
        ungated=frozenset({"s0"}),
    ),
    scenarios.Scenario(
        id="volcano-backend-binds-as-before",
        nodes=NODES,
        pods=[b.pod("v0", group="v", cpu="1", memory=None)],
        podgroups=[b.podgroup("v", min_resources={"cpu": "1"})],
        queues=[b.queue()],
        binds={"v0": "*"},
        ungated=frozenset(),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_ungate(scenario: scenarios.Scenario) -> None:
    result = scenarios.assert_expected(scenario)
    if scenario.backend == NATIVE:
        assert not result.binds() and not result.pipelined() and not result.evictions()
        assert not {v.pod for v in result.pods} & {f"ns/{p['metadata']['name']}" for p in scenario.pods}
