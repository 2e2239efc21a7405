"""allocate's run of one-task jobs (``_allocate_lone_tasks``) gives the plan the job-by-job turns give.

Each seeded workload is mostly one-task PodGroups (a few shapes, so runs form and break), with
some larger gangs, jobs whose other members already run, groups that cannot be ready from one
pod (minMember 2 with one pod pending), BestEffort and anti-affinity pods, tight nodes, queue
capabilities and one to three queues. It is scheduled as shipped and with the run path off
(every job through ``allocate_job``); the plans must be equal, operation order included. With
one queue the run path does place pods (checked), so the comparison means something; runs are
also cut short (``LONE_RUN`` 3) to check that a run resumes where the last one stopped.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import configure, cycle
from scheduler.actions import allocate
from scheduler.api import building, plan
from tests.builders import scheduler as b
from tests.scheduler import scenarios

CONFS = [
    "",
    'actions: "enqueue, allocate, backfill, preempt, reclaim"\n',
    'actions: "allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: predicates}, {name: proportion}, {name: binpack}]\n",
]


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    nodes = [
        b.node(f"n{i:02d}", cpu=str(r.choice([2, 4, 8])), memory=r.choice(["4Gi", "8Gi"]), pods=r.choice([4, 110]))
        for i in range(r.randint(1, 12))
    ]
    queues = [
        b.queue(
            f"q{i}", weight=r.randint(1, 3), capability={"cpu": str(r.randint(3, 30))} if r.random() < 0.4 else None
        )
        for i in range(1 if r.random() < 0.6 else r.randint(2, 3))
    ]
    shapes = [("500m", "512Mi"), ("1", "1Gi"), ("2", "1Gi")][: r.randint(1, 3)]
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(2, 60)):
        kind = r.random()
        size = r.randint(2, 5) if kind < 0.1 else 1
        min_member = 2 if 0.1 <= kind < 0.15 else r.randint(1, size)
        running = r.random() < 0.1
        created = f"2025-01-01T00:{g % 60:02d}:00Z"
        groups.append(
            b.podgroup(
                f"g{g}",
                min_member=min_member,
                queue=f"q{r.randrange(len(queues))}",
                priority_class=r.choice([None, None, "hi"]),
                phase="Running" if running else r.choice([None, "Inqueue"]),
                created=created,
            )
        )
        cpu, memory = r.choice(shapes)
        members = size + (1 if running else 0)
        for k in range(members):
            x = r.random()
            spec: dict[str, Any] | None = None
            if x < 0.05:
                term = {"labelSelector": {"matchLabels": {"app": f"g{g}"}}, "topologyKey": "kubernetes.io/hostname"}
                spec = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
            pods.append(
                b.pod(
                    f"g{g}-p{k}",
                    group=f"g{g}",
                    cpu=None if x > 0.95 else cpu,
                    memory=None if x > 0.95 else memory,
                    node=f"n{r.randrange(len(nodes)):02d}" if running and k == 0 else None,
                    labels={"app": f"g{g}"},
                    priority_class=r.choice([None, None, "hi"]),
                    created=created,
                    spec=spec,
                )
            )
    return {
        "nodes": nodes,
        "pods": pods,
        "podgroups": groups,
        "queues": queues,
        "priorityclasses": [b.priority_class("hi", 100)],
    }


def _schedule(data: dict[str, Any], conf: str) -> plan.Plan:
    return cycle.schedule(building.build(**data), configure.parse(conf), scenarios.NOW)


@pytest.mark.parametrize("lone_run", [3, allocate.LONE_RUN])
@pytest.mark.parametrize("chunk", range(4))
def test_runs_of_lone_tasks_equal_job_by_job(chunk: int, lone_run: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocate, "LONE_RUN", lone_run)
    cases = [(_workload(seed), CONFS[seed % len(CONFS)]) for seed in range(chunk * 100, (chunk + 1) * 100)]
    calls: list[int] = []
    real = allocate._allocate_lone_tasks

    def counted(*args: Any) -> int:
        taken = real(*args)
        calls.append(taken)
        return taken

    monkeypatch.setattr(allocate, "_allocate_lone_tasks", counted)
    fast = [_schedule(data, conf) for data, conf in cases]
    assert sum(taken for taken in calls if taken > 1) > 300  # runs were placed together
    assert max(calls) <= lone_run
    monkeypatch.setattr(allocate, "_allocate_lone_tasks", lambda *args: 0)
    for (data, conf), expected in zip(cases, fast, strict=True):
        assert _schedule(data, conf) == expected
