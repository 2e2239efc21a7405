"""predicates: each filter, as scenarios; the failure message names the reason."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

ZONES = [b.node("n1", labels={"zone": "a", "gen": "3"}), b.node("n2", labels={"zone": "b", "gen": "5"})]


def affinity(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
                }
            }
        }
    }


def one(spec: dict[str, Any], nodes: list[dict[str, Any]] = ZONES, **pod: Any) -> dict[str, Any]:
    return {
        "nodes": nodes,
        "pods": [b.pod("p0", spec=spec, **pod)],
        "podgroups": [b.podgroup("pg")],
        "queues": [b.queue()],
    }


NO_SCHEDULE = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
TOLERATE = {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}
ANTI = {
    "affinity": {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
}

SCENARIOS = [
    scenarios.Scenario(id="node-selector", **one({"nodeSelector": {"zone": "b"}}), binds={"p0": "n2"}),
    scenarios.Scenario(
        # Issue 14: no node will ever match, so the group is never admitted (it used to be
        # Inqueue, reserving its minResources, with "2 node(s) didn't match ..." as if it waited).
        id="node-selector-unmatched",
        **one({"nodeSelector": {"zone": "c"}}),
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "NeverFits", "task p0: no node matches nodeSelector zone=c")},
        pod_events={"p0": ("Unschedulable", "no node matches nodeSelector zone=c")},
    ),
    scenarios.Scenario(
        id="affinity-in", **one(affinity({"key": "zone", "operator": "In", "values": ["b"]})), binds={"p0": "n2"}
    ),
    scenarios.Scenario(
        id="affinity-notin", **one(affinity({"key": "zone", "operator": "NotIn", "values": ["a"]})), binds={"p0": "n2"}
    ),
    scenarios.Scenario(
        id="affinity-exists",
        **one(affinity({"key": "ssd", "operator": "Exists"}), nodes=[b.node("n1"), b.node("n2", labels={"ssd": "1"})]),
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="affinity-does-not-exist",
        **one(
            affinity({"key": "ssd", "operator": "DoesNotExist"}),
            nodes=[b.node("n1", labels={"ssd": "1"}), b.node("n2")],
        ),
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="affinity-gt", **one(affinity({"key": "gen", "operator": "Gt", "values": ["4"]})), binds={"p0": "n2"}
    ),
    scenarios.Scenario(
        id="affinity-lt", **one(affinity({"key": "gen", "operator": "Lt", "values": ["4"]})), binds={"p0": "n1"}
    ),
    scenarios.Scenario(
        id="taint-noschedule-repels",
        **one({}, nodes=[b.node("n1", taints=NO_SCHEDULE), b.node("n2", cpu="1")]),
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="taint-noexecute-repels",  # the only node's taint is never tolerated: never admitted (issue 14)
        **one({}, nodes=[b.node("n1", taints=[{"key": "x", "effect": "NoExecute"}])]),
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "NeverFits", "no node has only taints the pod tolerates")},
        pod_events={"p0": ("Unschedulable", "it does not tolerate x:NoExecute")},
    ),
    scenarios.Scenario(
        id="taint-tolerated",
        **one(TOLERATE, nodes=[b.node("n1", taints=NO_SCHEDULE)]),
        binds={"p0": "n1"},
    ),
    scenarios.Scenario(
        id="taint-prefer-noschedule-ignored",
        **one({}, nodes=[b.node("n1", taints=[{"key": "x", "effect": "PreferNoSchedule"}])]),
        binds={"p0": "n1"},
    ),
    scenarios.Scenario(
        id="unschedulable-node-skipped",
        **one({}, nodes=[b.node("n1", unschedulable=True), b.node("n2", cpu="1")]),
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="not-ready-node-skipped",
        **one({}, nodes=[b.node("n1", ready=False)]),
        binds={},
        pod_events={"p0": ("FailedScheduling", "1 node(s) were not ready")},
    ),
    scenarios.Scenario(
        id="extended-resource-gpu",
        **one({}, nodes=[b.node("n1"), b.node("n2", gpu=2)], gpu=1),
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="extended-resource-missing",  # no node has any GPU: never admitted (issue 14)
        **one({}, nodes=[b.node("n1")], gpu=1),
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "NeverFits", "task p0 needs nvidia.com/gpu 1 but no node has any")},
        pod_events={"p0": ("Unschedulable", "needs nvidia.com/gpu 1 but no node has any")},
    ),
    scenarios.Scenario(
        id="pods-per-node-limit",
        nodes=[b.node("n1", pods=1), b.node("n2", pods=1, cpu="1")],
        pods=[b.pod("p0", cpu="100m"), b.pod("p1", cpu="100m"), b.pod("p2", cpu="100m")],
        podgroups=[b.podgroup("pg", min_member=1)],
        queues=[b.queue()],
        bound_counts={"p": 2},
        pod_events={"p2": ("FailedScheduling", "2 Too many pods")},
    ),
    scenarios.Scenario(
        id="anti-affinity-hostname-existing-pod",
        nodes=[b.node("n1"), b.node("n2", cpu="1")],
        pods=[b.pod("db0", group="db0", node="n1", labels={"app": "db"}), b.pod("p0", labels={"app": "db"}, spec=ANTI)],
        podgroups=[b.podgroup("db0", phase="Running"), b.podgroup("pg")],
        queues=[b.queue()],
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="anti-affinity-hostname-within-gang",
        nodes=[b.node("n1"), b.node("n2"), b.node("n3")],
        pods=[b.pod(f"p{i}", labels={"app": "db"}, spec=ANTI) for i in range(4)],
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=[b.queue()],
        bound_counts={"p": 3},
        pod_events={"p3": ("FailedScheduling", "3 node(s) didn't match pod anti-affinity rules")},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_predicates(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
