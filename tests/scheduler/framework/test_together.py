"""``Placer.together`` / ``place_within``: a run its own required pod affinity holds in one domain
takes, copy by copy, the rows the full domain checks and scores would give it.

Seeded workloads (``_workload``) mix zones of a few nodes (some nodes without the label), node
sizes and pod limits, tainted and not-ready nodes, running pods the gangs' affinity matches (in
no zone, one, or several), other pods holding anti-affinity or affinity terms that match a gang,
gangs with a second term on another key, with anti-affinity too, or with labels that differ pod
by pod (not eligible), gangs bigger than their zone, and queue capabilities. Each cycle's plan
with the fast paths on must equal the reference one; and in an open session, each copy
``place_within`` picks must be the one ``place`` picks.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.framework import placement, statement
from tests.builders import scheduler as b
from tests.scheduler.framework import seeded

ZONE = "zone"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
SEEDS = 300
CHUNKS = [range(n * SEEDS // 3, (n + 1) * SEEDS // 3) for n in range(3)]


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    count, zones = r.randint(1, 14), r.randint(1, 4)
    nodes = seeded.nodes(r, count, lambda i: {ZONE: f"z{i % zones}"} if r.random() > 0.05 else {})
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(1, 7)):
        app, size = f"g{g}", r.randint(1, 16)
        groups.append(b.podgroup(app, min_member=r.randint(1, size), phase="Inqueue"))
        terms = [seeded.term(app, ZONE)]
        x = r.random()
        if x < 0.08:
            terms.append(seeded.term(app, seeded.HOST))
        spec: dict[str, Any] = {"affinity": {"podAffinity": {seeded.REQUIRED: terms}}}
        if 0.08 <= x < 0.15:
            spec["affinity"]["podAntiAffinity"] = {seeded.REQUIRED: [seeded.term(f"g{r.randrange(7)}", seeded.HOST)]}
        elif 0.15 <= x < 0.2:
            spec = {}
        pods += seeded.gang_pods(r, app, size, spec, apart=x > 0.95)
        for k in range(r.choice([0, 0, 1, 2])):  # running pods the gang's affinity matches
            on = f"n{r.randrange(count):02d}"
            pods.append(b.pod(f"{app}-r{k}", group=None, node=on, labels={"app": app}, scheduler="x"))
    for i in range(r.randint(0, 3)):  # other pods holding a term that matches a gang
        kind = r.choice(["podAntiAffinity", "podAffinity"])
        held: dict[str, Any] = {seeded.REQUIRED: [seeded.term(f"g{r.randrange(7)}", r.choice([ZONE, seeded.HOST]))]}
        if r.random() < 0.3:
            held = {PREFERRED: [{"weight": 10, "podAffinityTerm": seeded.term(f"g{r.randrange(7)}", ZONE)}]}
        spec = {"affinity": {kind: held}}
        pods.append(b.pod(f"o{i}", group=None, node=f"n{r.randrange(count):02d}", scheduler="x", spec=spec))
    return {"nodes": nodes, "pods": pods, "podgroups": groups, "queues": seeded.queues(r)}


@pytest.mark.parametrize("seeds", CHUNKS)
def test_cycle_plans_equal_with_and_without_the_shortcut(seeds: range) -> None:
    assert seeded.plans_bound(_workload, seeds) > 300


@pytest.mark.parametrize("seeds", CHUNKS)
def test_place_within_picks_what_place_picks(seeds: range) -> None:
    within = 0
    for seed, ssn, placer, run in seeded.runs(_workload, seeds):
        stmt = statement.Statement(ssn)
        held = placer.together(run)
        for task in run:
            choice = placer.place(task, pipeline=False)
            if held is not None:
                inside = placer.place_within(task, held)
                assert choice == (None if inside is None else (placement.ALLOCATE, inside))
                within += inside is not None
            if choice is None:
                break
            stmt.allocate(task.key, choice[1])
            if held is None:
                held = placer.together(run)
        if seed % 2:
            stmt.discard()
        else:
            stmt.commit()
    assert within > 150
