"""Batched gang placement (``Placer.place_many`` + ``Statement.allocate_many``) changes nothing.

Each seeded workload is scheduled twice: as shipped, and with ``place_many`` answering "no
batch", which sends every task down the one-by-one path (``place`` then ``allocate``). The two
plans must be equal, operations, order and verdicts included. Workloads mix node sizes, taints,
cordons, selectors, anti-affinity, BestEffort pods, releasing pods, running gangs, queue
capabilities and weights, priorities, and the four configurations below.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from scheduler import configure, cycle
from scheduler.api import building, plan
from scheduler.framework import placement
from tests.builders import scheduler as b
from tests.scheduler import scenarios

CONFS = [
    "",
    'actions: "enqueue, allocate, backfill, preempt, reclaim"\n',
    'actions: "allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: predicates}, {name: proportion}, {name: binpack}]\n",
    'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: overcommit}, {name: predicates}, {name: proportion},"
    " {name: nodeorder, arguments: {mostrequested.weight: 2, balancedresource.weight: 3}}]\n",
]


def _workload(seed: int) -> dict[str, Any]:
    r = random.Random(seed)
    count = r.randint(1, 25)
    nodes = [
        b.node(
            f"n{i:02d}",
            cpu=str(r.choice([2, 4, 8, 16])),
            memory=r.choice(["4Gi", "8Gi", "32Gi"]),
            pods=r.choice([3, 10, 110]),
            gpu=r.choice([0, 0, 2]),
            labels={"zone": f"z{i % 3}"},
            taints=[{"key": "t", "value": "x", "effect": "NoSchedule"}] if r.random() < 0.1 else None,
            unschedulable=r.random() < 0.05,
            ready=r.random() > 0.05,
        )
        for i in range(count)
    ]
    queues = [
        b.queue(
            f"q{i}", weight=r.randint(1, 4), capability={"cpu": str(r.randint(4, 60))} if r.random() < 0.3 else None
        )
        for i in range(r.randint(1, 3))
    ]
    pods: list[dict[str, Any]] = []
    groups = []
    for g in range(r.randint(1, 12)):
        size, running = r.randint(1, 40 if r.random() < 0.1 else 12), r.random() < 0.3
        min_member, created = r.randint(1, size), f"2025-01-01T00:{g:02d}:00Z"
        groups.append(
            b.podgroup(
                f"g{g}",
                min_member=min_member,
                queue=f"q{r.randrange(len(queues))}" if r.random() > 0.05 else "missing",
                min_resources={"cpu": str(r.randint(1, 20))} if r.random() < 0.3 else None,
                priority_class=r.choice([None, "hi", "lo"]),
                phase=r.choice(["Running"] if running else [None, "Inqueue", "Pending"]),
                created=created,
            )
        )
        shapes = [(r.choice(["500m", "1", "2", "3"]), r.choice(["512Mi", "1Gi", "2Gi"]), r.choice([0, 0, 0, 1]))]
        shapes += shapes if r.random() < 0.5 else [(r.choice(["1", "2"]), "1Gi", 0)]
        for k in range(size):
            cpu, memory, gpu = shapes[k % 2]
            spec: dict[str, Any] = {}
            x = r.random()
            if x < 0.1:
                spec["nodeSelector"] = {"zone": "z1"}
            elif x < 0.15:
                spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
            elif x < 0.2:
                term = {"labelSelector": {"matchLabels": {"app": f"g{g}"}}, "topologyKey": "kubernetes.io/hostname"}
                spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
            pod = b.pod(
                f"g{g}-p{k}",
                group=f"g{g}",
                cpu=None if x > 0.97 else cpu,
                memory=None if x > 0.97 else memory,
                gpu=gpu,
                node=f"n{r.randrange(count):02d}" if running and k < min_member else None,
                labels={"app": f"g{g}"},
                task=r.choice([None, "w"]),
                priority_class=r.choice([None, "hi", "lo"]),
                created=created,
                spec=spec or None,
            )
            if pod["spec"].get("nodeName") and r.random() < 0.1:
                pod["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
            pods.append(pod)
    return {
        "nodes": nodes,
        "pods": pods,
        "podgroups": groups,
        "queues": queues,
        "priorityclasses": [b.priority_class("hi", 100), b.priority_class("lo", 1)],
    }


def _schedule(data: dict[str, Any], conf: str) -> plan.Plan:
    return cycle.schedule(building.build(**data), configure.parse(conf), scenarios.NOW)


@pytest.mark.parametrize("chunk", range(4))
def test_batched_equals_one_by_one(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [(_workload(seed), CONFS[seed % len(CONFS)]) for seed in range(chunk * 100, (chunk + 1) * 100)]
    batched = [_schedule(data, conf) for data, conf in cases]
    monkeypatch.setattr(placement.Placer, "place_many", lambda self, task, count: [])
    for (data, conf), fast in zip(cases, batched, strict=True):
        assert _schedule(data, conf) == fast
    assert sum(len(p.binds()) for p in batched) > 500  # the workloads do place pods


def test_big_gang_on_few_nodes_extends_the_lookahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 identical pods on 3 uneven nodes: rows take many copies each, beyond the first look-ahead."""
    data = {
        "nodes": [b.node("a", cpu="64", memory="256Gi"), b.node("b", cpu="32", memory="64Gi"), b.node("c", cpu="8")],
        "pods": [b.pod(f"p{i:03d}", cpu="500m", memory="512Mi") for i in range(200)],
        "podgroups": [b.podgroup("pg", min_member=150)],
        "queues": [b.queue()],
    }
    fast = _schedule(data, "")
    assert len(fast.binds()) == 190  # all that fit: c runs out of memory
    monkeypatch.setattr(placement.Placer, "place_many", lambda self, task, count: [])
    assert _schedule(data, "") == fast
