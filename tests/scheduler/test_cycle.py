"""``cycle.schedule``'s ``on_commit`` sink: what it is handed, and that it changes nothing.

The I/O shell binds what ``on_commit`` hands over while the cycle goes on, so the sink must see
exactly the plan's Allocates, in the plan's order, one committed statement (so one PodGroup) at
a time, and the plan must be the same with or without it. Checked on the seeded workloads of
``test_batched_placement`` under its four configurations, preempt and reclaim included.
"""

from __future__ import annotations

import pytest

from scheduler import configure, cycle
from scheduler.api import building, plan
from tests.scheduler import scenarios
from tests.scheduler.framework import test_batched_placement

GROUP = "scheduling.k8s.io/group-name"


@pytest.mark.parametrize("chunk", range(4))
def test_on_commit_hands_over_the_plans_allocates_statement_by_statement(chunk: int) -> None:
    allocated = 0
    for seed in range(chunk * 50, (chunk + 1) * 50):
        data = test_batched_placement._workload(seed)
        conf = configure.parse(test_batched_placement.CONFS[seed % len(test_batched_placement.CONFS)])
        batches: list[list[plan.Allocate]] = []
        streamed = cycle.schedule(building.build(**data), conf, scenarios.NOW, batches.append)
        assert streamed == cycle.schedule(building.build(**data), conf, scenarios.NOW)
        allocates = [op for op in streamed.operations if isinstance(op, plan.Allocate)]
        assert [op for batch in batches for op in batch] == allocates
        group_of = {
            f"ns/{p['metadata']['name']}": p["metadata"].get("annotations", {}).get(GROUP) for p in data["pods"]
        }
        for batch in batches:
            assert batch, "an empty hand-over"
            assert len({group_of[op.pod] for op in batch}) == 1, f"one statement spans groups: {batch}"
        allocated += len(allocates)
    assert allocated > 200  # the workloads do bind pods
