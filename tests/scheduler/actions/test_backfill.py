"""backfill: BestEffort pods (no requests) are placed even where nothing else fits."""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

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
    # mpi-operator's tensorflow-benchmarks: a launcher asking for nothing, workers asking only for
    # GPUs, minTaskMember per role. The pending launcher counts for its task too, so the workers
    # are committed and the launcher joins them in the same cycle.
    scenarios.Scenario(
        id="besteffort-launcher-counts-toward-its-min-task-member",
        nodes=[b.node("n1", gpu=4)],
        pods=[b.pod("launcher", cpu=None, memory=None, task="launcher")]
        + [b.pod(f"w{i}", cpu=None, memory=None, gpu=1, task="worker") for i in range(2)],
        podgroups=[b.podgroup("pg", min_member=3, min_task_member={"launcher": 1, "worker": 2})],
        queues=[b.queue()],
        binds={"launcher": "n1", "w0": "n1", "w1": "n1"},
        phases={"pg": "Running"},
    ),
    scenarios.Scenario(
        id="besteffort-launcher-not-bound-ahead-of-workers-that-do-not-fit",
        nodes=[b.node("n1")],  # no GPUs
        pods=[b.pod("launcher", cpu=None, memory=None, task="launcher")]
        + [b.pod(f"w{i}", cpu=None, memory=None, gpu=1, task="worker") for i in range(2)],
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=[b.queue()],
        binds={},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_backfill(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
