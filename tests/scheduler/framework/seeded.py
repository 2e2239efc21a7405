"""What the batched-placement tests share: seeded nodes, plans compared with the fast paths on and
off, and the topological runs of an open session (``test_place_apart``, ``test_together``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from scheduler import configure, cycle
from scheduler.api import building, snapshot
from scheduler.framework import placement, session
from tests.builders import scheduler as b
from tests.support import scenarios

HOST = "kubernetes.io/hostname"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
Workload = Callable[[int], dict[str, Any]]


def term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def nodes(r: random.Random, count: int, labels: Callable[[int], Mapping[str, str]]) -> list[dict[str, Any]]:
    """``count`` nodes of random sizes and pod limits, a few tainted or not ready."""
    return [
        b.node(
            f"n{i:02d}",
            cpu=str(r.choice([2, 4, 8])),
            memory=r.choice(["4Gi", "8Gi"]),
            pods=r.choice([2, 5, 110]),
            labels=labels(i),
            taints=[{"key": "t", "value": "x", "effect": "NoSchedule"}] if r.random() < 0.1 else None,
            ready=r.random() > 0.05,
        )
        for i in range(count)
    ]


def queues(r: random.Random) -> list[dict[str, Any]]:
    return [b.queue(capability={"cpu": str(r.randint(2, 30))} if r.random() < 0.4 else None)]


def plans_bound(workload: Workload, seeds: range) -> int:
    """Asserts each seed's plan is the same with the fast paths off; how many pods they bound."""
    bound = 0
    for seed in seeds:
        data, conf = workload(seed), b.CONFS[seed % len(b.CONFS)]
        fast = scenarios.schedule(data, conf)
        assert scenarios.schedule(data, conf, fast_paths=False) == fast
        bound += len(fast.binds())
    return bound


def runs(
    workload: Workload, seeds: range
) -> Iterator[tuple[int, session.Session, placement.Placer, list[snapshot.Task]]]:
    """(seed, session, placer, pending tasks) per job with topological tasks, job by job, in one
    open session per seed (what the caller leaves placed, later jobs see)."""
    for seed in seeds:
        conf = configure.parse(b.CONFS[seed % len(b.CONFS)])
        ssn, plugins = cycle.open_session(building.build(**workload(seed)), conf, scenarios.NOW)
        placer = placement.Placer(ssn, plugins)
        for key in sorted(ssn.snapshot.jobs):
            run = ssn.pending_of(key)
            if run and plugins.topological(run[0]):
                yield seed, ssn, placer, run
