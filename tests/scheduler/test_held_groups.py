"""Groups the scheduler must never schedule, whatever let them in: one bad object never stops a cycle.

A PodGroup or Queue that never passed admission (the webhook was down, skips the namespace,
or the object came before the bridge) may have an unsound spec or name a queue its namespace
may not use. The snapshot holds such a group: it stays Pending (or keeps what already runs),
its condition says why, and every other group in the same cycle is scheduled as usual.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import scheduler as b
from tests.support import scenarios

NODES = [b.node("n0"), b.node("n1")]
SANE = [b.pod("sane-0", group="sane"), b.pod("sane-1", group="sane")]
SANE_GROUP = b.podgroup("sane", min_member=2)


def _restricted(name: str, patterns: str, **kw: Any) -> dict[str, Any]:
    queue = b.queue(name, **kw)
    queue["metadata"]["annotations"] = {"vbridge.io/allowed-namespaces": patterns}
    return queue


def _group(name: str, **spec: Any) -> dict[str, Any]:
    body = b.podgroup(name)
    body["spec"].update(spec)
    return body


def _held(id: str, group: dict[str, Any], reason: str, text: str, queues: list[dict[str, Any]]) -> dict[str, Any]:
    """A scenario's fields: the group ``bad`` (one pod) is held with ``reason``; the sane gang beside it is bound."""
    return {
        "id": id,
        "nodes": NODES,
        "pods": [*SANE, b.pod("bad-0", group="bad")],
        "podgroups": [SANE_GROUP, group],
        "queues": [b.queue(), *queues],
        "binds": {"sane-0": "*", "sane-1": "*"},
        "phases": {"bad": "Pending", "sane": "Running"},
        "conditions": {"bad": ("Unschedulable", reason, text)},
        "pod_events": {"bad-0": ("Unschedulable", text)},
    }


SCENARIOS = [
    scenarios.Scenario(
        **_held(
            "queue-that-does-not-admit-the-namespace",
            b.podgroup("bad", queue="finance"),
            "QueueNotAllowed",
            "queue 'finance' does not admit namespace 'ns'; queues open to namespace 'ns': default",
            [_restricted("finance", "finance-*")],
        )
    ),
    scenarios.Scenario(
        **_held(
            "negative-min-resources",
            b.podgroup("bad", min_resources={"cpu": "-4"}),
            "InvalidPodGroup",
            "spec.minResources.cpu must not be negative",
            [],
        )
    ),
    scenarios.Scenario(
        **_held(
            "malformed-min-resources",
            b.podgroup("bad", min_resources={"cpu": "lots"}),
            "InvalidPodGroup",
            "spec.minResources.cpu is not a quantity",
            [],
        )
    ),
    scenarios.Scenario(
        **_held(
            "min-resources-not-a-map",
            _group("bad", minResources=["cpu"]),
            "InvalidPodGroup",
            "spec.minResources must map resource names to quantities",
            [],
        )
    ),
    scenarios.Scenario(
        **_held(
            "negative-min-task-member",
            b.podgroup("bad", min_task_member={"worker": -1}),
            "InvalidPodGroup",
            "spec.minTaskMember.worker must be a non-negative integer",
            [],
        )
    ),
    scenarios.Scenario(
        **_held("min-member-a-string", _group("bad", minMember="3"), "InvalidPodGroup", "spec.minMember", [])
    ),
    scenarios.Scenario(
        **_held("queue-a-number", _group("bad", queue=7), "InvalidPodGroup", "spec.queue must be a queue name", [])
    ),
    scenarios.Scenario(
        **_held(
            "queue-with-negative-capability",
            b.podgroup("bad", queue="neg"),
            "QueueInvalid",
            "queue neg cannot be used: spec.capability.cpu must not be negative",
            [b.queue("neg", capability={"cpu": "-1"})],
        )
    ),
    scenarios.Scenario(
        **_held(
            "queue-with-guarantee-above-capability",
            b.podgroup("bad", queue="over"),
            "QueueInvalid",
            "spec.guarantee cpu 8 is above the capability 2",
            [b.queue("over", capability={"cpu": "2"}, guarantee={"cpu": "8"})],
        )
    ),
    scenarios.Scenario(
        **_held(
            "queue-with-a-malformed-capability",
            b.podgroup("bad", queue="odd"),
            "QueueInvalid",
            "spec.capability.cpu is not a quantity",
            [b.queue("odd", capability={"cpu": "many"})],
        )
    ),
    scenarios.Scenario(
        **_held(
            "queue-with-zero-weight",
            b.podgroup("bad", queue="light"),
            "QueueInvalid",
            "spec.weight must be an integer from 1 to 65535, got 0",
            [b.queue("light", weight=0)],
        )
    ),
    scenarios.Scenario(
        id="an-admitted-group-whose-queue-turned-foreign-reserves-nothing-and-goes-back-to-pending",
        nodes=NODES,
        pods=[*SANE, b.pod("bad-0", group="bad", cpu="3")],
        podgroups=[SANE_GROUP, b.podgroup("bad", queue="finance", phase="Inqueue", min_resources={"cpu": "3"})],
        queues=[b.queue(), _restricted("finance", "finance-*")],
        binds={"sane-0": "*", "sane-1": "*"},
        phases={"bad": "Pending"},
        conditions={"bad": ("Unschedulable", "QueueNotAllowed", "does not admit namespace 'ns'")},
    ),
    scenarios.Scenario(
        id="a-running-group-whose-queue-turned-foreign-keeps-its-pods-but-gets-no-new-ones",
        nodes=NODES,
        pods=[
            b.pod("run-0", group="run", node="n0", phase="Running"),
            b.pod("run-1", group="run"),
            *SANE,
        ],
        podgroups=[SANE_GROUP, b.podgroup("run", queue="finance", phase="Running")],
        queues=[b.queue(), _restricted("finance", "team-*")],
        binds={"sane-0": "*", "sane-1": "*"},
        evictions=frozenset(),
        conditions={"run": ("Unschedulable", "QueueNotAllowed", "queue 'finance' does not admit namespace 'ns'")},
    ),
    scenarios.Scenario(
        id="a-pattern-that-matches-the-namespace-admits-it",
        nodes=NODES,
        pods=[b.pod("ok-0", group="ok")],
        podgroups=[b.podgroup("ok", queue="team")],
        queues=[b.queue(), _restricted("team", "other, n*")],
        binds={"ok-0": "*"},
        phases={"ok": "Running"},
    ),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_held_groups(scenario: scenarios.Scenario) -> None:
    scenarios.assert_expected(scenario)
