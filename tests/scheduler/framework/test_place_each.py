"""``Placer.place_each``: a run of alike topological tasks placed copy by copy with the entry read
once gets the rows ``place`` + allocate one at a time (the entry refreshed each time) give it.

Seeded workloads (``_workload``) give gangs any mix of required and preferred pod affinity and
anti-affinity and hard and soft topology spread, on the zone or the hostname, about themselves
or another gang, over zones of a few nodes (some without the label), node sizes and pod limits,
tainted and not-ready nodes, running pods those terms count, and queue capabilities; each with
the confs of ``tests.builders.scheduler`` (binpack among them: a row's score rises as it fills,
so copies stack). Each is checked twice: ``place_each`` against the one-by-one loop in one open
session, gang by gang; and the whole cycle's plan, fast paths on against off.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.api import snapshot
from scheduler.framework import placement
from tests.builders import scheduler as b
from tests.scheduler.framework import seeded

ZONE = "zone"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
SEEDS = 300
CHUNKS = [range(n * SEEDS // 3, (n + 1) * SEEDS // 3) for n in range(3)]


def _spec(r: random.Random, app: str) -> dict[str, Any]:
    """One to three of: a pod term of each kind, a spread constraint of each kind."""
    spec: dict[str, Any] = {}
    for _ in range(r.randint(1, 3)):
        whom, key = r.choice([app, app, f"g{r.randrange(7)}"]), r.choice([ZONE, seeded.HOST])
        kind = r.choice(["podAffinity", "podAntiAffinity", "spread"])
        if kind == "spread":
            when = r.choice(["DoNotSchedule", "ScheduleAnyway"])
            c = {"maxSkew": r.choice([1, 2]), "whenUnsatisfiable": when, **seeded.term(whom, key)}
            spec.setdefault("topologySpreadConstraints", []).append(c)
        elif r.random() < 0.5:
            spec.setdefault("affinity", {}).setdefault(kind, {})[seeded.REQUIRED] = [seeded.term(whom, key)]
        else:
            term = {"weight": r.choice([1, 50, 100]), "podAffinityTerm": seeded.term(whom, key)}
            spec.setdefault("affinity", {}).setdefault(kind, {})[PREFERRED] = [term]
    return spec


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    count, zones = r.randint(1, 12), r.randint(1, 4)
    sizes = {f"g{g}": r.randint(1, 12) for g in range(r.randint(1, 7))}
    data: dict[str, Any] = {
        "nodes": seeded.nodes(r, count, lambda i: {ZONE: f"z{i % zones}"} if r.random() > 0.05 else {}),
        "podgroups": [b.podgroup(app, min_member=r.randint(1, n), phase="Inqueue") for app, n in sizes.items()],
        "queues": seeded.queues(r),
        "pods": [],
    }
    for app, size in sizes.items():
        data["pods"] += seeded.gang_pods(r, app, size, _spec(r, app), apart=r.random() > 0.95)
        data["pods"] += [  # running pods the gang's terms may count
            b.pod(f"{app}-r{k}", group=None, node=f"n{r.randrange(count):02d}", labels={"app": app}, scheduler="x")
            for k in range(r.choice([0, 0, 1, 2]))
        ]
    return data


def _each(placer: placement.Placer, run: list[snapshot.Task]) -> list[int] | None:
    """The rows ``place_each`` takes, handed back (the check allocates them again)."""
    if len({(t.namespace, *t.labels.items()) for t in run}) > 1:
        assert placer.place_each(run, lambda task, row: pytest.fail("a run labelled apart was placed")) == 0
        return None
    return seeded.placed_rows(placer.session, lambda allocate: placer.place_each(run, allocate))


@pytest.mark.parametrize("seeds", CHUNKS)
def test_place_each_equals_the_long_way_and_cycle_plans_equal_without_it(seeds: range) -> None:
    seeded.check_batch(_workload, seeds, _each, refused=3)
