"""proportion: weights, capability, guarantee and spec.deserved under contention."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.plugins import proportion
from tests.builders import scheduler as b
from tests.support import scenarios

NODES = [b.node(f"n{i}") for i in range(3)]  # 12 cpu


def demand(queue: str, count: int = 12) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """``count`` one-pod groups of 1 cpu in ``queue``; pods are named <queue><i>."""
    pods = [b.pod(f"{queue}{i}", group=f"{queue}-{i}", cpu="1", memory=None) for i in range(count)]
    groups = [b.podgroup(f"{queue}-{i}", queue=queue) for i in range(count)]
    return pods, groups


A_PODS, A_GROUPS = demand("a")
B_PODS, B_GROUPS = demand("b")

SCENARIOS = [
    scenarios.Scenario(
        id="weights-1-to-2-share-4-and-8",
        nodes=NODES,
        pods=A_PODS + B_PODS,
        podgroups=A_GROUPS + B_GROUPS,
        queues=[b.queue("a", weight=1), b.queue("b", weight=2)],
        bound_counts={"a": 4, "b": 8},
    ),
    scenarios.Scenario(
        id="capability-caps-queue-below-free-capacity",
        nodes=NODES,
        pods=A_PODS,
        podgroups=A_GROUPS,
        queues=[b.queue("a", capability={"cpu": "2"})],
        bound_counts={"a": 2},
        pod_events={"a5": ("FailedScheduling", "queue a would exceed its deserved share")},
    ),
    scenarios.Scenario(
        id="guarantee-floors-low-weight-queue",
        nodes=NODES,
        pods=A_PODS + B_PODS,
        podgroups=A_GROUPS + B_GROUPS,
        queues=[b.queue("a", weight=1, guarantee={"cpu": "6"}), b.queue("b", weight=3)],
        bound_counts={"a": 6, "b": 6},
    ),
    scenarios.Scenario(
        id="without-guarantee-weights-1-to-3",
        nodes=NODES,
        pods=A_PODS + B_PODS,
        podgroups=A_GROUPS + B_GROUPS,
        queues=[b.queue("a", weight=1), b.queue("b", weight=3)],
        bound_counts={"a": 3, "b": 9},
    ),
    scenarios.Scenario(
        id="spec-deserved-is-honoured",
        nodes=NODES,
        pods=A_PODS + B_PODS,
        podgroups=A_GROUPS + B_GROUPS,
        queues=[b.queue("a", deserved={"cpu": "9"}), b.queue("b")],
        bound_counts={"a": 9, "b": 3},
    ),
    scenarios.Scenario(
        id="unrequested-deserved-is-lent-to-others",
        nodes=NODES,
        pods=A_PODS[:2] + B_PODS,
        podgroups=A_GROUPS[:2] + B_GROUPS,
        queues=[b.queue("a", deserved={"cpu": "9"}), b.queue("b")],
        bound_counts={"a": 2, "b": 10},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_proportion(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


def test_water_fill_caps_by_request_and_redistributes() -> None:
    one = np.array([1.0])
    deserved = proportion.water_fill(
        total=np.array([10.0]),
        weights={"small": 1.0, "big": 1.0},
        real_capability={"small": np.array([np.inf]), "big": np.array([np.inf])},
        request={"small": 2 * one, "big": 20 * one},
        guarantee={"small": 0 * one, "big": 0 * one},
        fixed={"small": 0 * one, "big": 0 * one},
        fixed_mask={"small": np.array([False]), "big": np.array([False])},
    )
    assert deserved["small"][0] == pytest.approx(2)
    assert deserved["big"][0] == pytest.approx(8)
