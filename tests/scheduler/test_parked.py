"""Parked gangs (``SchedulerConfig.parked``, ``Session.parked``): skipped at no cost per pod,
still counted, and back once ``io.parking`` lets them go.

The I/O shell parks a gang whose verdict said it cannot be scheduled; the core then leaves it
out of allocate and gives it no verdict (its last one stands) while its phase still counts in
its queue's. Parking a gang that failed must change no other decision: checked on the seeded
mixed workloads under every conf, with the PodGroups' phases as the first cycle wrote them.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from typing import Any

import pytest

from scheduler import configure, cycle
from scheduler.api import building, plan
from scheduler.io import parking
from tests.builders import scheduler as b
from tests.support import scenarios

BIG = "ns/big"


def backlog(big: int = 2_000, nodes: int = 4) -> dict[str, Any]:
    """``big`` pods of one gang that cannot fit (minMember all of them), two of a small one."""
    pods = [b.pod(f"big-{i}", group="big", cpu="1", memory="1Gi") for i in range(big)]
    pods += [b.pod(f"small-{i}", group="small", cpu="1", memory="1Gi") for i in range(2)]
    return {
        "nodes": [b.node(f"n{i}", cpu="110", memory="440Gi", pods=110) for i in range(nodes)],
        "pods": pods,
        "podgroups": [
            b.podgroup("big", min_member=big, phase="Inqueue"),
            b.podgroup("small", min_member=2, phase="Inqueue", created="2025-01-01T00:00:01Z"),
        ],
        "queues": [b.queue("default")],
        "priorityclasses": [],
    }


def parked(conf_text: str = "", jobs: frozenset[str] = frozenset({BIG})) -> Any:
    return dataclasses.replace(configure.parse(conf_text), parked=jobs)


def test_a_parked_gang_gets_no_attempt_and_no_verdict_but_counts_in_its_queue() -> None:
    snap = building.build(**backlog())
    free = cycle.schedule(snap, configure.parse(""), scenarios.NOW)
    assert any(c.type == "Unschedulable" for c in free.podgroup(BIG).conditions)
    assert free.stuck == {BIG}  # tried, failed, holds nothing: the shell may park it
    assert sum(v.pod.startswith("ns/big-") for v in free.pods) == 2_000
    left = cycle.schedule(snap, parked(), scenarios.NOW)
    assert [g.key for g in left.podgroups] == ["ns/small"]
    assert not any(v.pod.startswith("ns/big-") for v in left.pods)
    assert left.binds() == free.binds() and len(left.binds()) == 2  # the small gang binds as before
    assert left.queues == free.queues  # the big gang still counts: inqueue and running as before
    assert left.queues[0].inqueue == 1


def test_parked_costs_next_to_nothing_per_pod() -> None:
    snap = building.build(**backlog(big=10_000))
    conf, skip = configure.parse(""), parked()

    def best(c: Any) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            cycle.schedule(snap, c, scenarios.NOW)
            times.append(time.perf_counter() - start)
        return min(times)

    # Tried, the gang's 10,000 pods are placed as far as they go and each gets a verdict;
    # parked, none is looked at. A ratio, so a slow machine slows both.
    assert best(skip) * 5 < best(conf)


def test_a_gang_admitted_in_this_cycle_is_tried_although_parked() -> None:
    data = backlog()
    data["podgroups"][0]["status"] = {}  # Pending in the snapshot: enqueue admits it now
    plan_ = cycle.schedule(building.build(**data), parked(), scenarios.NOW)
    assert plan_.podgroup(BIG).phase == "Inqueue"
    assert any(c.type == "Unschedulable" for c in plan_.podgroup(BIG).conditions)


def _as_written(data: dict[str, Any], verdicts: plan.Plan) -> dict[str, Any]:
    """The workload with each PodGroup's phase as ``verdicts`` wrote it (the next cycle's view)."""
    out = copy.deepcopy(data)
    phases = {g.key: g.phase for g in verdicts.podgroups}
    for group in out["podgroups"]:
        meta = group["metadata"]
        phase = phases.get(f"{meta.get('namespace', 'ns')}/{meta['name']}")
        if phase is not None:
            group["status"] = {**(group.get("status") or {}), "phase": phase}
    return out


@pytest.mark.parametrize("chunk", range(4))
def test_parking_gangs_that_failed_changes_no_other_decision(chunk: int) -> None:
    checked = 0
    for seed in range(chunk * 25, (chunk + 1) * 25):
        first = b.mixed_workload(seed)
        text = b.CONFS[seed % len(b.CONFS)]
        conf = configure.parse(text)
        data = _as_written(first, cycle.schedule(building.build(**first), conf, scenarios.NOW))
        free = cycle.schedule(building.build(**data), conf, scenarios.NOW)
        stuck = free.stuck
        if not stuck:
            continue
        left = cycle.schedule(building.build(**data), dataclasses.replace(conf, parked=stuck), scenarios.NOW)
        assert left.operations == free.operations, seed
        assert left.queues == free.queues, seed
        assert left.podgroups == tuple(g for g in free.podgroups if g.key not in stuck), seed
        members = {f"ns/{p['metadata']['name']}" for p in data["pods"]}
        kept = tuple(v for v in free.pods if v.pod not in members or _group(data, v.pod) not in stuck)
        assert left.pods == kept, seed
        checked += 1
    assert checked >= 5  # the workloads do have gangs that fail


def _group(data: dict[str, Any], pod: str) -> str:
    name = pod.partition("/")[2]
    found = next(p for p in data["pods"] if p["metadata"]["name"] == name)
    return f"ns/{found['metadata']['annotations'].get(building.GROUP_ANNOTATION)}"


def test_a_parked_gang_comes_back_after_a_relevant_change_or_its_backoff() -> None:
    data = backlog(big=300)
    conf = configure.parse("")
    park = parking.Parking(first=1.0, most=10.0)
    data["nodes"] = data["nodes"][:2]  # 220 pod slots: 300 do not fit
    snap = building.build(**data)
    tried = cycle.schedule(snap, conf, scenarios.NOW)
    reason = next(c.reason for c in tried.podgroup(BIG).conditions if c.type == "Unschedulable")
    assert BIG in tried.stuck
    park.park({BIG: reason}, now=0.0, generation=7)
    # Nothing changed: the next cycles leave it out.
    assert park.current(0.5, 7, set()) == {BIG}
    skipped = cycle.schedule(snap, dataclasses.replace(conf, parked=park.current(0.5, 7, set())), scenarios.NOW)
    assert BIG not in {g.key for g in skipped.podgroups}
    # Nodes join (the cache's generation moves): once its backoff has passed, it is tried and fits.
    data["nodes"] = backlog()["nodes"]
    let_go = park.current(1.0, 8, set())
    assert let_go == frozenset()
    placed = cycle.schedule(building.build(**data), dataclasses.replace(conf, parked=let_go), scenarios.NOW)
    assert sum(p.startswith("ns/big-") for p in placed.binds()) == 300
    # Parked again with nothing changing: its backoff alone (at most ``most``) lets it go.
    park.park({BIG: reason}, now=20.0, generation=8)
    assert park.current(29.0, 8, set()) == {BIG}
    assert park.current(30.0, 8, set()) == frozenset()
