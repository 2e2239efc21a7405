"""Batched gang placement (``Placer.place_many`` + ``Statement.allocate_many``) changes nothing.

Each seeded workload (``builders.scheduler.mixed_workload``) is scheduled twice: on the fast
paths, and with ``fast_paths`` off, which sends every task down the one-by-one path (``place``
then ``allocate``). The two plans must be equal, operations, order and verdicts included.
Workloads mix node sizes, taints, cordons, selectors, anti-affinity, BestEffort pods,
releasing pods, running gangs, queue capabilities and weights, priorities, and the four
configurations of ``builders.scheduler.CONFS``.
"""

from __future__ import annotations

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios


@pytest.mark.parametrize("chunk", range(4))
def test_batched_equals_one_by_one(chunk: int) -> None:
    cases = [(b.mixed_workload(seed), b.CONFS[seed % len(b.CONFS)]) for seed in range(chunk * 100, (chunk + 1) * 100)]
    batched = [scenarios.schedule(data, conf) for data, conf in cases]
    for (data, conf), fast in zip(cases, batched, strict=True):
        assert scenarios.schedule(data, conf, fast_paths=False) == fast
    assert sum(len(p.binds()) for p in batched) > 500  # the workloads do place pods


def test_big_gang_on_few_nodes_extends_the_lookahead() -> None:
    """200 identical pods on 3 uneven nodes: rows take many copies each, beyond the first look-ahead."""
    data = {
        "nodes": [b.node("a", cpu="64", memory="256Gi"), b.node("b", cpu="32", memory="64Gi"), b.node("c", cpu="8")],
        "pods": [b.pod(f"p{i:03d}", cpu="500m", memory="512Mi") for i in range(200)],
        "podgroups": [b.podgroup("pg", min_member=150)],
        "queues": [b.queue()],
    }
    fast = scenarios.schedule(data)
    assert len(fast.binds()) == 190  # all that fit: c runs out of memory
    assert scenarios.schedule(data, fast_paths=False) == fast
