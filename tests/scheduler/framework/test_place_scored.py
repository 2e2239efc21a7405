"""``Placer.place_scored``: a run that only domain scores follow (preferred pod affinity and
anti-affinity on one key wider than a node, a ``ScheduleAnyway`` constraint on the hostname),
placed from a few candidate rows per domain, gets the rows ``place`` + allocate one at a time give.

Seeded workloads (``_workload``) give gangs preferred terms about themselves or another gang on
the zone, now and then a soft hostname spread constraint, over zones of a few nodes (some nodes
without the label, node sizes alike or not, so node scores tie often), tainted and not-ready
nodes, running pods those terms count, other pods holding preferred terms that match a gang, and
queue capabilities; now and then a gang that does not qualify (terms on two keys, a hard
constraint). Each is checked twice: ``place_scored`` against the one-by-one loop in one open
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


def _preferred(r: random.Random, whom: str, key: str = ZONE) -> dict[str, Any]:
    return {"weight": r.choice([1, 10, 50, 100]), "podAffinityTerm": seeded.term(whom, key)}


def _spec(r: random.Random, app: str) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for kind in r.sample(["podAffinity", "podAntiAffinity"], r.randint(1, 2)):
        whom = r.choice([app, app, f"g{r.randrange(7)}"])
        spec.setdefault("affinity", {})[kind] = {PREFERRED: [_preferred(r, whom)]}
    if r.random() < 0.5:
        c = {"maxSkew": r.choice([1, 2]), "whenUnsatisfiable": "ScheduleAnyway", **seeded.term(app, seeded.HOST)}
        spec["topologySpreadConstraints"] = [c]
    x = r.random()
    if x < 0.08:  # a second key: not split
        spec["affinity"]["podAffinity"] = {PREFERRED: [_preferred(r, app, seeded.HOST)]}
    elif x < 0.14:  # a check: not split
        spec["affinity"]["podAntiAffinity"] = {seeded.REQUIRED: [seeded.term(f"g{r.randrange(7)}", seeded.HOST)]}
    return spec


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    count, zones = r.randint(1, 14), r.randint(1, 4)
    sizes = {f"g{g}": r.randint(1, 14) for g in range(r.randint(1, 7))}
    alike = r.random() < 0.5  # every node the same size: node scores tie

    def node(i: int) -> dict[str, Any]:
        labels = {ZONE: f"z{i % zones}"} if r.random() > 0.1 else {}
        cpu = "8" if alike else str(r.choice([2, 4, 8]))
        taints = [{"key": "t", "value": "x", "effect": "NoSchedule"}] if r.random() < 0.08 else None
        return b.node(f"n{i:02d}", cpu=cpu, memory="8Gi", labels=labels, taints=taints, ready=r.random() > 0.04)

    data: dict[str, Any] = {
        "nodes": [node(i) for i in range(count)],
        "podgroups": [b.podgroup(app, min_member=r.randint(1, n), phase="Inqueue") for app, n in sizes.items()],
        "queues": seeded.queues(r),
        "pods": [],
    }
    for app, size in sizes.items():
        data["pods"] += seeded.gang_pods(r, app, size, _spec(r, app), apart=r.random() > 0.95)
        data["pods"] += [  # running pods the gang's terms count
            b.pod(f"{app}-r{k}", group=None, node=f"n{r.randrange(count):02d}", labels={"app": app}, scheduler="x")
            for k in range(r.choice([0, 0, 1, 3]))
        ]
    for i in range(r.randint(0, 3)):  # other pods holding preferred terms that match a gang
        kind = r.choice(["podAffinity", "podAntiAffinity"])
        spec = {"affinity": {kind: {PREFERRED: [_preferred(r, f"g{r.randrange(7)}")]}}}
        data["pods"].append(b.pod(f"o{i}", group=None, node=f"n{r.randrange(count):02d}", scheduler="x", spec=spec))
    return data


def _scored(placer: placement.Placer, run: list[snapshot.Task]) -> list[int] | None:
    """The rows ``place_scored`` takes, handed back (the check allocates them again); None when
    the run does not qualify."""
    rows = seeded.placed_rows(placer.session, lambda allocate: placer.place_scored(run, len(run), allocate))
    apart = len({(t.namespace, *t.labels.items()) for t in run}) > 1
    if apart or placer.plugins.domain_split(run[0]) is None:
        assert rows == []
        return None
    return rows


@pytest.mark.parametrize("seeds", CHUNKS)
def test_place_scored_equals_the_long_way_and_cycle_plans_equal_without_it(seeds: range) -> None:
    seeded.check_batch(_workload, seeds, _scored, refused=10)


def test_a_run_with_a_domain_check_is_not_scored() -> None:
    """A hard constraint is a domain check: ``place_scored`` leaves the run alone."""
    nodes = [b.node(f"n{i}", labels={ZONE: f"z{i % 2}"}) for i in range(4)]
    term = {"weight": 10, "podAffinityTerm": seeded.term("g", ZONE)}
    spec = {
        "affinity": {"podAffinity": {PREFERRED: [term]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", **seeded.term("g", ZONE)}],
    }
    pods = [b.pod(f"p{k}", group="g", labels={"app": "g"}, spec=spec) for k in range(3)]
    data = {"nodes": nodes, "pods": pods, "podgroups": [b.podgroup("g", min_member=3)], "queues": [b.queue()]}
    ((_, _, placer, run),) = seeded.runs(lambda _: data, range(1))
    assert placer.plugins.domain_split(run[0]) is None
    assert placer.place_scored(run, 3, lambda task, row: pytest.fail("placed")) == 0
