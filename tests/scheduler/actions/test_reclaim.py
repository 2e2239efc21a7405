"""reclaim: across queues, from reclaimable queues above deserved, never below minMember."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

CONF = 'actions: "enqueue, allocate, reclaim"'
LATER = "2025-01-01T00:10:00Z"
NODES = [b.node("n1"), b.node("n2")]  # 8 cpu


def hogs(min_member: int) -> tuple[list, list]:
    pods = [
        b.pod(f"a{i}", group="a", cpu="1", memory=None, node=f"n{1 + i // 4}", created=f"2025-01-01T00:00:0{i}Z")
        for i in range(8)
    ]
    return pods, [b.podgroup("a", min_member=min_member, queue="qa", phase="Running")]


HOG_PODS, HOG_GROUPS = hogs(1)
GANG_PODS, GANG_GROUPS = hogs(8)
CLAIM_PODS = [b.pod(f"b{i}", group="b", cpu="1", memory=None, created=LATER) for i in range(2)]
CLAIM_GROUPS = [b.podgroup("b", min_member=2, queue="qb", created=LATER)]

SCENARIOS = [
    scenarios.Scenario(
        id="reclaim-takes-back-from-queue-above-deserved",
        nodes=NODES,
        pods=HOG_PODS + CLAIM_PODS,
        podgroups=HOG_GROUPS + CLAIM_GROUPS,
        queues=[b.queue("qa"), b.queue("qb")],
        conf=CONF,
        evictions=frozenset({"a3", "a2"}),
        pipelined={"b0": "n1", "b1": "n1"},
    ),
    scenarios.Scenario(
        id="reclaim-respects-reclaimable-false",
        nodes=NODES,
        pods=HOG_PODS + CLAIM_PODS,
        podgroups=HOG_GROUPS + CLAIM_GROUPS,
        queues=[b.queue("qa", reclaimable=False), b.queue("qb")],
        conf=CONF,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        id="reclaim-never-below-min-member",
        nodes=NODES,
        pods=GANG_PODS + CLAIM_PODS,
        podgroups=GANG_GROUPS + CLAIM_GROUPS,
        queues=[b.queue("qa"), b.queue("qb")],
        conf=CONF,
        evictions=frozenset(),
        pipelined={},
    ),
    scenarios.Scenario(
        id="reclaim-stops-at-guarantee",
        nodes=NODES,
        pods=HOG_PODS + CLAIM_PODS,
        podgroups=HOG_GROUPS + CLAIM_GROUPS,
        queues=[b.queue("qa", guarantee={"cpu": "8"}), b.queue("qb")],
        conf=CONF,
        evictions=frozenset(),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_reclaim(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
