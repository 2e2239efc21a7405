"""``cycle.schedule``'s ``on_commit`` sink: what it is handed, and that it changes nothing.

The I/O shell binds what ``on_commit`` hands over while the cycle goes on, so the sink must see
exactly the plan's Allocates, in the plan's order, one committed statement (so one PodGroup) at
a time, and the plan must be the same with or without it. Checked on the seeded mixed
workloads (``builders.scheduler.mixed_workload``) under the four ``CONFS``, preempt and reclaim
included, on the fast paths and on the reference path.
"""

from __future__ import annotations

import pytest

from scheduler import configure, cycle
from scheduler.api import building, plan
from tests.builders import scheduler as b
from tests.support import scenarios

GROUP = "scheduling.k8s.io/group-name"


@pytest.mark.parametrize("fast_paths", [True, False])
@pytest.mark.parametrize("chunk", range(4))
def test_on_commit_hands_over_the_plans_allocates_statement_by_statement(chunk: int, fast_paths: bool) -> None:
    allocated = 0
    for seed in range(chunk * 50, (chunk + 1) * 50):
        data = b.mixed_workload(seed)
        conf = configure.parse(b.CONFS[seed % len(b.CONFS)], fast_paths=fast_paths)
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
