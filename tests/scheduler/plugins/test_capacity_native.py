"""capacity on the native backend: a queue tree held at admission, every level within its share
(``levels.admission_bounds``), the condition naming the level that refuses; reclaim through it.

Four nodes of 4 cpu (16). The tree: root → eng (deserves 8) → eng-a (deserves 8), eng-b; and
root → sci (deserves 8). Groups are one 4-cpu pod (2-cpu where said) with that minResources.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

NATIVE = "native"
NODES = [b.node(f"n{i}") for i in range(4)]
LATER = "2025-01-01T00:10:00Z"
TREE = [
    b.queue("root"),
    b.queue("eng", parent="root", deserved={"cpu": "8"}),
    b.queue("eng-a", parent="eng", deserved={"cpu": "8"}),
    b.queue("eng-b", parent="eng"),
    b.queue("sci", parent="root", deserved={"cpu": "8"}),
]
Dicts = list[dict[str, Any]]


def conf(*, factor: float = 1.2, hierarchy: bool = True, actions: str = "enqueue, allocate") -> str:
    cap = "{name: capacity, enableHierarchy: true}" if hierarchy else "{name: capacity}"
    over = f"{{name: overcommit, arguments: {{overcommit-factor: {factor}}}}}"
    return (
        f'actions: "{actions}"\ntiers:\n- plugins: [{{name: priority}}, {{name: gang}}, {{name: conformance}}]\n'
        f"- plugins: [{over}, {{name: predicates}}, {cap}, {{name: nodeorder}}]\n"
    )


def groups(queue: str, prefix: str, count: int, *, cpu: int = 4, nodes: tuple[str, ...] = ()) -> tuple[Dicts, Dicts]:
    """``count`` one-pod groups in ``queue``; the first ``len(nodes)`` run there, the rest wait."""
    pods = [
        b.native_pod(
            f"{prefix}{i}",
            group=f"{prefix}{i}",
            cpu=str(cpu),
            memory=None,
            node=nodes[i] if i < len(nodes) else None,
            created=f"2025-01-01T00:0{i}:00Z",
        )
        for i in range(count)
    ]
    podgroups = [
        b.podgroup(
            f"{prefix}{i}",
            queue=queue,
            min_resources={"cpu": str(cpu)},
            phase="Running" if i < len(nodes) else None,
            created=f"2025-01-01T00:0{i}:00Z",
        )
        for i in range(count)
    ]
    return pods, podgroups


def scenario(id: str, *parts: tuple[Dicts, Dicts], text: str | None = None, **kw: Any) -> scenarios.Scenario:
    return scenarios.Scenario(
        id=id,
        backend=NATIVE,
        nodes=NODES,
        pods=[p for part in parts for p in part[0]],
        podgroups=[g for part in parts for g in part[1]],
        queues=kw.pop("queues", TREE),
        conf=text or conf(),
        **kw,
    )


SCENARIOS = [
    scenario(
        # sci asks nothing: eng-a takes the cluster (its share and what sci does not ask for)
        "a-leaf-alone-takes-what-its-siblings-do-not-ask",
        groups("eng-a", "a", 4),
        ungated=frozenset({"a0", "a1", "a2", "a3"}),
    ),
    scenario(
        # sci asks its 8: eng (and so eng-a) is held to 8 at admission, though the cluster
        # (×2 overcommit) would admit more
        "every-level-holds-its-deserved-under-contention",
        groups("eng-a", "a", 3),
        groups("sci", "s", 2),
        text=conf(factor=2.0),
        ungated=frozenset({"a0", "a1", "s0", "s1"}),
        phases={"a2": "Pending"},
        conditions={"a2": ("Unschedulable", "NotEnoughResources", "its ancestor eng's deserved share at admission")},
    ),
    scenario(
        # eng-a itself has room (6 of 8) but eng holds 8 with eng-b's 2: the ancestor refuses
        "the-ancestor-level-refuses-and-is-named",
        groups("eng-a", "a", 4, cpu=2, nodes=("n2", "n3", "n3")),
        groups("eng-b", "e", 1, cpu=2, nodes=("n2",)),
        groups("sci", "s", 2, nodes=("n0", "n1")),
        ungated=frozenset(),
        phases={"a3": "Pending"},
        conditions={
            "a3": ("Unschedulable", "NotEnoughResources", "queue eng-a would exceed its ancestor eng's deserved share")
        },
    ),
    scenario(
        # without the hierarchy every queue sits under root: the same hold, flat
        "flat-capacity-holds-deserved-at-admission",
        groups("qa", "a", 3),
        groups("qb", "q", 3),
        queues=[b.queue("qa", deserved={"cpu": "8"}), b.queue("qb", deserved={"cpu": "8"})],
        text=conf(factor=2.0, hierarchy=False),
        ungated=frozenset({"a0", "a1", "q0", "q1"}),
        conditions={"a2": ("Unschedulable", "NotEnoughResources", "queue qa would exceed its own deserved share")},
    ),
    scenario(
        # eng-a fills the cluster; sci asks its 8: two of eng-a's groups are reclaimed whole
        "reclaim-through-the-tree",
        groups("eng-a", "a", 4, nodes=("n0", "n1", "n2", "n3")),
        groups("sci", "s", 2),
        text=conf(actions="enqueue, allocate, reclaim"),
        evictions=frozenset({"a0", "a1"}),  # equal groups: by name
        ungated=frozenset({"s0", "s1"}),
        phases={"a0": "Pending", "a1": "Pending", "a2": "Running", "a3": "Running"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_capacity_at_admission_on_native(scenario: scenarios.Scenario) -> None:
    result = scenarios.assert_expected(scenario)
    assert not result.binds() and not result.pipelined()


def test_the_volcano_backend_lets_a_queue_past_its_deserved() -> None:
    """The same contention on the Volcano backend admits all three of eng-a's groups: there
    allocate holds the shares, admission checks only the real capability."""
    pods, podgroups = groups("eng-a", "a", 3)
    sci_pods, sci_groups = groups("sci", "s", 2)
    volcano = [{**p, "spec": {**p["spec"], "schedulerName": "volcano"}} for p in pods + sci_pods]
    result = scenarios.Scenario(
        id="volcano",
        nodes=NODES,
        pods=volcano,
        podgroups=podgroups + sci_groups,
        queues=TREE,
        conf=conf(factor=2.0),
    ).run()
    assert result.podgroup("ns/a2").phase == "Inqueue"
