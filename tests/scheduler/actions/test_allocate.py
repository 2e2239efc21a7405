"""allocate: gang commit, minTaskMember, pipelining, running groups, verdicts for strays; and its
run of one-task jobs (``_allocate_lone_tasks``) gives the plan the job-by-job turns give.

The run check: each seeded ``builders.scheduler.lone_task_workload`` is scheduled on the fast
paths and with ``fast_paths`` off (every job through ``allocate_job``, task by task); the plans
must be equal, operation order included. With one queue the run path does place pods (a spy
counts what it took), so the comparison means something; runs are also cut short
(``LONE_RUN`` 3) to check that a run resumes where the last one stopped.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.actions import allocate
from scheduler.api import snapshot
from scheduler.framework import placement
from tests.builders import scheduler as b
from tests.support import scenarios

Q = [b.queue()]
LATER = "2025-01-01T00:10:00Z"
# Volcano's default tiers without drf: job order by priority, gang readiness, then creation.
NO_DRF = (
    'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n'
    "- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n"
)

SCENARIOS = [
    scenarios.Scenario(
        id="gang-all-fit-binds-all",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[b.pod(f"p{i}", cpu="2") for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=Q,
        binds={"p0": "*", "p1": "*", "p2": "*"},
        phases={"pg": "Running"},
        conditions={"pg": ("Scheduled", "tasks in gang are ready to be scheduled", "")},
        pod_events={"p0": ("Scheduled", "Successfully assigned ns/p0")},
    ),
    scenarios.Scenario(
        id="gang-n-minus-one-fit-binds-nothing",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[b.pod(f"p{i}", cpu="3") for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=3)],
        queues=Q,
        binds={},
        phases={"pg": "Inqueue"},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "3/3 tasks in gang unschedulable")},
        pod_events={"p2": ("FailedScheduling", "3/3 tasks in gang unschedulable: 0/2 nodes are available")},
    ),
    scenarios.Scenario(
        id="gang-min-member-below-size-binds-what-fits",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[b.pod(f"p{i}", cpu="3") for i in range(3)],
        podgroups=[b.podgroup("pg", min_member=2)],
        queues=Q,
        bound_counts={"p": 2},
        phases={"pg": "Running"},
        pod_events={"p2": ("FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu.")},
    ),
    scenarios.Scenario(
        id="min-task-member-missing-pods-is-invalid",
        nodes=[b.node("n1")],
        pods=[b.pod("ps0", task="ps"), b.pod("w0", task="worker")],
        podgroups=[b.podgroup("pg", min_member=2, min_task_member={"ps": 1, "worker": 2})],
        queues=Q,
        binds={},
        conditions={"pg": ("Unschedulable", "NotEnoughPodsOfTask", "task worker has 1 valid pods")},
        pod_events={"w0": ("Unschedulable", "minTaskMember is 2")},
    ),
    scenarios.Scenario(
        id="min-task-member-unfit-task-blocks-gang",
        nodes=[b.node("n1")],
        pods=[b.pod("ps0", task="ps", cpu="500m"), b.pod("ps1", task="ps", cpu="500m")]
        + [b.pod(f"w{i}", task="worker", cpu="2", created=LATER) for i in range(2)],
        podgroups=[b.podgroup("pg", min_member=2, min_task_member={"worker": 2})],
        queues=Q,
        binds={},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "Insufficient cpu")},
    ),
    scenarios.Scenario(
        id="pipelined-gang-reserves-releasing-resources",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[
            {
                **b.pod("old", group=None, cpu="4", node="n1"),
                "metadata": {**b.pod("old", group=None)["metadata"], "deletionTimestamp": "2025-01-01T00:59:00Z"},
            },
            b.pod("a0", group="a", cpu="4"),
            b.pod("a1", group="a", cpu="4"),
            b.pod("late", group="late", cpu="4", created=LATER),
        ],
        podgroups=[b.podgroup("a", min_member=2), b.podgroup("late", created=LATER)],
        queues=Q,
        binds={},
        conditions={
            "a": ("Unschedulable", "NotEnoughResources", "waiting for resources being released"),
            "late": ("Unschedulable", "NotEnoughResources", "Insufficient cpu"),
        },
    ),
    scenarios.Scenario(
        id="running-group-member-placed-alone",
        nodes=[b.node("n1"), b.node("n2")],
        pods=[b.pod(f"r{i}", cpu="1", node="n1") for i in range(3)] + [b.pod("extra", cpu="1", created=LATER)],
        podgroups=[b.podgroup("pg", min_member=3, phase="Running")],
        queues=Q,
        binds={"extra": "n2"},
        phases={"pg": "Running"},
    ),
    scenarios.Scenario(
        id="running-group-keeps-place-over-newer-group",
        nodes=[b.node("n1"), b.node("n2", cpu="2")],
        pods=[b.pod(f"r{i}", group="g", cpu="2", node="n1") for i in range(2)]
        + [b.pod("replacement", group="g", cpu="2", created=LATER), b.pod("fresh", group="f", cpu="2", created=LATER)],
        podgroups=[b.podgroup("g", min_member=3, phase="Running"), b.podgroup("f", created=LATER)],
        queues=Q,
        conf=NO_DRF,  # drf would order f (no share yet) first: tests/scheduler/plugins/test_drf.py
        binds={"replacement": "n2"},
        phases={"g": "Running", "f": "Inqueue"},
    ),
    scenarios.Scenario(
        id="higher-priority-class-first",
        nodes=[b.node("n1", cpu="2")],
        pods=[b.pod("low", group="low", cpu="2"), b.pod("high", group="high", cpu="2", created=LATER)],
        podgroups=[b.podgroup("low"), b.podgroup("high", priority_class="high", created=LATER)],
        queues=Q,
        priorityclasses=[b.priority_class("high", 1000)],
        binds={"high": "n1"},
    ),
    scenarios.Scenario(
        id="missing-podgroup-gets-verdict",
        nodes=[b.node("n1")],
        pods=[b.pod("orphan", group="ghost"), b.pod("bare", group=None)],
        podgroups=[],
        queues=Q,
        binds={},
        pod_events={
            "orphan": ("Unschedulable", "podgroup ns/ghost not found"),
            "bare": ("Unschedulable", "no scheduling.k8s.io/group-name annotation"),
        },
    ),
    scenarios.Scenario(
        id="missing-queue-gets-verdict",
        nodes=[b.node("n1")],
        pods=[b.pod("p0")],
        podgroups=[b.podgroup("pg", queue="nope")],
        queues=Q,
        binds={},
        phases={"pg": "Pending"},
        conditions={"pg": ("Unschedulable", "QueueNotFound", "queue nope not found")},
        pod_events={"p0": ("Unschedulable", "queue nope not found")},
    ),
    scenarios.Scenario(
        id="other-scheduler-pods-ignored-but-counted",
        nodes=[b.node("n1", cpu="2"), b.node("n2", cpu="2")],
        pods=[b.pod("theirs", group=None, cpu="2", node="n1", scheduler="default-scheduler"), b.pod("p0", cpu="2")],
        podgroups=[b.podgroup("pg")],
        queues=Q,
        binds={"p0": "n2"},
    ),
    scenarios.Scenario(
        id="other-scheduler-groups-left-alone",
        nodes=[b.node("n1")],
        pods=[
            b.pod("theirs-0", group="theirs", scheduler="default-scheduler"),
            b.pod("theirs-1", group="theirs", scheduler="other", node="n1"),
            b.pod("mixed-ours", group="mixed"),
            b.pod("mixed-theirs", group="mixed", scheduler="other"),
        ],
        podgroups=[b.podgroup("theirs", min_member=2), b.podgroup("mixed"), b.podgroup("empty")],
        queues=Q,
        binds={"mixed-ours": "n1"},
        untouched=frozenset({"theirs", "theirs-0", "theirs-1", "mixed-theirs"}),
        # A group with one of our pods is ours; one with no pods yet is too (operators create it first).
        phases={"mixed": "Running", "empty": "Inqueue"},
        queue_states={"default": ("Open", 0, 1)},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_allocate(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


def test_same_inputs_same_plan() -> None:
    scenario = SCENARIOS[0]
    assert scenario.run() == scenario.run()


@pytest.mark.interpreted
@pytest.mark.parametrize("lone_run", [3, allocate.LONE_RUN])
@pytest.mark.parametrize("chunk", range(4))
def test_runs_of_lone_tasks_equal_job_by_job(chunk: int, lone_run: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocate, "LONE_RUN", lone_run)
    confs = b.CONFS[:3]
    cases = [(b.lone_task_workload(seed), confs[seed % len(confs)]) for seed in range(chunk * 100, (chunk + 1) * 100)]
    calls: list[int] = []
    real = allocate._allocate_lone_tasks

    def counted(*args: Any) -> int:
        taken = real(*args)
        calls.append(taken)
        return taken

    monkeypatch.setattr(allocate, "_allocate_lone_tasks", counted)
    fast = [scenarios.schedule(data, conf) for data, conf in cases]
    assert sum(taken for taken in calls if taken > 1) > 300  # runs were placed together
    assert max(calls) <= lone_run
    calls.clear()
    for (data, conf), expected in zip(cases, fast, strict=True):
        assert scenarios.schedule(data, conf, fast_paths=False) == expected
    assert not calls  # the reference path never takes a run


@pytest.mark.interpreted
def test_a_topological_run_goes_the_long_way_once_no_idle_row_takes_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``place_each`` takes the copies that fit and is not asked again for the ones left: each
    of those would be one more look at every row for nothing (the long way refuses them). The
    run's preferred terms are on two keys, so its scores do not split (``place_scored`` refuses it)."""
    calls: list[int] = []
    real = placement.Placer.place_each

    def counted(self: placement.Placer, tasks: list[snapshot.Task], allocate: Any) -> int:
        calls.append(placed := real(self, tasks, allocate))
        return placed

    monkeypatch.setattr(placement.Placer, "place_each", counted)
    data = _preferred_zone_run(("zone", "rack"))
    result = scenarios.schedule(data)
    assert len(result.binds()) == 6  # three nodes of two cpus
    assert calls == [5]  # the first copy went the long way, then one call for the rest
    assert scenarios.schedule(data, fast_paths=False) == result


@pytest.mark.interpreted
def test_a_run_only_scored_by_domain_goes_in_one_call_then_the_long_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose domain hooks split into parts (one key, scores only) is placed from its first
    copy by ``place_scored``, and what no idle row takes goes the long way, ``place_each`` unasked."""
    calls: dict[str, list[int]] = {"place_scored": [], "place_each": []}
    for name in calls:
        real = getattr(placement.Placer, name)

        def counted(self: placement.Placer, *args: Any, real: Any = real, name: str = name) -> int:
            calls[name].append(placed := real(self, *args))
            return placed

        monkeypatch.setattr(placement.Placer, name, counted)
    data = _preferred_zone_run(("zone",))
    result = scenarios.schedule(data)
    assert len(result.binds()) == 6
    assert calls == {"place_scored": [6], "place_each": []}
    assert scenarios.schedule(data, fast_paths=False) == result


def _preferred_zone_run(keys: tuple[str, ...]) -> dict[str, Any]:
    """40 copies of a gang preferring its own pods' domains of ``keys``, on 6 nodes of which 3 take pods."""
    selector = {"matchLabels": {"app": "g"}}
    terms = [{"weight": 10, "podAffinityTerm": {"labelSelector": selector, "topologyKey": key}} for key in keys]
    spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}
    taint = {"key": "t", "value": "x", "effect": "NoSchedule"}
    return {
        # The tainted nodes count in the queue's share (so it lets more through) but take no pod.
        "nodes": [
            b.node(
                f"n{i}", cpu="2", labels={"zone": f"z{i % 2}", "rack": f"r{i % 3}"}, taints=[taint] if i >= 3 else None
            )
            for i in range(6)
        ],
        "pods": [b.pod(f"p{k}", group="g", cpu="1", labels={"app": "g"}, spec=spec) for k in range(40)],
        "podgroups": [b.podgroup("g", min_member=1)],
        "queues": Q,
    }
