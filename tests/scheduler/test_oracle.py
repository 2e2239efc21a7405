"""The plans of both ``fast_paths`` settings equal the independent oracle's (``tests.scheduler.oracle``).

The fast/slow differentials (``test_placement``, ``test_allocate``, ``test_place_*``) compare two
paths that share the placement engine's always-on parts: the per-shape entries and their
incremental refresh, the lazy future (``Placer._future``), shared entries. A fault there is
made on both sides alike and goes unseen. The oracle shares none of them: every task is placed
from every node's plain hooks, asked again.

- small sizes: the seeded workloads of those differentials (1-25 nodes), every conf of
  ``builders.scheduler.CONFS``;
- large sizes (marker ``scale``): ``seeded.large_workload``, 2,048 nodes, which crosses the tuned
  thresholds (``test_the_large_workload_crosses_every_threshold`` shows which, and that it
  does); ``VBRIDGE_ORACLE_SEEDS`` seeds (default 4: one per conf, about 20 s in all);
- the point of it: an incremental refresh broken on purpose (its rows not marked for the lazy
  future) leaves every plan of the old differential's seeds equal on both paths, and the
  oracle's differ.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from scheduler import configure, cycle
from scheduler.actions import allocate
from scheduler.api import building
from scheduler.framework import placement, ranking, statement
from tests.builders import scheduler as b
from tests.scheduler import oracle
from tests.scheduler.framework import (
    seeded,
    test_place_apart,
    test_place_counted,
    test_place_each,
    test_place_scored,
    test_together,
)
from tests.support import scenarios

Workload = Callable[[int], dict[str, Any]]
SMALL_SEEDS = range(50)
LARGE_SEEDS = range(int(os.environ.get("VBRIDGE_ORACLE_SEEDS", "4")))
# Each small workload, and how many pods its seeds bind at least (so the comparison means something).
SMALL: dict[str, tuple[Workload, int]] = {
    "mixed": (b.mixed_workload, 800),
    "lone-tasks": (b.lone_task_workload, 400),
    "apart": (test_place_apart._workload, 200),
    "counted": (test_place_counted._workload, 300),
    "each": (test_place_each._workload, 300),
    "scored": (test_place_scored._workload, 300),
    "together": (test_together._workload, 300),
}


def _plans(data: dict[str, Any], conf: str) -> tuple[Any, Any, Any]:
    """(oracle's, fast paths', reference path's) plans of one cycle."""
    return oracle.schedule(data, conf), scenarios.schedule(data, conf), scenarios.schedule(data, conf, fast_paths=False)


@pytest.mark.parametrize("name", SMALL)
def test_small_plans_equal_the_oracle(name: str) -> None:
    workload, least = SMALL[name]
    bound = 0
    for seed in SMALL_SEEDS:
        expected, fast, slow = _plans(workload(seed), b.CONFS[seed % len(b.CONFS)])
        assert fast == expected, f"seed {seed}: the fast paths' plan differs from the oracle's"
        assert slow == expected, f"seed {seed}: the reference path's plan differs from the oracle's"
        bound += len(expected.binds())
    assert bound > least


@pytest.mark.scale
@pytest.mark.parametrize("seed", LARGE_SEEDS)
def test_large_plans_equal_the_oracle(seed: int) -> None:
    expected, fast, slow = _plans(seeded.large_workload(seed), b.CONFS[seed % len(b.CONFS)])
    assert fast == expected, "the fast paths' plan differs from the oracle's"
    assert slow == expected, "the reference path's plan differs from the oracle's"
    assert len(expected.binds()) > 2000 and len(expected.pipelined()) > 100


@pytest.mark.scale
@pytest.mark.interpreted
def test_the_large_workload_crosses_every_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """One large seed on the fast paths takes each side of every tuned threshold: a ``Ranking``
    served from its top keys, and worked out again past its ``DEPTH``; ``take_where`` answering,
    and giving up past its limit where it would have answered without one; entries refreshed row
    by row (fewer than 1/8 of the rows changed) and whole (more); the lazy future brought up to
    date; runs of lone tasks shorter than ``LONE_RUN`` and cut at it."""
    sides = ("top", "refill", "answered", "limit", "rows", "whole", "future", "lone", "lone-run")
    seen: dict[str, int] = dict.fromkeys(sides, 0)
    refreshed: dict[int, object] = {}  # entries refreshed once already (by id, kept alive here)
    take, take_where = ranking.Ranking.take, ranking.Ranking.take_where
    refresh, future, lone = placement.Placer._refresh, placement.Placer._future, allocate._allocate_lone_tasks

    def spy_take(self: ranking.Ranking, count: int) -> list[int]:
        if len(self.top) >= count or self.bound is None:
            seen["top"] += 1
        elif 2 * count > ranking.DEPTH:  # worked out again deeper than DEPTH
            seen["refill"] += 1
        return take(self, count)

    def spy_take_where(self: ranking.Ranking, count: int, ok: Any, limit: int) -> list[int] | None:
        keys = take_where(self, count, ok, limit)
        seen["limit"] += keys is None and take_where(self, count, ok, len(self.top)) is not None
        seen["answered"] += keys is not None
        return keys

    def spy_refresh(self: placement.Placer, task: Any, entry: Any, rows: Any) -> None:
        if id(entry) in refreshed:
            seen["whole" if len(rows) == len(self.rows) else "rows"] += 1
        refreshed[id(entry)] = entry
        refresh(self, task, entry, rows)

    def spy_future(self: placement.Placer, entry: Any) -> None:
        seen["future"] += entry.future_due is not None
        future(self, entry)

    def spy_lone(*args: Any) -> int:
        taken = lone(*args)
        seen["lone-run" if taken == allocate.LONE_RUN else "lone"] += taken > 1
        return taken

    monkeypatch.setattr(ranking.Ranking, "take", spy_take)
    monkeypatch.setattr(ranking.Ranking, "take_where", spy_take_where)
    monkeypatch.setattr(placement.Placer, "_refresh", spy_refresh)
    monkeypatch.setattr(placement.Placer, "_future", spy_future)
    monkeypatch.setattr(allocate, "_allocate_lone_tasks", spy_lone)
    data = seeded.large_workload(0)
    assert len(data["nodes"]) >= 2000
    expected = oracle.schedule(data, b.CONFS[0])
    assert scenarios.schedule(data, b.CONFS[0]) == expected
    assert all(seen.values()), seen


@pytest.mark.interpreted
def test_a_broken_incremental_refresh_is_caught_by_the_oracle_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refresh of a few rows (fewer than 1/8 of them) skips one update: it does not mark the
    rows for the lazy future, so a row pipelined on keeps the future room it had. Both paths
    pipeline one task at a time through ``place``, so they make the same wrong plan: the old
    differential's seeds (``test_placement``) all pass, and the oracle disagrees."""
    refresh = placement.Placer._refresh

    def forgetful(self: placement.Placer, task: Any, entry: Any, rows: Any) -> None:
        due = None if entry.future_due is None else entry.future_due[rows]
        refresh(self, task, entry, rows)
        if len(rows) < len(self.rows):
            entry.future_due[rows] = False if due is None else due

    monkeypatch.setattr(placement.Placer, "_refresh", forgetful)
    caught = 0
    for seed in range(100):
        data, conf = b.mixed_workload(seed), b.CONFS[seed % len(b.CONFS)]
        expected, fast, slow = _plans(data, conf)
        assert fast == slow, f"seed {seed}: the old differential saw it"
        caught += fast != expected
    assert caught >= 3


def test_the_naive_placer_breaks_ties_to_the_lowest_row_and_pipelines_on_what_is_releasing() -> None:
    leaving = b.pod("leaving", group=None, cpu="4", node="n2", scheduler="x")
    leaving["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
    data = {
        "nodes": [b.node(f"n{i}", cpu="4") for i in range(3)],
        "pods": [b.pod("small", cpu="1"), b.pod("large", cpu="4"), leaving],
        "podgroups": [b.podgroup("pg")],
        "queues": [b.queue()],
    }
    ssn, plugins = cycle.open_session(building.build(**data), configure.parse(""), scenarios.NOW)
    placer = oracle.NaivePlacer(ssn, plugins)
    small, large = ssn.task("ns/small"), ssn.task("ns/large")
    assert placer.place(small) == (placement.ALLOCATE, 0)  # n0 and n1 score alike: the lower row
    stmt = statement.Statement(ssn)
    stmt.allocate(large.key, 0)
    stmt.allocate("ns/small", 1)
    assert placer.place(large) == (placement.PIPELINE, 2)  # only n2's leaving pod makes room
    assert placer.place(large, pipeline=False) is None
    assert placer.explain(large) == "0/3 nodes are available: 2 Insufficient cpu."
    assert placement.Placer(ssn, plugins).place(large) == placer.place(large)
