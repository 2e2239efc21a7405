"""What the batched-placement tests share: seeded nodes, plans compared with the fast paths on and
off, and the topological runs of an open session (``test_place_apart``, ``test_together``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from scheduler import configure, cycle
from scheduler.api import building, snapshot
from scheduler.framework import placement, session, statement
from tests.builders import scheduler as b
from tests.support import scenarios

HOST = "kubernetes.io/hostname"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
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


def gang_pods(r: random.Random, app: str, size: int, spec: dict[str, Any], apart: bool) -> list[dict[str, Any]]:
    """``size`` pending pods of gang ``app`` alike (one random request), labelled app=<app>; each
    with a label of its own too when ``apart`` (then they are not a run the batches take)."""
    cpu, memory = r.choice(["500m", "1", "2"]), r.choice(["512Mi", "1Gi", "2Gi"])
    return [
        b.pod(
            f"{app}-p{k}",
            group=app,
            cpu=cpu,
            memory=memory,
            labels={"app": app, **({"k": str(k)} if apart else {})},
            spec=spec,
        )
        for k in range(size)
    ]


Batch = Callable[[placement.Placer, list[snapshot.Task]], list[int] | None]
Allocate = Callable[[snapshot.Task, int], None]


def placed_rows(ssn: session.Session, place: Callable[[Allocate], int]) -> list[int]:
    """The rows ``place(allocate)`` allocates as it goes, handed back after (a check allocates them
    again); it must say how many it placed."""
    stmt = statement.Statement(ssn)
    rows: list[int] = []

    def allocate(task: snapshot.Task, row: int) -> None:
        stmt.allocate(task.key, row)
        rows.append(row)

    assert place(allocate) == len(rows)
    stmt.discard()
    return rows


def check_batch(workload: Workload, seeds: range, batch: Batch, refused: int) -> None:
    """``batched_against_one_by_one`` with over 300 copies batched and over ``refused`` runs left
    to the long way (both ways taken), and each seed's plan the same with the fast paths off."""
    batched, left = batched_against_one_by_one(workload, seeds, batch)
    assert batched > 300 and left > refused
    assert plans_bound(workload, seeds) > 300


def batched_against_one_by_one(workload: Workload, seeds: range, batch: Batch) -> tuple[int, int]:
    """For each topological run of each seed, in one open session: ``batch(placer, run)`` must give
    the rows ``place`` + allocate one at a time give and stop only where no idle node takes the
    next copy, or nothing when the run does not qualify (``batch`` returns None then). Half the
    runs are left placed (later runs see them). (copies batched, runs refused)."""
    batched = refused = 0
    for seed, ssn, placer, run in runs(workload, seeds):
        rows = batch(placer, run)
        if rows is None:
            refused += 1
            continue
        stmt = statement.Statement(ssn)
        stmt.allocate_many(run[: len(rows)], rows)
        after = [placer.place(task, pipeline=False) for task in run[len(rows) : len(rows) + 1]]
        assert after in ([], [None])  # it stopped only where no idle node takes the next copy
        stmt.discard()
        assert rows == one_by_one(placer, stmt, run)
        batched += len(rows)
        if len(run) > len(rows) or seed % 2:
            stmt.discard()
        else:
            stmt.commit()
    return batched, refused


def one_by_one(placer: placement.Placer, stmt: statement.Statement, run: list[snapshot.Task]) -> list[int]:
    """Rows ``place`` picks in turn, each allocated before the next; stops where a batch must
    (at the first copy no idle node takes)."""
    rows = []
    for task in run:
        choice = placer.place(task, pipeline=False)
        if choice is None:
            break
        stmt.allocate(task.key, choice[1])
        rows.append(choice[1])
    return rows


LARGE = 2048  # nodes in ``large_workload``: past ``ranking.DEPTH`` rows that fit, 256 rows to 1/8


def large_workload(seed: int, count: int = LARGE) -> dict[str, Any]:
    """A seeded cluster of ``count`` nodes sized to cross the placement engine's tuned thresholds
    (``tests/scheduler/test_oracle.py`` shows it does): gangs of one request whose copies outrun
    a ``Ranking``'s ``DEPTH`` keys; gangs kept apart by hostname anti-affinity sharing that
    entry while other pods' terms refuse most rows (``take_where`` passes its limit); gangs that
    change more than 1/8 of the rows between two reads of an entry and gangs that change fewer
    (full and incremental refresh); more one-task jobs alike than ``allocate.LONE_RUN``; spread,
    preferred and required pod affinity gangs; running pods, some terminating, on nodes left
    nearly full, and a last gang bigger than what is idle (pipelined on what is releasing)."""
    r = random.Random(seed)
    zones = r.choice([3, 16, 64])
    data: dict[str, Any] = {
        "nodes": nodes(r, count, lambda i: {"zone": f"z{i % zones}"}),
        "pods": [],
        "podgroups": [],
        "queues": queues(r),
    }
    for i, node in enumerate(data["nodes"]):
        name, cores = node["metadata"]["name"], int(node["status"]["allocatable"]["cpu"])
        if r.random() < 0.3:  # nearly full: a pod leaving it makes room for the last gang
            busy = b.pod(f"busy{i}", group=None, cpu=f"{cores * 1000 - 500}m", memory="1Gi", node=name, scheduler="x")
            if r.random() < 0.5:
                busy["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
            data["pods"].append(busy)
        if r.random() < 0.9:  # a pod no "apart" gang may join on its node
            held = {"affinity": {"podAntiAffinity": {REQUIRED: [term("apart", HOST)]}}}
            data["pods"].append(b.pod(f"h{i}", group=None, cpu=None, memory=None, node=name, scheduler="x", spec=held))
    wide = ("500m", "512Mi")
    gangs: list[tuple[str, int, dict[str, Any], tuple[str, str]]] = [
        ("first", r.randint(150, 250), {}, wide),
        ("apart", r.randint(30, 70), {"affinity": {"podAntiAffinity": {REQUIRED: [term("apart", HOST)]}}}, wide),
        ("near", r.randint(5, 30), {"affinity": {"podAntiAffinity": {REQUIRED: [term("near", HOST)]}}}, wide),
        ("big", r.randint(900, 1300), {}, wide),
    ]
    gangs += [(f"small{g}", r.randint(1, 12), {}, (r.choice(["1", "2"]), "1Gi")) for g in range(20)]
    spread = {"maxSkew": r.choice([1, 2]), **term("spread", "zone")}
    preferred = [{"weight": 50, "podAffinityTerm": term("preferred", "zone")}]
    gangs += [
        ("spread", r.randint(30, 80), {"topologySpreadConstraints": [spread]}, wide),
        ("preferred", r.randint(20, 40), {"affinity": {"podAffinity": {PREFERRED: preferred}}}, wide),
        ("together", r.randint(10, 30), {"affinity": {"podAffinity": {REQUIRED: [term("together", "zone")]}}}, wide),
    ]
    gangs += [(f"lone{g}", 1, {}, ("1", "1Gi")) for g in range(r.randint(260, 300))]
    gangs.append(("last", r.randint(1800, 2400), {}, ("2", "512Mi")))
    for minute, (app, size, spec, (cpu, memory)) in enumerate(gangs):
        created = f"2025-01-01T{minute // 60:02d}:{minute % 60:02d}:00Z"
        data["podgroups"].append(b.podgroup(app, min_member=max(1, size // 2), phase="Inqueue", created=created))
        data["pods"] += [
            b.pod(f"{app}-{k}", group=app, cpu=cpu, memory=memory, labels={"app": app}, spec=spec, created=created)
            for k in range(size)
        ]
    return data
