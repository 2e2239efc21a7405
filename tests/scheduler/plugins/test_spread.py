"""Topology spread constraints (spread, through predicates and nodeorder), as scenarios.

``DoNotSchedule`` filters, ``ScheduleAnyway`` scores; the explain tool must agree with every
one (tests/scheduler/tools/test_explain_agrees.py).
"""

from __future__ import annotations

import datetime
import math
import random
from typing import Any

import numpy as np
import pytest

from scheduler import configure
from scheduler.api import building
from scheduler.framework import scored, session
from scheduler.plugins import spread
from tests.builders import scheduler as b
from tests.support import scenarios

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NOW = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
# Zone a has three nodes, zone b one: spreading by node would put three pods in a for one in b.
UNEVEN = [*(b.node(f"a{i}", labels={ZONE: "a"}) for i in (1, 2, 3)), b.node("b1", labels={ZONE: "b"})]
BINPACK = "tiers:\n- plugins: [{name: gang}]\n- plugins: [{name: predicates}, {name: binpack}]\n"


def spread_constraint(
    key: str = ZONE, skew: int = 1, *, soft: bool = False, app: str = "w", **extra: Any
) -> dict[str, Any]:
    rule = {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": "ScheduleAnyway" if soft else "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": app}},
        **extra,
    }
    return {"topologySpreadConstraints": [rule]}


def gang(count: int, spec: dict[str, Any], *, group: str = "pg", **pod: Any) -> list[dict[str, Any]]:
    labels = pod.pop("labels", {"app": "w"})
    return [b.pod(f"{group}-{i}", group=group, labels=labels, spec=spec, **pod) for i in range(count)]


def running(name: str, node: str, labels: dict[str, str] | None = None, **pod: Any) -> dict[str, Any]:
    """A pod already on ``node`` that no PodGroup of ours owns."""
    return b.pod(name, group=None, node=node, labels=labels or {"app": "w"}, scheduler="default-scheduler", **pod)


SCENARIOS = [
    scenarios.Scenario(
        # Two per zone: by node alone it would be a1, a2, a3, b1 (a1 again for the fourth).
        id="zone-spread-gang-evenly",
        nodes=UNEVEN,
        pods=gang(4, spread_constraint()),
        podgroups=[b.podgroup("pg", min_member=4)],
        queues=[b.queue()],
        binds={"pg-0": "a1", "pg-1": "b1", "pg-2": "a2", "pg-3": "b1"},
    ),
    scenarios.Scenario(
        id="zone-spread-counts-existing-pods",
        nodes=UNEVEN,
        pods=[running("old0", "a1"), running("old1", "a2"), *gang(1, spread_constraint())],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "b1"},
    ),
    scenarios.Scenario(
        id="zone-spread-terminating-pods-not-counted",
        nodes=UNEVEN,
        pods=[
            {**running("old0", "a1"), "metadata": {**running("old0", "a1")["metadata"], "deletionTimestamp": b.T0}},
            running("old1", "b1"),
            *gang(1, spread_constraint()),
        ],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a2"},  # a has 0 live pods, b has 1: only zone a is allowed
    ),
    scenarios.Scenario(
        # Zone b's only node is full: the pod may not pile onto zone a, so it waits, and says why.
        id="zone-spread-unsatisfiable-waits",
        nodes=UNEVEN,
        pods=[running("old0", "a1"), running("hog", "b1", {"app": "hog"}, cpu="4"), *gang(1, spread_constraint())],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        pod_events={"pg-0": ("FailedScheduling", "3 node(s) didn't match pod topology spread constraints")},
    ),
    scenarios.Scenario(
        id="spread-topology-key-on-no-node",
        nodes=UNEVEN,
        pods=gang(1, spread_constraint("rack")),
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "NeverFits", "no node has the label(s) rack that its topology spread")},
    ),
    scenarios.Scenario(
        # Nodes without the key are refused, by the static check: only zone-labelled ones are used.
        id="spread-skips-nodes-without-the-key",
        nodes=[b.node("bare"), b.node("z1", labels={ZONE: "a"})],
        pods=gang(1, spread_constraint()),
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "z1"},
    ),
    scenarios.Scenario(
        # minDomains 3 over two zones: the global minimum counts as 0, so each zone takes one.
        id="spread-min-domains-caps-each-zone",
        nodes=UNEVEN,
        pods=gang(3, spread_constraint(minDomains=3)),
        podgroups=[b.podgroup("pg", min_member=2)],
        queues=[b.queue()],
        binds={"pg-0": "a1", "pg-1": "b1"},
        pod_events={"pg-2": ("FailedScheduling", "4 node(s) didn't match pod topology spread constraints")},
    ),
    scenarios.Scenario(
        # Honor (the default): zone c, which the pod's nodeSelector rules out, is no domain, so
        # its emptiness does not hold zones a and b back.
        id="spread-node-affinity-policy-honor",
        nodes=[b.node(n, labels={ZONE: n[0], **({"pool": "x"} if n != "c1" else {})}) for n in ("a1", "b1", "c1")],
        pods=[
            running("old0", "a1"),
            running("old1", "b1"),
            *gang(1, {**spread_constraint(), "nodeSelector": {"pool": "x"}}),
        ],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a1"},
    ),
    scenarios.Scenario(
        id="spread-node-affinity-policy-ignore",
        nodes=[b.node(n, labels={ZONE: n[0], **({"pool": "x"} if n != "c1" else {})}) for n in ("a1", "b1", "c1")],
        pods=[
            running("old0", "a1"),
            running("old1", "b1"),
            *gang(1, {**spread_constraint(nodeAffinityPolicy="Ignore"), "nodeSelector": {"pool": "x"}}),
        ],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        pod_events={"pg-0": ("FailedScheduling", "2 node(s) didn't match pod topology spread constraints")},
    ),
    scenarios.Scenario(
        # Honor: the tainted zone c (not tolerated) is no domain; Ignore (the default) counts it.
        id="spread-node-taints-policy-honor",
        nodes=[
            b.node("a1", labels={ZONE: "a"}),
            b.node("b1", labels={ZONE: "b"}),
            b.node("c1", labels={ZONE: "c"}, taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}]),
        ],
        pods=[running("old0", "a1"), running("old1", "b1"), *gang(1, spread_constraint(nodeTaintsPolicy="Honor"))],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a1"},
    ),
    scenarios.Scenario(
        id="spread-node-taints-policy-ignore",
        nodes=[
            b.node("a1", labels={ZONE: "a"}),
            b.node("b1", labels={ZONE: "b"}),
            b.node("c1", labels={ZONE: "c"}, taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}]),
        ],
        pods=[running("old0", "a1"), running("old1", "b1"), *gang(1, spread_constraint())],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        pod_events={"pg-0": ("FailedScheduling", "2 node(s) didn't match pod topology spread constraints")},
    ),
    scenarios.Scenario(
        # matchLabelKeys: only pods of the same revision count, so zone a is open to revision 2.
        id="spread-match-label-keys",
        nodes=UNEVEN,
        pods=[
            running("old0", "a1", {"app": "w", "rev": "1"}),
            running("old1", "a2", {"app": "w", "rev": "1"}),
            running("hog", "b1", {"app": "hog"}, cpu="3"),
            *gang(1, spread_constraint(matchLabelKeys=["rev"]), labels={"app": "w", "rev": "2"}),
        ],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a3"},
    ),
    scenarios.Scenario(
        # Binpack alone would stack all four on one node; a hard spread by host caps each at two.
        id="hostname-spread-overrides-binpack",
        nodes=[b.node("n1", cpu="8"), b.node("n2", cpu="8")],
        pods=gang(4, spread_constraint(HOST)),
        podgroups=[b.podgroup("pg", min_member=4)],
        queues=[b.queue()],
        conf=BINPACK,
        binds={"pg-0": "n1", "pg-1": "n2", "pg-2": "n1", "pg-3": "n2"},
    ),
    scenarios.Scenario(
        # A gang that cannot be whole is rolled back, so its members do not skew the next one.
        id="spread-rollback-undoes-counts",
        nodes=[b.node("a1", cpu="2", labels={ZONE: "a"}), b.node("b1", cpu="1", labels={ZONE: "b"})],
        pods=[
            *gang(4, spread_constraint(), group="big", created="2025-01-01T00:00:00Z"),
            *gang(2, spread_constraint(), created="2025-01-01T00:01:00Z"),
        ],
        podgroups=[b.podgroup("big", min_member=4), b.podgroup("pg", min_member=2, created="2025-01-01T00:01:00Z")],
        queues=[b.queue()],
        # Three of big's four fit (a1, b1, a1), then it is discarded; left counted, they would
        # have sent pg-0 to b1 and pg-1 to a1.
        binds={"pg-0": "a1", "pg-1": "b1"},
    ),
    scenarios.Scenario(
        # ScheduleAnyway: zone a already has two matching pods and the more room; the score
        # sends the pod to zone b all the same.
        id="soft-spread-prefers-emptier-zone",
        nodes=[*(b.node(f"a{i}", cpu="8", memory="16Gi", labels={ZONE: "a"}) for i in (1, 2)), UNEVEN[3]],
        pods=[running("old0", "a1"), running("old1", "a2"), *gang(1, spread_constraint(soft=True))],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "b1"},
    ),
    scenarios.Scenario(
        id="soft-spread-never-refuses",
        nodes=UNEVEN[:3],
        pods=[running("old0", "a1"), *gang(1, spread_constraint(soft=True))],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a2"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_spread(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


@pytest.mark.parametrize("seed", range(20))
def test_hostname_score_equals_kube_schedulers_formula(seed: int) -> None:
    """One ``ScheduleAnyway`` constraint on the hostname (scored from the rows with a counted pod
    only): each row's score is kube-scheduler's, worked out here pod by pod."""
    rng = random.Random(seed)
    nodes = [b.node(f"n{i}", labels={ZONE: rng.choice("ab")}) for i in range(rng.randint(2, 12))]
    placed = [
        running(f"r{i}", rng.choice(nodes)["metadata"]["name"], labels={"app": rng.choice(("w", "v"))})
        for i in range(rng.randint(0, 25))
    ]
    skew = rng.randint(1, 3)
    snap = building.build(
        nodes=nodes,
        pods=[*placed, *gang(1, spread_constraint(HOST, skew, soft=True))],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
    )
    spreading = spread.Spreading(session.Session(snap, configure.default(), NOW))
    for _ in range(5):
        feasible = np.array([rng.random() < 0.6 for _ in nodes])
        if not feasible.any():
            continue
        counted = [
            sum(1 for p in placed if p["spec"]["nodeName"] == n.name and p["metadata"]["labels"]["app"] == "w")
            for n in snap.nodes
        ]
        raw = [math.floor(c * math.log(int(feasible.sum()) + 2) + skew - 1 + 0.5) for c in counted]
        low = min(r for r, f in zip(raw, feasible, strict=True) if f)
        high = max(0, *(r for r, f in zip(raw, feasible, strict=True) if f))
        want = [float((high + low - r) * 100 // high) if high else 100.0 for r in raw]
        assert spreading.score(snap.tasks["ns/pg-0"], feasible, 1.0).tolist() == want
        # Split (``framework.scored``): a flat value, and its own for each row with a counted pod.
        split = spreading.split(snap.tasks["ns/pg-0"], 2.0)
        assert split is not None and split.key is None
        busy = split.special()
        assert busy == [row for row, c in enumerate(counted) if c]
        value = split.values(scored.View(np.where(feasible, 0.0, -np.inf), [True], int(feasible.sum())))
        assert [value.rows.get(row, value.flat) for row in range(len(nodes))] == [2.0 * w for w in want]
