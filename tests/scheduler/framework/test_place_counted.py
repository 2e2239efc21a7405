"""``Placer.place_counted``: a gang whose one domain check is a ``DoNotSchedule`` spread constraint
on its own pods, placed in one step, gets the rows ``place`` + allocate one at a time would give it.

Seeded workloads (``_workload``) mix zones of a few nodes (some nodes without the label, one
zone per node now and then), node sizes and pod limits, tainted and not-ready nodes, maxSkew 1
to 3, minDomains, nodeAffinityPolicy and nodeTaintsPolicy, node selectors, running pods the
constraint counts (terminating ones too), other pods holding anti-affinity that matches a gang,
gangs with a second constraint, a soft one, pod terms, or labels that differ pod by pod (not
batched), gangs bigger than the cluster, and queue capabilities. Each is checked twice:
``place_counted`` against the one-by-one loop in one open session, gang by gang; and the whole
cycle's plan, fast paths on against off.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler.api import snapshot
from scheduler.framework import counted, placement
from tests.builders import scheduler as b
from tests.scheduler.framework import seeded

ZONE = "zone"
SEEDS = 300
CHUNKS = [range(n * SEEDS // 3, (n + 1) * SEEDS // 3) for n in range(3)]


def _constraint(r: random.Random, app: str, key: str, when: str = "DoNotSchedule") -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": r.choice([1, 1, 2, 3]), "whenUnsatisfiable": when, **seeded.term(app, key)}
    if r.random() < 0.2:
        c["minDomains"] = r.randint(1, 5)
    if r.random() < 0.2:
        c["nodeAffinityPolicy"] = "Ignore"
    if r.random() < 0.3:
        c["nodeTaintsPolicy"] = "Honor"
    return c


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    count, zones = r.randint(1, 14), r.choice([1, 2, 3, 4, 14])

    def node_labels(i: int) -> dict[str, str]:
        return {ZONE: f"z{i % zones}", "disk": "ssd" if i % 3 else "hdd"} if r.random() > 0.08 else {}

    nodes = seeded.nodes(r, count, node_labels)
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(1, 7)):
        app, size = f"g{g}", r.randint(1, 16)
        groups.append(b.podgroup(app, min_member=r.randint(1, size), phase="Inqueue"))
        spec: dict[str, Any] = {"topologySpreadConstraints": [_constraint(r, app, ZONE)]}
        x = r.random()
        if x < 0.08:
            spec["topologySpreadConstraints"].append(_constraint(r, app, seeded.HOST))
        elif x < 0.14:
            spec["topologySpreadConstraints"].append(_constraint(r, app, seeded.HOST, "ScheduleAnyway"))
        elif x < 0.2:
            spec["affinity"] = {"podAntiAffinity": {seeded.REQUIRED: [seeded.term(f"g{r.randrange(7)}", seeded.HOST)]}}
        elif x < 0.25:
            spec["topologySpreadConstraints"] = [_constraint(r, f"g{r.randrange(7)}", ZONE)]  # about another gang
        if r.random() < 0.15:
            spec["nodeSelector"] = {"disk": "ssd"}
        pods += seeded.gang_pods(r, app, size, spec, apart=x > 0.95)
        for k in range(r.choice([0, 0, 1, 3])):  # running pods the gang's constraint counts
            on = f"n{r.randrange(count):02d}"
            deleting = {"deletionTimestamp": "2025-01-01T00:00:00Z"} if r.random() < 0.2 else {}
            pod = b.pod(f"{app}-r{k}", group=None, node=on, labels={"app": app}, scheduler="x")
            pod["metadata"].update(deleting)
            pods.append(pod)
    for i in range(r.randint(0, 3)):  # other pods holding anti-affinity that matches a gang
        held = {seeded.REQUIRED: [seeded.term(f"g{r.randrange(7)}", r.choice([ZONE, seeded.HOST]))]}
        spec = {"affinity": {"podAntiAffinity": held}}
        pods.append(b.pod(f"o{i}", group=None, node=f"n{r.randrange(count):02d}", scheduler="x", spec=spec))
    return {"nodes": nodes, "pods": pods, "podgroups": groups, "queues": seeded.queues(r)}


def _counted(placer: placement.Placer, run: list[snapshot.Task]) -> list[int] | None:
    rows = placer.place_counted(run, len(run))
    if placer.plugins.domain_rule(run[0]) is None or len({(t.namespace, *t.labels.items()) for t in run}) > 1:
        assert rows == []
        return None
    return rows


@pytest.mark.parametrize("seeds", CHUNKS)
def test_batch_equals_one_at_a_time_and_cycle_plans_equal_without_it(seeds: range) -> None:
    seeded.check_batch(_workload, seeds, _counted, refused=20)


def test_rule_is_refused_past_the_domain_bound() -> None:
    nodes = [b.node(f"n{i:02d}", labels={ZONE: f"z{i}"}) for i in range(counted.MAX_DOMAINS + 1)]
    spec = {"topologySpreadConstraints": [{"maxSkew": 1, **seeded.term("g", ZONE)}]}
    pods = [b.pod(f"p{k}", group="g", labels={"app": "g"}, spec=spec) for k in range(3)]
    data = {"nodes": nodes, "pods": pods, "podgroups": [b.podgroup("g", min_member=3)], "queues": [b.queue()]}
    ((_, _, placer, run),) = seeded.runs(lambda _: data, range(1))
    assert placer.plugins.domain_rule(run[0]) is None
    assert placer.place_counted(run, 3) == []
