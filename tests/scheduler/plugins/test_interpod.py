"""Pod affinity and anti-affinity (interpod, through predicates and nodeorder), as scenarios.

Nodes carry zone labels; each scenario states where pods go or why they do not, and the
explain tool must agree with every one (tests/scheduler/tools/test_explain_agrees.py).
"""

from __future__ import annotations

import datetime
import random
from typing import Any

import numpy as np
import pytest

from scheduler import configure
from scheduler.api import building
from scheduler.framework import scored, session
from scheduler.plugins import interpod
from tests.builders import scheduler as b
from tests.support import scenarios

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
NOW = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
# Two nodes in each of zones a, b and c: a1 a2 b1 b2 c1 c2.
ZONED = [b.node(f"{z}{i}", labels={ZONE: z}) for z in "abc" for i in (1, 2)]


def term(app: str, key: str = ZONE, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key, **extra}


def required(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}}


def preferred(kind: str, weight: int, *terms: dict[str, Any]) -> dict[str, Any]:
    weighted = [{"weight": weight, "podAffinityTerm": t} for t in terms]
    return {"affinity": {kind: {"preferredDuringSchedulingIgnoredDuringExecution": weighted}}}


ANTI, AFFINITY = "podAntiAffinity", "podAffinity"


def gang(count: int, spec: dict[str, Any], *, app: str = "db", group: str = "pg", **pod: Any) -> list[dict[str, Any]]:
    return [b.pod(f"{group}-{i}", group=group, labels={"app": app}, spec=spec, **pod) for i in range(count)]


def running(name: str, node: str, app: str, spec: dict[str, Any] | None = None, **pod: Any) -> dict[str, Any]:
    """A pod already on ``node`` that no PodGroup of ours owns (another scheduler's)."""
    return b.pod(name, group=None, node=node, labels={"app": app}, scheduler="default-scheduler", spec=spec, **pod)


SCENARIOS = [
    scenarios.Scenario(
        # The gang's own members count: one per zone, the fourth has nowhere to go.
        id="anti-affinity-zone-within-gang",
        nodes=ZONED,
        pods=gang(4, required(ANTI, term("db"))),
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=[b.queue()],
        binds={"pg-0": "a1", "pg-1": "b1", "pg-2": "c1"},
        pod_events={"pg-3": ("FailedScheduling", "6 node(s) didn't match pod anti-affinity rules")},
    ),
    scenarios.Scenario(
        id="anti-affinity-zone-against-existing-pod",
        nodes=ZONED[:4],
        pods=[running("old", "a1", "db"), *gang(1, required(ANTI, term("db")))],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "b1"},
    ),
    scenarios.Scenario(
        # A gang that cannot be whole is rolled back: its members no longer count, so the next
        # gang, which avoids them, is placed (had the discard left them, it could not be).
        id="anti-affinity-rollback-undoes-counts",
        nodes=[b.node("a1", cpu="2", labels={ZONE: "a"}), b.node("b1", cpu="2", labels={ZONE: "b"})],
        pods=[
            *gang(3, {}, app="big", group="big", cpu="2", created="2025-01-01T00:00:00Z"),
            *gang(2, required(ANTI, term("big")), app="small", created="2025-01-01T00:01:00Z"),
        ],
        podgroups=[b.podgroup("big", min_member=3), b.podgroup("pg", min_member=2, created="2025-01-01T00:01:00Z")],
        queues=[b.queue()],
        binds={"pg-0": "a1", "pg-1": "b1"},
    ),
    scenarios.Scenario(
        # Symmetry: the running pod's anti-affinity keeps a pod that has no rule of its own
        # out of zone a.
        id="existing-pod-anti-affinity-repels-newcomer",
        nodes=ZONED[:4],
        pods=[running("guard", "a1", "guard", required(ANTI, term("web"))), *gang(2, {}, app="web")],
        podgroups=[b.podgroup("pg", min_member=2)],
        queues=[b.queue()],
        binds={"pg-0": "b1", "pg-1": "b2"},
    ),
    scenarios.Scenario(
        id="existing-pod-anti-affinity-leaves-no-room",
        nodes=ZONED[:2],
        pods=[running("guard", "a1", "guard", required(ANTI, term("web"))), *gang(1, {}, app="web")],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        pod_events={"pg-0": ("FailedScheduling", "2 node(s) didn't satisfy existing pods anti-affinity rules")},
    ),
    scenarios.Scenario(
        id="anti-affinity-other-namespace-not-counted",
        nodes=ZONED[:2],
        pods=[running("old", "a1", "db", namespace="other"), *gang(1, required(ANTI, term("db")))],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a2"},  # zone a is open to it (a1 is only busier)
    ),
    scenarios.Scenario(
        # An empty namespaceSelector looks in every namespace.
        id="anti-affinity-every-namespace",
        nodes=ZONED[:4],
        pods=[
            running("old", "a1", "db", namespace="other"),
            *gang(1, required(ANTI, term("db", namespaceSelector={}))),
        ],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "b1"},
    ),
    scenarios.Scenario(
        id="affinity-follows-existing-pod",
        nodes=ZONED,
        pods=[running("cache", "b2", "cache"), *gang(2, required(AFFINITY, term("cache")), app="web")],
        podgroups=[b.podgroup("pg", min_member=2)],
        queues=[b.queue()],
        binds={"pg-0": "b1", "pg-1": "b1"},  # zone b only; b1 and b2 are then alike, the lower row wins
    ),
    scenarios.Scenario(
        # No pod matches yet and the pods match their own term: the first goes anywhere, the
        # rest of the gang follows it into its zone.
        id="affinity-first-of-its-kind-then-together",
        nodes=ZONED,
        pods=gang(3, required(AFFINITY, term("db"))),
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=[b.queue()],
        binds={"pg-0": "a1", "pg-1": "a2", "pg-2": "a1"},
    ),
    scenarios.Scenario(
        id="affinity-to-absent-pods-waits",
        nodes=ZONED[:2],
        pods=gang(1, required(AFFINITY, term("cache")), app="web"),
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        pod_events={"pg-0": ("FailedScheduling", "2 node(s) didn't match pod affinity rules")},
    ),
    scenarios.Scenario(
        # No node has the topology key: it can never run here, so it is never admitted.
        id="affinity-topology-key-on-no-node",
        nodes=ZONED[:2],
        pods=gang(1, required(AFFINITY, term("db", key="rack"))),
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "NeverFits", "no node has the label(s) rack that its pod affinity")},
    ),
    scenarios.Scenario(
        id="affinity-disabled-by-predicate-argument",
        nodes=ZONED[:2],
        pods=gang(1, required(AFFINITY, term("cache")), app="web"),
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        conf="tiers:\n- plugins: [{name: gang}]\n"
        "- plugins: [{name: predicates, arguments: {predicate.PodAffinityEnable: false}}, {name: nodeorder}]\n",
        binds={"pg-0": "a1"},
    ),
    scenarios.Scenario(
        # a1 is the busier node, so resources alone would pick b1; the preferred term wins.
        id="preferred-affinity-outweighs-free-room",
        nodes=ZONED[:4],
        pods=[running("cache", "a1", "cache", cpu="2"), *gang(1, preferred(AFFINITY, 100, term("cache")), app="web")],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "a2"},
    ),
    scenarios.Scenario(
        id="preferred-anti-affinity-avoids-zone",
        nodes=[b.node("a1", cpu="8", labels={ZONE: "a"}), b.node("b1", labels={ZONE: "b"})],
        pods=[running("noisy", "a1", "noisy"), *gang(1, preferred(ANTI, 100, term("noisy")), app="web")],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "b1"},
    ),
    scenarios.Scenario(
        # Symmetry in scores: the running pod prefers web pods near it, so the newcomer goes there.
        id="existing-pod-preferred-affinity-attracts",
        nodes=ZONED[:4],
        pods=[running("cache", "b1", "cache", preferred(AFFINITY, 100, term("web"))), *gang(1, {}, app="web")],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        binds={"pg-0": "b2"},
    ),
    scenarios.Scenario(
        id="preferred-affinity-off-with-zero-weight",
        nodes=ZONED[:4],
        pods=[running("cache", "b1", "cache", preferred(AFFINITY, 100, term("web"))), *gang(1, {}, app="web")],
        podgroups=[b.podgroup("pg")],
        queues=[b.queue()],
        conf="tiers:\n- plugins: [{name: gang}]\n"
        "- plugins: [{name: predicates}, {name: nodeorder, arguments: {podaffinity.weight: 0}}]\n",
        binds={"pg-0": "a1"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_interpod(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


@pytest.mark.parametrize("seed", range(20))
def test_preferred_scores_equal_a_count_over_every_row(seed: int) -> None:
    """``InterPod.score`` (per domain when one key wider than a node is scored, per row
    otherwise) equals the score counted pod by pod for each row, scaled over the feasible rows."""
    rng = random.Random(seed)
    nodes = [
        b.node(f"n{i}", labels={ZONE: rng.choice("abcd")} if rng.random() < 0.8 else {})
        for i in range(rng.randint(3, 12))
    ]
    placed = [
        running(f"r{i}", rng.choice(nodes)["metadata"]["name"], rng.choice(("db", "web", "cache")))
        for i in range(rng.randint(0, 30))
    ]
    keys = [ZONE] if seed % 2 else [ZONE, HOST]  # one key: the per-domain path; two: per row
    weighted = [
        {"weight": rng.randint(1, 100), "podAffinityTerm": term(rng.choice(("db", "web", "cache")), key)}
        for key in keys
    ]
    kind = rng.choice((AFFINITY, ANTI))
    spec = {"affinity": {kind: {"preferredDuringSchedulingIgnoredDuringExecution": weighted}}}
    snap = building.build(
        nodes=nodes, pods=[*placed, *gang(1, spec, app="new")], podgroups=[b.podgroup("pg")], queues=[b.queue()]
    )
    ssn = session.Session(snap, configure.default(), NOW)
    task = snap.tasks["ns/pg-0"]
    feasible = np.array([rng.random() < 0.7 for _ in nodes])
    weight = rng.choice((1.0, 2.0))
    got = interpod.InterPod(ssn).score(task, feasible, weight)

    def domain(row: int, key: str) -> str | None:
        return snap.nodes[row].labels.get(key)

    row_of = {n.name: i for i, n in enumerate(snap.nodes)}
    sign = 1 if kind == AFFINITY else -1
    raw = np.zeros(len(nodes))
    for row in range(len(nodes)):
        for item in weighted:
            key, app = (
                item["podAffinityTerm"]["topologyKey"],
                item["podAffinityTerm"]["labelSelector"]["matchLabels"]["app"],
            )
            here = domain(row, key)
            near = [
                p
                for p in placed
                if p["metadata"]["labels"]["app"] == app
                and here is not None
                and domain(row_of[p["spec"]["nodeName"]], key) == here
            ]
            raw[row] += sign * item["weight"] * len(near)
    low, high = (raw[feasible].min(), raw[feasible].max()) if feasible.any() else (0.0, 0.0)
    want = np.zeros(len(nodes)) if high <= low else np.trunc((raw - low) / (high - low) * 100.0) * weight
    assert got is not None
    assert got.tolist() == want.tolist()
    if seed % 2 and not ssn.topology.identity(ZONE):  # one key wider than a node: split, same values
        split = interpod.InterPod(ssn).split(task, weight)
        assert split is not None and split.key == ZONE and split.special() == []
        present = ssn.topology.present(ZONE, feasible).tolist()
        value = split.values(scored.View(np.where(feasible, 0.0, -np.inf), present, int(feasible.sum())))
        ids = ssn.topology.ids(ZONE)[0]
        at_rows = [0.0] * len(nodes) if value.domains is None else [value.domains[d] for d in ids]
        assert at_rows == want.tolist()
    else:  # two keys, or a zone per node: not split
        assert interpod.InterPod(ssn).split(task, weight) is None
