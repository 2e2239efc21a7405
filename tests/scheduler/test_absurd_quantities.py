"""Schema-valid but absurd quantities never stop a cycle: they are capped as apimachinery caps them.

``cpu: "1e400"`` once raised OverflowError in the resource vectors and in proportion, and a
5,000-digit memory ValueError when printed: the scheduler process exited, and since the object
stayed in etcd, every restart died the same way.
"""

from __future__ import annotations

import pytest

from scheduler import configure, cycle
from scheduler.api import building
from tests.builders import scheduler as b
from tests.support import scenarios

# Values the apiserver accepts on nodes and pods too (negative ones it refuses there).
ABSURD = ["1e400", "1e30000000", "9" * 5000, "1e-30000000"]


@pytest.mark.parametrize("value", ABSURD)
def test_a_cycle_with_absurd_quantities_everywhere_still_schedules_the_sane_group(value: str) -> None:
    nodes = [b.node("n1", cpu="8", memory="16Gi"), b.node("n2", cpu=value, memory=value)]
    queues = [b.queue("default"), b.queue("huge", capability={"cpu": value, "memory": value})]
    podgroups = [
        b.podgroup("sane", min_member=2),
        b.podgroup("absurd", min_member=1, queue="huge", min_resources={"cpu": value, "memory": value}),
    ]
    pods = [
        b.pod("sane-0", group="sane"),
        b.pod("sane-1", group="sane"),
        b.pod("absurd-0", group="absurd", cpu=value, memory=value),
    ]
    conf = configure.parse(
        'actions: "enqueue, allocate, backfill, preempt, reclaim"\n'
        "tiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
        "- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n"
    )
    snap = building.build(nodes=nodes, pods=pods, podgroups=podgroups, queues=queues)
    result = cycle.schedule(snap, conf, scenarios.NOW)
    bound = {op.pod for op in result.operations if type(op).__name__ == "Allocate"}
    assert {"ns/sane-0", "ns/sane-1"} <= bound
