"""Conditions of waiting gangs count pods as users read them: "0 of 5 pods exist", never "5/0 tasks"."""

from __future__ import annotations

import datetime

import pytest

from scheduler import configure, cycle
from scheduler.api import building
from scheduler.framework import verdicts
from tests.builders import scheduler as b

NOW = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("unready", "total", "min_member", "head"),
    [
        (5, 0, 5, "0 of 5 pods exist"),
        (3, 1, 3, "1 of 3 pods exist"),
        (3, 3, 3, "3/3 tasks in gang unschedulable"),
        (1, 4, 2, "1/4 tasks in gang unschedulable"),  # Volcano's words when the pods are there
    ],
)
def test_gang_head(unready: int, total: int, min_member: int, head: str) -> None:
    assert verdicts.gang(unready, total, min_member) == head


def test_a_pending_group_without_its_pods_says_how_many_exist() -> None:
    objects = {
        "nodes": [b.node("n0", cpu="16", memory="64Gi")],
        "pods": [b.pod("p0", namespace="seed", group="some")],
        "podgroups": [
            b.podgroup("none", namespace="seed", min_member=5, min_resources={"cpu": "70"}),
            b.podgroup("some", namespace="seed", min_member=3, min_resources={"cpu": "70"}),
        ],
        "queues": [b.queue()],
        "priorityclasses": [],
    }
    plan = cycle.schedule(building.build(**objects, scheduler_name="volcano"), configure.default(), NOW)
    messages = {g.key: [c.message for c in g.conditions] for g in plan.podgroups}
    refusal = "PodGroup is pending: minResources (cpu 70) do not fit what the cluster has not promised yet (overcommit)"
    assert messages == {"seed/none": [f"0 of 5 pods exist: {refusal}"], "seed/some": [f"1 of 3 pods exist: {refusal}"]}
