"""gangreclaim: across queues at gang level; a queue above its deserved share gives back surplus
replicas first, whole jobs when those are not enough, never a gang broken below minMember."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

CONF = 'actions: "enqueue, allocate, gangreclaim"'
NO_WHOLE = CONF + "\nconfigurations:\n- name: gangreclaim\n  arguments: {allowWholeBundle: 'false'}\n"
LATER = "2025-01-01T00:10:00Z"
QUEUES = [b.queue("qa"), b.queue("qb")]


def running(group: str, count: int, *, min_member: int, per_node: int = 4, created: str = "00") -> tuple[list, list]:
    pods = [
        b.pod(
            f"{group}{i}",
            group=group,
            cpu="1",
            memory=None,
            node=f"n{1 + i // per_node}",
            created=f"2025-01-01T00:{created}:0{i}Z",
        )
        for i in range(count)
    ]
    return pods, [b.podgroup(group, min_member=min_member, queue="qa", phase="Running")]


def claim(count: int, cpu: str = "1") -> tuple[list, list]:
    pods = [b.pod(f"b{i}", group="b", cpu=cpu, memory=None, created=LATER) for i in range(count)]
    return pods, [b.podgroup("b", min_member=count, queue="qb", created=LATER)]


A8, AG8 = running("a", 8, min_member=4)  # 4 surplus replicas over two nodes
A4, AG4 = running("a", 4, min_member=4)  # n1, no surplus
C4, CG4 = (
    [b.pod(f"c{i}", group="c", cpu="1", memory=None, node="n2", created=f"2025-01-01T00:01:0{i}Z") for i in range(4)],
    [b.podgroup("c", min_member=4, queue="qa", phase="Running")],
)
A4M3, AG4M3 = running("a", 4, min_member=3)
B2, BG2 = claim(2)
B2X2, BG2X2 = claim(2, "2")

SCENARIOS = [
    scenarios.Scenario(
        # qa holds 8 of 8 cpu, deserves 6 once qb asks 2: two surplus replicas of a, nothing more
        id="gangreclaim-takes-surplus-replicas-first",
        nodes=[b.node("n1"), b.node("n2")],
        pods=A8 + B2,
        podgroups=AG8 + BG2,
        queues=QUEUES,
        conf=CONF,
        binds={},
        evictions=frozenset({"a7", "a6"}),
        pipelined={"b0": "n2", "b1": "n2"},
    ),
    scenarios.Scenario(
        # qa deserves 4 of its 8: neither gang has surplus, so one whole job (a) is given back
        id="gangreclaim-gives-back-a-whole-job",
        nodes=[b.node("n1"), b.node("n2")],
        pods=A4 + C4 + B2X2,
        podgroups=AG4 + CG4 + BG2X2,
        queues=QUEUES,
        conf=CONF,
        evictions=frozenset({"a0", "a1", "a2", "a3"}),
        pipelined={"b0": "n1", "b1": "n1"},
    ),
    scenarios.Scenario(
        id="gangreclaim-allow-whole-bundle-false-gives-back-surplus-only",
        nodes=[b.node("n1"), b.node("n2")],
        pods=A4 + C4 + B2X2,
        podgroups=AG4 + CG4 + BG2X2,
        queues=QUEUES,
        conf=NO_WHOLE,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        # qa may only give back 2 (down to its deserved 2): a's one surplus replica is not enough
        # and the whole of a would take qa below its share, so a keeps running whole
        id="gangreclaim-never-leaves-a-gang-below-min-member",
        nodes=[b.node("n1")],
        pods=A4M3 + B2,
        podgroups=AG4M3 + BG2,
        queues=QUEUES,
        conf=CONF,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        id="gangreclaim-respects-reclaimable-false",
        nodes=[b.node("n1"), b.node("n2")],
        pods=A8 + B2,
        podgroups=AG8 + BG2,
        queues=[b.queue("qa", reclaimable=False), b.queue("qb")],
        conf=CONF,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        id="gangreclaim-stops-at-guarantee",
        nodes=[b.node("n1"), b.node("n2")],
        pods=A8 + B2,
        podgroups=AG8 + BG2,
        queues=[b.queue("qa", guarantee={"cpu": "8"}), b.queue("qb")],
        conf=CONF,
        evictions=frozenset(),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_gangreclaim(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
