"""bus: a Command read as Volcano's controllers read it, and Volcano's queue state machine."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import bus, errors


def command(action: str | None, kind: str = "Job", api_version: str = "batch.volcano.sh/v1alpha1") -> dict[str, Any]:
    """As vcctl makes one: the target is also the controller ownerReference."""
    target = {"apiVersion": api_version, "kind": kind, "name": "t", "uid": "u-1", "controller": True}
    body: dict[str, Any] = {"metadata": {"name": f"t-{action}-x", "namespace": "team", "ownerReferences": [target]}}
    body["target"] = target
    if action is not None:
        body["action"] = action
    return body


@pytest.mark.parametrize("action", bus.JOB_ACTIONS)
def test_a_job_command_names_the_job_in_its_own_namespace(action: str) -> None:
    assert bus.order(command(action)) == bus.Order("Job", "team", "t", action, "u-1")


@pytest.mark.parametrize("action", bus.QUEUE_ACTIONS)
def test_a_queue_command_names_a_cluster_scoped_queue(action: str) -> None:
    got = bus.order(command(action, "Queue", "scheduling.volcano.sh/v1beta1"))
    assert got == bus.Order("Queue", "", "t", action, "u-1") and got.target == "Queue t"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"metadata": {"namespace": "team"}, "action": "AbortJob"}, "has no target"),
        (command("AbortJob", "Deployment", "apps/v1"), "target Deployment apps/v1 t: no controller here serves it"),
        (command("OpenQueue"), "action OpenQueue is not one a Job takes: AbortJob, ResumeJob"),
        (command("AbortJob", "Queue", "scheduling.volcano.sh/v1beta1"), "not one a Queue takes: OpenQueue"),
        (command(None), "action (none) is not one a Job takes"),
        (command("RestartTask"), "action RestartTask is not one a Job takes"),
    ],
)
def test_what_cannot_be_carried_out_is_refused_with_why(body: dict[str, Any], message: str) -> None:
    with pytest.raises(errors.InvalidObjectError, match=message.replace("(", r"\(").replace(")", r"\)")):
        bus.order(body)


# (state, action, PodGroups in the queue) -> state: pkg/controllers/queue/state/{open,closing,closed,unknown}.go
TRANSITIONS = [
    ("Open", "CloseQueue", 0, "Closed"),
    ("Open", "CloseQueue", 2, "Closing"),
    (None, "CloseQueue", 2, "Closing"),
    ("Closing", "CloseQueue", 0, "Closed"),
    ("Closing", "CloseQueue", 1, "Closing"),
    ("Closed", "CloseQueue", 3, "Closed"),
    ("Unknown", "CloseQueue", 1, "Closing"),
    ("Closing", "OpenQueue", 1, "Open"),
    ("Closed", "OpenQueue", 0, "Open"),
    ("Closing", bus.SYNC_QUEUE, 1, "Closing"),
    ("Closing", bus.SYNC_QUEUE, 0, "Closed"),
    ("Open", bus.SYNC_QUEUE, 0, "Open"),
    ("Closed", bus.SYNC_QUEUE, 0, "Closed"),
    (None, bus.SYNC_QUEUE, 0, "Open"),
]


@pytest.mark.parametrize(("state", "action", "groups", "after"), TRANSITIONS)
def test_queue_state_as_volcanos_queue_controller(state: str | None, action: str, groups: int, after: str) -> None:
    assert bus.queue_state(state, action, groups) == after
