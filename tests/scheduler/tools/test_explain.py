"""explain: scenarios (cluster as API dicts) → the facts the explanation must state."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from bridge import errors as bridge_errors
from scheduler import configure
from scheduler.api import building
from scheduler.tools import explain
from tests.builders import scheduler as b


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    nodes: Sequence[Mapping[str, Any]]
    pods: Sequence[Mapping[str, Any]]
    podgroups: Sequence[Mapping[str, Any]]
    queues: Sequence[Mapping[str, Any]] = (b.queue(),)
    group: str = "ns/pg"
    failures: Mapping[str, int] = dataclasses.field(default_factory=dict)  # reason → nodes (first shape)
    fit: int | None = None
    needed: int | None = None
    fit_nodes: Mapping[str, int] | None = None
    admitted: bool | None = None  # None: the group is already admitted (no enqueue facts)
    shortfall: str | None = None
    free_up: str | None = None
    deserved_cpu: int | None = None  # millicores
    verdict: str = ""

    def run(self) -> explain.Explanation:
        snap = building.build(nodes=self.nodes, pods=self.pods, podgroups=self.podgroups, queues=self.queues)
        return explain.explain(snap, configure.default(), self.group)


CASES = [
    Case(
        id="gang-one-short-on-cpu",
        nodes=[b.node("n1", cpu="4"), b.node("n2", cpu="4")],
        pods=[b.pod(f"p{i}", cpu="3") for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=3, phase="Inqueue")],
        fit=2,
        needed=3,
        fit_nodes={"n1": 1, "n2": 1},
        free_up="cpu=3000m, memory=1024Mi, pods=1",  # one more 3-cpu task: the third member
        verdict="only 2 of the 3 task(s) minMember needs fit now",
    ),
    Case(
        id="selector-and-taint-counted-per-predicate",
        nodes=[
            b.node("a", labels={"zone": "z1"}),
            b.node("b", labels={"zone": "z2"}),
            b.node("c", labels={"zone": "z1"}, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
            b.node("d", labels={"zone": "z1"}, ready=False),
        ],
        pods=[b.pod("p0", spec={"nodeSelector": {"zone": "z1"}}), b.pod("p1", spec={"nodeSelector": {"zone": "z1"}})],
        podgroups=[b.podgroup("pg", min_member=2, phase="Inqueue")],
        failures={
            "node(s) didn't match Pod's node affinity/selector": 1,
            "node(s) had untolerated taint": 1,
            "node(s) were not ready": 1,
        },
        fit=2,
        needed=2,
        fit_nodes={"a": 2},
        verdict="2 task(s) needed and 2 fit now",
    ),
    Case(
        id="pending-group-blocked-by-inqueue-reservation",
        nodes=[b.node("n1", cpu="10")],
        pods=[b.pod("big0", group="big", cpu="1"), b.pod("p0", cpu="4")],
        podgroups=[
            b.podgroup("big", min_member=1, min_resources={"cpu": "9"}, phase="Inqueue"),
            b.podgroup("pg", min_member=1, min_resources={"cpu": "4"}),
        ],
        # idle 10 × 1.2 = 12 cpu; big still reserves 9; 9 + 4 > 12 → short by 1 cpu.
        admitted=False,
        shortfall="cpu=1000m",
        verdict="not admitted",
    ),
    Case(
        id="pending-group-admissible",
        nodes=[b.node("n1", cpu="10")],
        pods=[b.pod("p0", cpu="4")],
        podgroups=[b.podgroup("pg", min_member=1, min_resources={"cpu": "4"})],
        admitted=True,
        fit=1,
        needed=1,
    ),
    Case(
        id="queue-share-by-weight",
        nodes=[b.node("n1", cpu="8", memory="64Gi")],
        pods=[b.pod(f"a{i}", group="a", cpu="2") for i in range(4)] + [b.pod(f"p{i}", cpu="2") for i in range(4)],
        podgroups=[
            b.podgroup("a", min_member=4, queue="qa", phase="Inqueue"),
            b.podgroup("pg", min_member=4, queue="qb", phase="Inqueue"),
        ],
        queues=[b.queue("qa", weight=3), b.queue("qb", weight=1)],
        deserved_cpu=2000,  # 8 cpu split 3:1
        fit=4,
        needed=4,
    ),
    Case(
        id="running-group-extra-member",
        nodes=[b.node("n1", cpu="2")],
        pods=[b.pod("r0", cpu="2", node="n1"), b.pod("extra", cpu="2")],
        podgroups=[b.podgroup("pg", min_member=1, phase="Running")],
        failures={"Insufficient cpu": 1},
        fit=0,
        needed=0,
        verdict="minMember is met",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_explain(case: Case) -> None:
    exp = case.run()
    if case.failures:
        assert dict(exp.shapes[0].failures) == dict(case.failures)
    if case.fit is not None:
        assert exp.fit == case.fit
    if case.needed is not None:
        assert exp.needed == case.needed
    if case.fit_nodes is not None:
        assert dict(exp.fit_nodes) == dict(case.fit_nodes)
    if case.admitted is None:
        assert exp.enqueue is None
    else:
        assert exp.enqueue is not None and exp.enqueue.admitted is case.admitted
        if case.shortfall is not None:
            assert str(exp.enqueue.shortfall) == case.shortfall
    if case.free_up is not None:
        assert str(exp.free_up) == case.free_up
    if case.deserved_cpu is not None:
        assert exp.queue.deserved.cpu == case.deserved_cpu
    assert case.verdict in exp.verdict
    text = explain.render(exp)
    assert text.startswith(f"PodGroup {case.group}:") and exp.verdict in text


def test_unknown_podgroup_is_an_error() -> None:
    snap = building.build(nodes=[b.node("n1")], pods=[], podgroups=[], queues=[b.queue()])
    with pytest.raises(bridge_errors.BridgeError, match="podgroup ns/nope not found"):
        explain.explain(snap, configure.default(), "ns/nope")


def test_explaining_changes_nothing() -> None:
    """The snapshot is immutable and the trial placements are discarded: same answer twice."""
    case = CASES[0]
    assert case.run() == case.run()
