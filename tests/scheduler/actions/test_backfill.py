"""backfill: BestEffort pods (no requests) are placed even where nothing else fits."""

from __future__ import annotations

import pytest

from tests.scheduler import builders as b
from tests.scheduler import scenarios

SCENARIOS = [
    scenarios.Scenario(
        id="besteffort-backfilled-on-full-node",
        nodes=[b.node("n1", cpu="1")],
        pods=[b.pod("hog", group="hog", cpu="1", node="n1"), b.pod("be", group="be", cpu=None, memory=None)],
        podgroups=[b.podgroup("hog", phase="Running"), b.podgroup("be")],
        queues=[b.queue()],
        binds={"be": "n1"},
        phases={"be": "Running"},
    ),
    scenarios.Scenario(
        id="besteffort-member-counts-toward-gang",
        nodes=[b.node("n1", cpu="2")],
        pods=[b.pod("w0", cpu="2"), b.pod("side", cpu=None, memory=None)],
        podgroups=[b.podgroup("pg", min_member=2)],
        queues=[b.queue()],
        binds={"w0": "n1", "side": "n1"},
    ),
    scenarios.Scenario(
        id="besteffort-still-needs-a-feasible-node",
        nodes=[b.node("n1", pods=1)],
        pods=[b.pod("hog", group="hog", cpu="1", node="n1"), b.pod("be", group="be", cpu=None, memory=None)],
        podgroups=[b.podgroup("hog", phase="Running"), b.podgroup("be")],
        queues=[b.queue()],
        binds={},
        pod_events={"be": ("FailedScheduling", "1 Too many pods")},
    ),
    scenarios.Scenario(
        id="besteffort-gang-binds-whole-in-one-cycle",
        nodes=[b.node("n1", pods=2), b.node("n2", pods=2)],
        pods=[b.pod(f"m{i}", cpu=None, memory=None) for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=[b.queue()],
        binds={"m0": "n1", "m1": "n1", "m2": "n2"},
    ),
    scenarios.Scenario(
        id="besteffort-gang-binds-nothing-when-one-member-has-no-node",
        nodes=[b.node("n1", pods=2)],
        pods=[b.pod(f"m{i}", cpu=None, memory=None) for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=[b.queue()],
        binds={},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_backfill(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
