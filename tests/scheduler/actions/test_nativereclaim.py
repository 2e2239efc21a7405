"""reclaim on the native backend (``actions.nativereclaim``): whole groups of queues above their
share are evicted for a group that waits at the queue gate, only if it is then admitted.

Pods are as the native backend leaves them (``builders.scheduler.native_pod``). Four nodes of
4 cpu: 16 cpu, ×1.2 overcommit = 19.2 admissible. Queue qa fills the cluster with 4-cpu pods;
qb (equal weight) then asks. The plan never binds: it evicts, admits, and lifts gates.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler import configure
from scheduler.api import building
from tests.builders import scheduler as b
from tests.support import scenarios

NATIVE = "native"
CONF = 'actions: "enqueue, allocate, reclaim"'
LATER = "2025-01-01T00:10:00Z"
NODES = [b.node(f"n{i}") for i in range(4)]
QUEUES = [b.queue(), b.queue("qa"), b.queue("qb")]
Dicts = list[dict[str, Any]]


def running(name: str, nodes: list[str], *, queue: str = "qa", **kw: Any) -> tuple[Dicts, Dicts]:
    """A gang of one 4-cpu pod per node, all running, minMember all of them."""
    pods = [b.native_pod(f"{name}-{i}", group=name, cpu="4", memory=None, node=n) for i, n in enumerate(nodes)]
    group = b.podgroup(
        name, queue=queue, min_member=len(nodes), phase="Running", min_resources={"cpu": str(4 * len(nodes))}, **kw
    )
    return pods, [group]


def waiting(name: str, size: int, cpu: int = 4, *, queue: str = "qb", created: str = LATER) -> tuple[Dicts, Dicts]:
    """A gang at the queue gate: ``size`` pods of ``cpu`` cpu, minResources all of them."""
    pods = [b.native_pod(f"{name}{i}", group=name, cpu=str(cpu), memory=None, created=created) for i in range(size)]
    group = b.podgroup(name, queue=queue, min_member=size, min_resources={"cpu": str(cpu * size)}, created=created)
    return pods, [group]


def merged(*parts: tuple[Dicts, Dicts]) -> dict[str, Dicts]:
    return {"pods": [p for part in parts for p in part[0]], "podgroups": [g for part in parts for g in part[1]]}


def scenario(id: str, *parts: tuple[Dicts, Dicts], queues: Dicts = QUEUES, conf: str = CONF, **kw: Any) -> Any:
    return scenarios.Scenario(id=id, backend=NATIVE, nodes=NODES, queues=queues, conf=conf, **merged(*parts), **kw)


def _releasing(pod: dict[str, Any]) -> dict[str, Any]:
    return {**pod, "metadata": {**pod["metadata"], "deletionTimestamp": "2025-01-01T00:59:00Z"}}


A1, A2 = running("a1", ["n0", "n1"]), running("a2", ["n2", "n3"])
SINGLES = [running(f"s{i}", [f"n{i}"]) for i in range(4)]  # four one-pod groups of 4 cpu

SCENARIOS = [
    scenario(
        # qa holds 16, deserves 8 once qb asks 8: one whole gang of qa goes, qb is admitted
        "evicts-a-whole-gang-and-admits-the-reclaimer",
        A1,
        A2,
        waiting("b", 2),
        evictions=frozenset({"a1-0", "a1-1"}),
        ungated=frozenset({"b0", "b1"}),
        phases={"b": "Inqueue", "a1": "Pending", "a2": "Running"},
        conditions={"a1": ("Unschedulable", "NotEnoughResources", "reclaimed for PodGroup ns/b of queue qb")},
    ),
    scenario(
        # one gang of four holds qa's 16 and qa deserves 8: taking it whole would leave qa below its
        # share, taking half would break the gang below minMember, so nothing goes
        "never-part-of-a-gang",
        running("a", ["n0", "n1", "n2", "n3"]),
        waiting("b", 2),
        evictions=frozenset(),
        ungated=frozenset(),
        phases={"b": "Pending", "a": "Running"},
    ),
    scenario(
        # qb asks more than its deserved 8: it would not be admitted after the evictions either
        "nothing-evicted-for-a-group-its-queue-refuses",
        *SINGLES,
        waiting("b", 3),
        evictions=frozenset(),
        ungated=frozenset(),
        phases={"b": "Pending"},
    ),
    scenario(
        # qa's guarantee is 10: one 4-cpu group may go (16 → 12), not a second; qb needs 6
        "guarantee-respected",
        *SINGLES,
        waiting("b", 2, cpu=3),
        queues=[b.queue(), b.queue("qa", guarantee={"cpu": "10"}), b.queue("qb")],
        evictions=frozenset(),
        phases={"b": "Pending"},
    ),
    scenario(
        "without-the-guarantee-two-groups-go",
        *SINGLES,
        waiting("b", 2, cpu=3),
        evictions=frozenset({"s0-0", "s1-0"}),
        ungated=frozenset({"b0", "b1"}),
        phases={"b": "Inqueue", "s0": "Pending", "s1": "Pending", "s2": "Running", "s3": "Running"},
    ),
    scenario(
        "a-queue-that-is-not-reclaimable-keeps-its-pods",
        *SINGLES,
        waiting("b", 2),
        queues=[b.queue(), b.queue("qa", reclaimable=False), b.queue("qb")],
        evictions=frozenset(),
        phases={"b": "Pending"},
    ),
    scenario(
        # the lowest-priority group goes first, whatever the names say
        "lowest-priority-group-first",
        running("s0", ["n0"], priority_class="hi"),
        running("s1", ["n1"], priority_class="hi"),
        running("s2", ["n2"], priority_class="lo"),
        running("s3", ["n3"], priority_class="hi"),
        waiting("b", 1),
        priorityclasses=[b.priority_class("hi", 100), b.priority_class("lo", 1)],
        evictions=frozenset({"s2-0"}),
        ungated=frozenset({"b0"}),
    ),
    scenario(
        # a gang with a pod that may not be preempted is kept whole; the other goes
        "a-gang-with-an-unpreemptable-pod-is-kept",
        (
            [
                b.native_pod("a1-0", group="a1", cpu="4", memory=None, node="n0", preemptable=False),
                b.native_pod("a1-1", group="a1", cpu="4", memory=None, node="n1"),
            ],
            A1[1],
        ),
        A2,
        waiting("b", 2),
        evictions=frozenset({"a2-0", "a2-1"}),
        ungated=frozenset({"b0", "b1"}),
    ),
    scenario(
        # the second reclaimer counts the first: each takes one group, no more, both admitted
        "two-reclaimers-in-one-cycle",
        *SINGLES,
        waiting("b", 1),
        waiting("c", 1, created="2025-01-01T00:11:00Z"),
        evictions=frozenset({"s0-0", "s1-0"}),
        ungated=frozenset({"b0", "c0"}),
        phases={"b": "Inqueue", "c": "Inqueue"},
    ),
    scenario(
        # pods of an evicted group from a previous cycle are still releasing: that room is counted
        "releasing-room-is-not-taken-twice",
        *SINGLES[1:],
        ([_releasing(b.native_pod("s0-0", group="s0", cpu="4", memory=None, node="n0"))], SINGLES[0][1]),
        waiting("b", 1),
        evictions=frozenset(),
    ),
    scenario(
        # Volcano's default actions list no reclaim: nothing is evicted on this backend either
        "no-reclaim-without-it-in-the-conf",
        A1,
        A2,
        waiting("b", 2),
        conf="",
        evictions=frozenset(),
        phases={"b": "Pending"},
    ),
    scenario(
        "gangreclaim-in-the-conf-reclaims-too",
        A1,
        A2,
        waiting("b", 2),
        conf='actions: "enqueue, allocate, gangreclaim"',
        evictions=frozenset({"a1-0", "a1-1"}),
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_native_reclaim(scenario: scenarios.Scenario) -> None:
    result = scenarios.assert_expected(scenario)
    assert not result.binds() and not result.pipelined()
    # whole groups only: every group keeps all its pods or loses all of them
    evicted = set(result.evictions())
    for group in {_group(p) for p in scenario.pods}:
        members = {f"ns/{p['metadata']['name']}" for p in scenario.pods if _group(p) == group and _placed(p)}
        assert not members & evicted or members <= evicted, f"{group}: {sorted(members & evicted)} of {members}"


def _group(pod: dict[str, Any]) -> str:
    return str(pod["metadata"]["annotations"][building.GROUP_ANNOTATION])


def _placed(pod: dict[str, Any]) -> bool:
    return bool(pod["spec"].get("nodeName"))


@pytest.mark.parametrize(
    ("actions", "native"),
    [
        ("enqueue, allocate", ("enqueue",)),
        ("reclaim, enqueue, allocate", ("enqueue", "reclaim")),
        ("enqueue, allocate, gangreclaim", ("enqueue", "reclaim")),
        ("allocate", ("enqueue",)),
    ],
)
def test_native_actions_follow_the_conf(actions: str, native: tuple[str, ...]) -> None:
    assert configure.parse(f'actions: "{actions}"', backend=NATIVE).actions == native


def test_gangreclaim_without_whole_bundles_reclaims_nothing_on_native() -> None:
    text = 'actions: "enqueue, allocate, gangreclaim"\nconfigurations:\n- name: gangreclaim\n'
    text += "  arguments: {allowWholeBundle: 'false'}\n"
    assert configure.parse(text, backend=NATIVE).actions == ("enqueue",)
