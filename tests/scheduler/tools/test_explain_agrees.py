"""explain never contradicts the scheduler: on EVERY scenario of tests/scheduler (collected from
the modules, not listed by hand) and every PodGroup in it, what explain says the cycle does
(admitted or kept Pending, placed or not, "can never run here", which pods are evicted to make
room for it) is what ``cycle.schedule`` did.
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


def _collect() -> list[scenarios.Scenario]:
    found: dict[str, scenarios.Scenario] = {}
    for path in sorted(ROOT.rglob("test_*.py")):
        module = importlib.import_module(".".join(path.relative_to(ROOT.parents[1]).with_suffix("").parts))
        for value in vars(module).values():
            if isinstance(value, list | tuple):
                for item in value:
                    if isinstance(item, scenarios.Scenario):
                        found[f"{path.stem}:{item.id}"] = item
    return [found[k] for k in sorted(found)]


ALL = _collect()


def test_every_scenario_was_collected() -> None:
    """As many as the sources write ``scenarios.Scenario(``: none is missed, none counted twice."""
    written = sum(p.read_text().count("scenarios.Scenario(") for p in ROOT.rglob("test_*.py") if p.name != THIS)
    assert len(ALL) == written


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
