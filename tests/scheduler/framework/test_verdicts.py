"""Conditions of waiting gangs count pods as users read them ("0 of 5 pods exist", never "5/0
tasks") and name who creates missing pods; a group that ran to its end stays Completed."""

from __future__ import annotations

import datetime

import pytest

from scheduler import configure, cycle
from scheduler.api import building
from scheduler.framework import verdicts
from tests.builders import scheduler as b
from tests.support import scenarios

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


TRAINING = "the Kubeflow training-operator has not created them"
NODE = [b.node("n0", cpu="16", memory="64Gi")]


def _group(phase: str, min_member: int, owner: tuple[str, str] = ("TFJob", "mnist")) -> list[dict[str, object]]:
    return [b.podgroup("g", min_member=min_member, phase=phase, owner=owner)]


def _finished(*phases: str) -> list[dict[str, object]]:
    return [b.pod(f"p{i}", group="g", node="n0", phase=p) for i, p in enumerate(phases)]


def _ready() -> tuple[str, str, str]:
    return ("Scheduled", verdicts.READY_REASON, "")


WAITING_FOR_PODS = [
    scenarios.Scenario(
        id=f"admitted-without-pods-{owner[0]}",
        nodes=NODE,
        pods=[],
        podgroups=_group("Inqueue", 4, owner),
        queues=[b.queue()],
        phases={"g": "Inqueue"},
        conditions={"g": ("Unschedulable", "NotEnoughTasks", f"0 of 4 pods exist: {who}")},
    )
    for owner, who in [
        (("TFJob", "mnist"), TRAINING),
        (("MPIJob", "pi"), "the Kubeflow training-operator (or mpi-operator) has not created them"),
        (("Job", "vc"), "the Volcano Job controller (vbridge controllers) has not created them"),
        (
            ("SparkConnect", "sc"),
            "the spark-operator has not created them (it makes the server; the server's Spark its executors)",
        ),
    ]
] + [
    scenarios.Scenario(
        id="admitted-with-some-pods",
        nodes=NODE,
        pods=[b.pod(f"p{i}", group="g") for i in range(2)],
        podgroups=_group("Inqueue", 4),
        queues=[b.queue()],
        phases={"g": "Inqueue"},
        conditions={"g": ("Unschedulable", "NotEnoughTasks", f"2 of 4 pods exist: {TRAINING}")},
        pod_events={"p0": ("FailedScheduling", f"2 of 4 pods exist: {TRAINING}")},
    ),
    scenarios.Scenario(  # never-fitting, pods missing or not: it says so, and reserves nothing
        id="ran-and-can-never-run-here-with-pods-missing",
        nodes=NODE,
        pods=[b.pod("p0", group="g", cpu="40")],
        podgroups=_group("Running", 3),
        queues=[b.queue()],
        phases={"g": "Pending"},
        conditions={"g": ("Unschedulable", "NeverFits", "1 of 3 pods exist: task p0 needs cpu 40")},
    ),
    scenarios.Scenario(  # its pods deleted while it ran: it keeps its place and waits for new ones
        id="running-whose-pods-are-all-deleted",
        nodes=NODE,
        pods=[],
        podgroups=_group("Running", 3),
        queues=[b.queue()],
        phases={"g": "Inqueue"},
        conditions={"g": ("Unschedulable", "NotEnoughTasks", f"0 of 3 pods exist: {TRAINING}")},
    ),
]

# A group that ran to its end stays Completed when its pods are removed afterwards (a TTL,
# cleanPodPolicy: All, a Volcano Job's CompleteJob): no Unschedulable, no going back to Pending.
RAN_TO_ITS_END = [
    scenarios.Scenario(
        id=f"ran-to-its-end-{before}-{'-'.join(left) or 'no-pods'}",
        nodes=NODE,
        pods=_finished(*left),
        podgroups=_group(before, 3),
        queues=[b.queue()],
        phases={"g": "Completed"},
        conditions={"g": _ready()},
    )
    for before, left in [
        ("Completed", ()),
        ("Completed", ("Succeeded",)),
        ("Running", ("Succeeded", "Succeeded")),
        ("Running", ("Succeeded", "Failed")),
    ]
]


@pytest.mark.parametrize("scenario", WAITING_FOR_PODS + RAN_TO_ITS_END, ids=lambda s: s.id)
def test_scenario(scenario: scenarios.Scenario) -> None:
    result = scenarios.assert_expected(scenario)
    [verdict] = result.podgroups
    assert len(verdict.conditions) == 1, verdict  # one condition, the one expected
