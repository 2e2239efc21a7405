"""The stages' hold: once a staged group's first stage runs, its later stages' room stays held."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from bridge.adapters.jobset import stages
from scheduler import configure, cycle
from scheduler.api import building
from tests.builders import jobset as js
from tests.builders import scheduler as b
from tests.support import scenarios

LATER = "2025-01-01T00:30:00Z"
NODES = [b.node("n1"), b.node("n2")]  # 4 cpu each


def _staged(name: str, jobset: dict[str, Any], *, min_member: int, cpu: str, phase: str = "Running") -> dict[str, Any]:
    """A PodGroup carrying the stages of ``jobset`` as the JobSet adapter writes them."""
    group = b.podgroup(name, min_member=min_member, min_resources={"cpu": cpu}, phase=phase)
    plan = stages.plan(stages.parts(jobset["spec"]))
    group["metadata"]["annotations"] = {"vbridge.io/stages": plan.describe()}
    return group


# DeepSpeed: 2 node pods of 2 cpu (running on n1) are the first stage; the launcher (2 cpu) comes once
# they are Ready: 2 cpu of the 4 free on n2 are held for it
DS = _staged("ds", js.deepspeed("ds", nodes=2), min_member=2, cpu="6")
NODE_PODS = [b.pod(f"node-{i}", group="ds", task="node", cpu="2", memory=None, node="n1") for i in range(2)]
LAUNCHER = b.pod("launcher", group="ds", task="launcher", cpu="2", memory=None)
# torchtune: one initializer (2 cpu) completes, then 2 trainer pods (4 cpu each): room 8 cpu
TUNE = _staged("tune", js.torchtune("tune", nodes=2), min_member=2, cpu="8")
INITIALIZERS = [
    b.pod(f"{n}-initializer", group="tune", task=f"{n}-initializer", cpu="2", memory=None, node="n1", phase="Succeeded")
    for n in ("dataset", "model")
]


# torchtune with 3 trainer pods of 4 cpu: 2 nodes of 4 cpu hold 2 of them
TUNE3 = _staged("tune3", js.torchtune("tune3", nodes=3), min_member=2, cpu="12")
INITIALIZERS3 = [
    b.pod(f"{n}-init", group="tune3", task=f"{n}-initializer", cpu="2", memory=None, node="n1", phase="Succeeded")
    for n in ("dataset", "model")
]


def _trainers(group: str, count: int, cpu: str = "4") -> list[dict[str, Any]]:
    return [b.pod(f"{group}-node-{i}", group=group, task="node", cpu=cpu, memory=None) for i in range(count)]


def _leaving(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod of the attempt before a restart (RestartJobSet deletes every Job): being deleted."""
    leaving = copy.deepcopy(pod)
    leaving["metadata"]["deletionTimestamp"] = "2025-01-01T00:20:00Z"
    return leaving


def _other(cpu: str, **group: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return b.pod("other", group="other", cpu=cpu, memory=None, created=LATER), b.podgroup(
        "other", created=LATER, **group
    )


SCENARIOS = [
    scenarios.Scenario(
        id="a-newcomer-does-not-take-the-room-of-a-running-jobs-later-stage",
        nodes=NODES,
        pods=[*NODE_PODS, _other("3")[0]],
        podgroups=[DS, _other("3")[1]],
        queues=[b.queue()],
        binds={},
        pod_events={"other": ("FailedScheduling", "held for the later stages of group(s) ns/ds")},
    ),
    scenarios.Scenario(
        id="the-later-stage-takes-its-held-room",
        nodes=NODES,
        pods=[*NODE_PODS, LAUNCHER, _other("3")[0]],
        podgroups=[DS, _other("3")[1]],
        queues=[b.queue()],
        binds={"launcher": "*"},
    ),
    scenarios.Scenario(
        id="once-every-stage-arrived-nothing-is-held",
        nodes=NODES,
        pods=[*NODE_PODS, LAUNCHER, _other("2")[0]],
        podgroups=[DS, _other("2")[1]],
        queues=[b.queue()],
        binds={"launcher": "*", "other": "*"},
    ),
    scenarios.Scenario(
        id="the-room-of-a-stage-after-complete-stays-held-while-the-earlier-is-over",
        nodes=NODES,
        pods=[*INITIALIZERS, _other("1")[0]],
        podgroups=[TUNE, _other("1")[1]],
        queues=[b.queue()],
        binds={},
    ),
    scenarios.Scenario(
        id="a-later-stage-that-fits-all-but-one-binds-nothing",
        nodes=NODES,
        pods=[*INITIALIZERS3, *_trainers("tune3", 3)],
        podgroups=[TUNE3],
        queues=[b.queue()],
        binds={},
    ),
    scenarios.Scenario(
        id="a-later-stage-that-fits-binds-whole",
        nodes=NODES,
        pods=[*INITIALIZERS, *_trainers("tune", 2)],
        podgroups=[TUNE],
        queues=[b.queue()],
        binds={"tune-node-0": "*", "tune-node-1": "*"},
    ),
    scenarios.Scenario(
        id="a-later-stage-waits-until-all-its-pods-exist",
        nodes=NODES,
        pods=[*INITIALIZERS, *_trainers("tune", 1)],
        podgroups=[TUNE],
        queues=[b.queue()],
        binds={},
    ),
    scenarios.Scenario(
        # The old attempt's node pods are being deleted (not ready); 2 new ones of 3 cpu fit one a node
        # once they are gone, but not while the old pods hold n1: nothing of the new gang binds alone
        id="a-restart-makes-a-whole-new-gang-never-a-partial-one",
        nodes=NODES,
        pods=[
            *(_leaving(p) for p in NODE_PODS),
            *(b.pod(f"new-node-{i}", group="ds", task="node", cpu="3", memory=None) for i in range(2)),
        ],
        podgroups=[DS],
        queues=[b.queue()],
        binds={},
    ),
    scenarios.Scenario(
        id="nothing-is-held-before-the-first-stage-runs",
        nodes=NODES,
        pods=[
            *(b.pod(f"node-{i}", group="ds", task="node", cpu="5", memory=None) for i in range(2)),  # never fits
            _other("3")[0],
        ],
        podgroups=[_staged("ds", js.deepspeed("ds", nodes=2), min_member=2, cpu="12", phase="Inqueue"), _other("3")[1]],
        queues=[b.queue()],
        binds={"other": "*"},
    ),
    scenarios.Scenario(
        id="enqueue-counts-the-held-room",
        nodes=NODES,
        pods=[*NODE_PODS, _other("4")[0]],
        podgroups=[DS, _other("4", min_resources={"cpu": "4"})[1]],
        queues=[b.queue()],
        phases={"other": "Pending"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_stages(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)


def test_the_held_room_is_the_groups_min_resources_less_what_its_pods_hold() -> None:
    snap = building.build(nodes=NODES, pods=NODE_PODS, podgroups=[DS], queues=[b.queue()])
    assert snap.jobs["ns/ds"].stages == ((("node", 2),), (("launcher", 1),))
    assert snap.jobs["ns/ds"].later == 1
    ssn, _ = cycle.open_session(snap, configure.default(), scenarios.NOW)
    assert list(ssn.holds.owed) == ["ns/ds"]
    assert ssn.holds.total[snap.dims.index("cpu")] == 2000  # 6 cpu of room, the node pods hold 4


@pytest.mark.parametrize(
    "raw",
    ["not json", "{}", '[{"tasks": 3}]', '[{"tasks": {"a": "x"}}, {"tasks": {"b": 1}}]', '[{"tasks": {"a": -1}}]'],
)
def test_an_unreadable_stages_annotation_holds_nothing(raw: str) -> None:
    group = b.podgroup("ds", min_member=2, min_resources={"cpu": "6"}, phase="Running")
    group["metadata"]["annotations"] = {"vbridge.io/stages": raw}
    snap = building.build(nodes=NODES, pods=NODE_PODS, podgroups=[group], queues=[b.queue()])
    assert snap.jobs["ns/ds"].later == 0 and snap.jobs["ns/ds"].stages == ()
    ssn, _ = cycle.open_session(snap, configure.default(), scenarios.NOW)
    assert ssn.holds.owed == {}
