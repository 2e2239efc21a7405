"""capacity: quotas at every level of a queue tree, shares under contention, reclaim nearest first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

NODES = [b.node(f"n{i}") for i in range(3)]  # 12 cpu
LATER = "2025-01-01T00:10:00Z"


def conf(*, actions: str = "enqueue, allocate, backfill", level: int = 0, victims_first: bool = False) -> str:
    """Volcano's capacity conf with the hierarchy on; ``victims_first``: capacity decides victims
    (in the first tier, gang in the second), as in Volcano's own capacity reclaim tests."""
    cap = f"{{name: capacity, enableHierarchy: true, arguments: {{ancestorReclaimLevel: {level}}}}}"
    if victims_first:
        tiers = f"- plugins: [{{name: conformance}}, {cap}]\n- plugins: [{{name: gang}}, {{name: predicates}}]\n"
        return f'actions: "{actions}"\ntiers:\n{tiers}'
    return (
        f'actions: "{actions}"\ntiers:\n- plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}]\n'
        f"- plugins: [{{name: overcommit}}, {{name: predicates}}, {cap}, {{name: nodeorder}}]\n"
    )


def demand(queue: str, count: int, prefix: str, cpu: str = "1") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``count`` one-pod groups in ``queue``; pods are named <prefix><i>."""
    pods = [b.pod(f"{prefix}{i}", group=f"{prefix}-{i}", cpu=cpu, memory=None) for i in range(count)]
    return pods, [b.podgroup(f"{prefix}-{i}", queue=queue) for i in range(count)]


def q(name: str, parent: str | None = None, **kw: Any) -> dict[str, Any]:
    return b.queue(name, parent=parent, **kw)


def cpu(n: int | str) -> Mapping[str, str]:
    return {"cpu": str(n)}


def workload(*parts: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    return {"pods": [p for pods, _ in parts for p in pods], "podgroups": [g for _, groups in parts for g in groups]}


# org -> team (capability 4) -> pa, pb; org -> pc. Without team's cap, pa and pb would take 10.
MIDDLE_CAP = workload(demand("pa", 6, "a"), demand("pb", 6, "b"), demand("pc", 2, "c"))
# org-a (deserved 8) -> a1 (6), a2 (2); org-b (deserved 4) -> b1 (4)
DESERVED_TREE = [
    q("org-a", deserved=cpu(8)),
    q("a1", "org-a", deserved=cpu(6)),
    q("a2", "org-a", deserved=cpu(2)),
    q("org-b", deserved=cpu(4)),
    q("b1", "org-b", deserved=cpu(4)),
]
CONTENTION = workload(demand("a1", 12, "x"), demand("a2", 12, "y"), demand("b1", 12, "z"))
BORROWING = workload(demand("a1", 12, "x"), demand("a2", 12, "y"))

# Volcano's hierarchical-jobs queues (example/hierarchical-jobs/queues.yaml), one without root/ in front.
HDRF = [
    ("root-eng-prod", "root/eng/prod", "1/2/8"),
    ("root-eng-dev", "eng/dev", "2/2"),
    ("root-sci-prod", "root/sci/prod", "1/8/8"),
    ("root-sci-dev", "root/sci/dev", "1/8/2"),
]
HDRF_QUEUES = [
    q(name, annotations={"volcano.sh/hierarchy": path, "volcano.sh/hierarchy-weights": weights})
    for name, path, weights in HDRF
]
HDRF_NODES = [b.node(f"n{i}", cpu="10", memory="64Gi") for i in range(5)]  # 50 cpu
HDRF_LOAD = workload(*(demand(name, 40, f"{name}-p") for name, _, _ in HDRF))

SCENARIOS = [
    scenarios.Scenario(
        id="capability-at-a-middle-level-limits-its-leaves",
        nodes=NODES,
        **MIDDLE_CAP,
        queues=[
            q("org"),
            q("team", "org", capability=cpu(4), deserved=cpu(4)),
            q("pa", "team", deserved=cpu(2)),
            q("pb", "team", deserved=cpu(2)),
            q("pc", "org", deserved=cpu(2)),
        ],
        conf=conf(),
        bound_counts={"a": 2, "b": 2, "c": 2},
        pod_events={"a5": ("FailedScheduling", "would exceed its ancestor team's real capability (cpu 4 + 1 > 4")},
    ),
    scenarios.Scenario(
        id="guarantee-at-a-level-is-kept-from-its-siblings",
        nodes=NODES,
        **workload(demand("tb1", 8, "b")),
        queues=[
            q("org", capability=cpu(8)),
            q("ta", "org", guarantee=cpu(4)),
            q("ta1", "ta"),
            q("tb", "org"),
            q("tb1", "tb"),
        ],
        conf=conf(),
        bound_counts={"b": 4},
        pod_events={"b7": ("FailedScheduling", "real capability (cpu 4 + 1 > 4")},
    ),
    scenarios.Scenario(
        id="deserved-shares-under-contention",
        nodes=NODES,
        **CONTENTION,
        queues=DESERVED_TREE,
        conf=conf(),
        bound_counts={"x": 6, "y": 2, "z": 4},
    ),
    scenarios.Scenario(
        id="unused-deserved-is-borrowed-in-proportion-within-the-tree",
        nodes=NODES,
        **BORROWING,
        queues=DESERVED_TREE,
        conf=conf(),
        bound_counts={"x": 9, "y": 3},
    ),
    scenarios.Scenario(
        id="hierarchy-annotations-weights-become-shares-at-each-level",
        nodes=HDRF_NODES,
        **HDRF_LOAD,
        queues=HDRF_QUEUES,
        conf=conf(),
        # eng 2 : sci 8 of 50 cpu, then prod 8 : dev 2 inside each
        bound_counts={"root-eng-prod-p": 8, "root-eng-dev-p": 2, "root-sci-prod-p": 32, "root-sci-dev-p": 8},
    ),
    scenarios.Scenario(
        id="a-group-in-a-queue-with-children-is-refused",
        nodes=NODES,
        pods=[b.pod("t0", group="t", cpu="1", memory=None), b.pod("s0", group="s", cpu="1", memory=None)],
        podgroups=[b.podgroup("t", queue="team"), b.podgroup("s", queue="team", phase="Inqueue")],
        queues=[q("org"), q("team", "org"), q("pa", "team")],
        conf=conf(),
        binds={},
        phases={"t": "Pending", "s": "Inqueue"},
        conditions={
            "t": ("Unschedulable", "NotLeafQueue", "queue team is not a leaf queue: only leaf queues take jobs"),
            "s": ("Unschedulable", "NotLeafQueue", "(its leaves: pa)"),
        },
    ),
    scenarios.Scenario(
        id="a-queue-without-a-place-in-the-tree-is-refused-the-rest-schedules",
        nodes=NODES,
        pods=[b.pod("m0", group="m", cpu="1", memory=None), b.pod("k0", group="k", cpu="1", memory=None)],
        podgroups=[b.podgroup("m", queue="lost"), b.podgroup("k", queue="pa")],
        queues=[q("lost", "nowhere"), q("org"), q("pa", "org")],
        conf=conf(),
        binds={"k0": "*"},
        conditions={"m": ("Unschedulable", "QueueNotInTree", "its parent queue 'nowhere' does not exist")},
    ),
]

# Reclaim: org -> team-x -> p1, p2; org -> team-y -> p3. p3's pods fill n1, p2's fill n2; p1 asks for 2.
RECLAIM_NODES = [b.node("n1"), b.node("n2")]
SIBLING = [
    b.pod(f"x{i}", group="x", cpu="1", memory=None, node="n2", created=f"2025-01-01T00:00:0{i}Z") for i in range(4)
]
COUSIN = [
    b.pod(f"y{i}", group="y", cpu="1", memory=None, node="n1", created=f"2025-01-01T00:00:0{i}Z") for i in range(4)
]
CLAIM = [b.pod(f"c{i}", group="c", cpu="1", memory=None, created=LATER) for i in range(2)]
RUNNING = [b.podgroup("x", queue="p2", phase="Running"), b.podgroup("y", queue="p3", phase="Running")]
CLAIMER = [b.podgroup("c", min_member=2, queue="p1", created=LATER)]


def reclaim_tree(p2_deserved: int) -> list[dict[str, Any]]:
    return [
        q("org"),
        q("team-x", "org"),
        q("team-y", "org"),
        q("p1", "team-x", deserved=cpu(4)),
        q("p2", "team-x", deserved=cpu(p2_deserved)),
        q("p3", "team-y", deserved=cpu(1)),
    ]


# Volcano's capacity test cases 5 to 7 (docs/design/hierarchical-queue-on-capacity-plugin.md).
def res(n: int) -> Mapping[str, str]:
    return {"cpu": str(n), "memory": f"{n}Gi"}


ANCESTOR_TREE = [
    q("grand-a", deserved=res(2), capability=res(4)),
    q("parent-a", "grand-a", deserved=res(2), capability=res(2)),
    q("queue-a", "parent-a", deserved=res(2), capability=res(2)),
    q("grand-b", deserved=res(3), capability=res(4)),
    q("parent-b", "grand-b", deserved=res(1), capability=res(2)),
    q("queue-b", "parent-b", deserved=res(1), capability=res(2)),
]
ANCESTOR_PODS = [
    b.pod("victim", group="v", cpu="2", memory="2Gi", node="n1"),
    b.pod("reclaimer", group="r", cpu="2", memory="2Gi", created=LATER),
]
ANCESTOR_GROUPS = [b.podgroup("v", queue="queue-b", phase="Running"), b.podgroup("r", queue="queue-a", created=LATER)]
RECLAIMED, PIPELINED = frozenset({"victim"}), {"reclaimer": "n1"}


def ancestor_case(level: int) -> dict[str, Any]:
    return {
        "nodes": [b.node("n1", cpu="2", memory="2Gi")],
        "pods": ANCESTOR_PODS,
        "podgroups": ANCESTOR_GROUPS,
        "queues": ANCESTOR_TREE,
        "conf": conf(actions="enqueue, allocate, reclaim", level=level, victims_first=True),
    }


RECLAIMS = [
    scenarios.Scenario(
        id="reclaim-takes-from-siblings-under-the-nearest-ancestor-first",
        nodes=RECLAIM_NODES,
        pods=SIBLING + COUSIN + CLAIM,
        podgroups=RUNNING + CLAIMER,
        queues=reclaim_tree(1),
        conf=conf(actions="enqueue, allocate, reclaim"),
        evictions=frozenset({"x3", "x2"}),
        pipelined={"c0": "n2", "c1": "n2"},
    ),
    scenarios.Scenario(
        id="reclaim-goes-to-cousins-when-siblings-are-within-deserved",
        nodes=RECLAIM_NODES,
        pods=SIBLING + COUSIN + CLAIM,
        podgroups=RUNNING + CLAIMER,
        queues=reclaim_tree(4),
        conf=conf(actions="enqueue, allocate, reclaim", victims_first=True),
        evictions=frozenset({"y3", "y2"}),
        pipelined={"c0": "n1", "c1": "n1"},
    ),
    # Volcano's case5: leaf-level checks only; case6: parent-b is above its deserved too;
    # case7: grand-b, two levels up, is within its deserved, so nothing is reclaimed.
    scenarios.Scenario(id="ancestor-reclaim-level-0", **ancestor_case(0), evictions=RECLAIMED, pipelined=PIPELINED),
    scenarios.Scenario(id="ancestor-reclaim-level-1", **ancestor_case(1), evictions=RECLAIMED, pipelined=PIPELINED),
    scenarios.Scenario(id="ancestor-reclaim-level-2", **ancestor_case(2), evictions=frozenset(), pipelined={}),
]

FLAT_CONF = (
    'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: predicates}, {name: capacity}]\n"
)
FLAT = [
    scenarios.Scenario(
        id="without-hierarchy-deserved-shares-a-flat-cluster",
        nodes=NODES,
        **workload(demand("fa", 12, "a"), demand("fb", 12, "b")),
        queues=[q("fa", deserved=cpu(8)), q("fb", deserved=cpu(4))],
        conf=FLAT_CONF,
        bound_counts={"a": 8, "b": 4},
    ),
    scenarios.Scenario(
        id="without-hierarchy-parents-are-ignored-and-capability-caps-borrowing",
        nodes=NODES,
        **workload(demand("fa", 12, "a")),
        queues=[q("fa", "fb", deserved=cpu(2), capability=cpu(5)), q("fb")],
        conf=FLAT_CONF,
        bound_counts={"a": 5},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS + RECLAIMS + FLAT, ids=lambda s: s.id)
def test_capacity(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


@pytest.mark.parametrize("scenario", SCENARIOS[:5], ids=lambda s: s.id)
def test_reference_path_makes_the_same_plan(scenario: scenarios.Scenario) -> None:
    fast = scenario.run()
    data = {"nodes": scenario.nodes, "pods": scenario.pods, "podgroups": scenario.podgroups, "queues": scenario.queues}
    slow = scenarios.schedule(data, scenario.conf or "", fast_paths=False)
    assert fast.binds() == slow.binds()
