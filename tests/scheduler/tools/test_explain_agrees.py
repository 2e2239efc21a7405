"""explain never contradicts the scheduler: on EVERY scenario of tests/scheduler (collected from
the modules, not listed by hand) and every PodGroup in it, what explain says the cycle does
(admitted or kept Pending, placed or not, "can never run here", completed, waiting for its pods
and who makes them, which pods are evicted to make room for it) is what ``cycle.schedule`` did,
and its condition is the scheduler's.
"""

from __future__ import annotations

import importlib
import pathlib

import pytest

from scheduler.api import plan
from scheduler.framework import verdicts
from scheduler.tools import explain
from tests.support import scenarios

ROOT = pathlib.Path(__file__).resolve().parents[1]  # tests/scheduler
THIS = pathlib.Path(__file__).name


def _modules() -> list[object]:
    return [
        importlib.import_module(".".join(path.relative_to(ROOT.parents[1]).with_suffix("").parts))
        for path in sorted(ROOT.rglob("test_*.py"))
    ]


def _scenarios_in(value: object) -> list[scenarios.Scenario]:
    if isinstance(value, scenarios.Scenario):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list | tuple):
        return [item for inner in value for item in _scenarios_in(inner)]
    return []


def _collect() -> list[scenarios.Scenario]:
    """Every Scenario a module of tests/scheduler holds (in lists, tuples, dicts, or alone)."""
    found: dict[str, scenarios.Scenario] = {}
    for module in _modules():
        name = module.__name__.rsplit(".", 1)[-1]  # type: ignore[attr-defined]
        for value in vars(module).values():
            for item in _scenarios_in(value):
                found[f"{name}:{item.id}"] = item
    return [found[k] for k in sorted(found)]


ALL = _collect()


def test_every_scenario_was_collected() -> None:
    """Every Scenario any test of tests/scheduler is parametrized with (however its module builds
    them: written out or in a comprehension) is one of those checked here, and the ids are unique
    per module, so none is hidden behind another."""
    run: list[scenarios.Scenario] = []
    for module in _modules():
        for value in vars(module).values():
            for mark in getattr(value, "pytestmark", []) if callable(value) else []:
                if mark.name == "parametrize":
                    run += _scenarios_in(list(mark.args[1]))
    collected = {id(s) for s in ALL}
    assert run, "no parametrized scenario found"
    missing = [s.id for s in run if id(s) not in collected]
    assert not missing, missing
    written = sum(p.read_text().count("scenarios.Scenario(") for p in ROOT.rglob("test_*.py") if p.name != THIS)
    assert len(ALL) >= written  # each written Scenario( is at least one scenario


def _placed(result: plan.Plan, snap_jobs: dict[str, str], key: str) -> int:
    return sum(1 for pod in (*result.binds(), *result.pipelined()) if snap_jobs.get(pod) == key)


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.id)
def test_explain_agrees_with_the_cycle(scenario: scenarios.Scenario) -> None:
    result = scenario.run()
    conf, snap = scenario.config(), scenario.snapshot()
    owners = {key: task.job for key, task in snap.tasks.items()}
    keys = sorted(snap.jobs)
    evicted = {op.pod: op for op in result.operations if isinstance(op, plan.Evict)}
    listed: list[str] = []
    for exp in explain.explain_all(snap, conf, keys, scenario.now):
        for victim in exp.evictions:  # each eviction the plan makes, under the group it makes room for
            op = evicted[victim.pod]
            assert (victim.node, victim.reason, victim.podgroup) == (op.node, op.reason, owners[victim.pod])
            assert victim.podgroup != exp.podgroup and victim.why in op.message
            listed.append(victim.pod)
        verdict = result.podgroup(exp.podgroup)
        placed = _placed(result, owners, exp.podgroup)
        reasons = {c.reason for c in verdict.conditions if c.type == "Unschedulable"}
        where = f"{exp.podgroup}: {exp.state}: {exp.verdict}"
        assert exp.next_phase == verdict.phase, where
        assert exp.bound_now == placed, where
        if exp.enqueue is not None:
            assert exp.enqueue.admitted is (verdict.phase != "Pending"), where
        if exp.state == "never":
            assert verdicts.NEVER_FITS in reasons and placed == 0, where
            assert verdict.phase in ("Pending", "Unknown"), where
        else:
            assert verdicts.NEVER_FITS not in reasons, where
        assert (exp.state == "completed") is (verdict.phase == "Completed"), where
        if exp.condition is not None or "Unschedulable" in {c.type for c in verdict.conditions}:
            assert exp.condition == next(c for c in verdict.conditions if c.type == "Unschedulable"), where
        if exp.state == "no-pods" and verdict.phase != "Pending":
            # admitted, waiting for its pods: the scheduler's condition says so, naming who makes them
            assert exp.condition is not None and exp.condition.reason == "NotEnoughTasks", where
            assert exp.creator is not None and exp.creator in exp.condition.message, where
        if exp.state == "not-admitted":
            assert verdict.phase == "Pending" and placed == 0, where
        if verdict.phase == "Pending" and exp.queue.exists:
            # "invalid" Pending: a group the snapshot holds (snapshot.Job.held) is never admitted.
            assert exp.state in ("never", "not-admitted", "no-pods", "invalid"), where
        if exp.state == "placed":
            assert placed > 0, where
        if placed:
            assert exp.state in ("placed", "no-pods"), where
        if exp.state == "waiting":
            assert placed == 0 and verdict.phase != "Pending", where
    assert sorted(listed) == sorted(evicted), "explain lists each eviction of the plan exactly once"
