"""``Placer.place_apart``: a gang kept one pod per node by its own hostname anti-affinity, placed in
one step, gets the rows ``place`` + allocate one at a time would give it.

Seeded workloads (``_workload``) mix node sizes and pod limits, not-ready and tainted nodes,
running pods that hold their gang's term (and terms naming other gangs), gangs bigger than the
cluster, gangs with a second term or labels that differ pod by pod (not batched), gangs with
other constraints next to them, and queue capabilities. Each is checked twice: ``place_apart``
against the one-by-one loop in one open session, gang by gang; and the whole cycle's plan, fast
paths on against off.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler.api import snapshot
from scheduler.framework import apart, placement
from tests.builders import scheduler as b
from tests.scheduler.framework import seeded

SEEDS = 300
CHUNKS = [range(n * SEEDS // 3, (n + 1) * SEEDS // 3) for n in range(3)]


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    count = r.randint(1, 16)
    nodes = seeded.nodes(r, count, lambda i: {"zone": f"z{i % 3}"})
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(1, 8)):
        app, size = f"g{g}", r.randint(1, 20)
        running = r.random() < 0.25
        min_member = r.randint(1, size)
        groups.append(b.podgroup(app, min_member=min_member, phase="Running" if running else "Inqueue"))
        x = r.random()
        terms = [seeded.term(app, seeded.HOST)]
        if x < 0.1:
            terms.append(seeded.term(f"g{r.randrange(8)}", seeded.HOST))  # a second term, about another gang
        elif x < 0.15:
            terms.append(seeded.term(app, "zone"))
        spec: dict[str, Any] = {"affinity": {"podAntiAffinity": {seeded.REQUIRED: terms}}}
        if 0.15 <= x < 0.25:
            spec = {"topologySpreadConstraints": [{"maxSkew": 1, **seeded.term(app, "zone")}]}
        elif 0.25 <= x < 0.3:
            spec = {}
        cpu, memory = r.choice(["500m", "1", "2"]), r.choice(["512Mi", "1Gi", "2Gi"])
        for k in range(size):
            labels = {"app": app, **({"k": str(k)} if x > 0.95 else {})}
            on = f"n{r.randrange(count):02d}" if running and k < min_member else None
            pods.append(b.pod(f"{app}-p{k}", group=app, cpu=cpu, memory=memory, node=on, labels=labels, spec=spec))
    for i in range(r.randint(0, 4)):  # other pods, some holding a term that matches a gang
        held = [seeded.term(f"g{r.randrange(8)}", seeded.HOST)]
        spec = {"affinity": {"podAntiAffinity": {seeded.REQUIRED: held}}} if r.random() < 0.5 else {}
        pods.append(b.pod(f"o{i}", group=None, node=f"n{r.randrange(count):02d}", scheduler="x", spec=spec))
    return {"nodes": nodes, "pods": pods, "podgroups": groups, "queues": seeded.queues(r)}


def _apart(placer: placement.Placer, run: list[snapshot.Task]) -> list[int] | None:
    rows = placer.place_apart(run, len(run))
    if not apart.eligible(placer.session.topology, run):
        assert rows == []
        return None
    assert len(set(rows)) == len(rows)
    return rows


@pytest.mark.parametrize("seeds", CHUNKS)
def test_place_apart_equals_placing_one_at_a_time(seeds: range) -> None:
    batched, refused = seeded.batched_against_one_by_one(_workload, seeds, _apart)
    assert batched > 300 and refused > 5  # both ways taken


@pytest.mark.parametrize("seeds", CHUNKS)
def test_cycle_plans_equal_with_and_without_the_batch(seeds: range) -> None:
    assert seeded.plans_bound(_workload, seeds) > 300


def test_best_rows_breaks_ties_to_the_lower_row() -> None:
    scores = np.array([5.0, 7.0, 7.0, -np.inf, 7.0, 1.0, 7.0])
    ok = np.array([True, True, False, True, True, True, True])
    assert apart.best_rows(scores, ok, 2) == [1, 4]
    assert apart.best_rows(scores, ok, 4) == [1, 4, 6, 0]
    assert apart.best_rows(scores, None, 9) == [1, 2, 4, 6, 0, 5]
