"""bus: who made a Command (recorded at admission, read back by the controller), what they are
asked to be allowed, and the refusals that need no question."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bridge import bus, errors, keys

EDITOR = {"username": "alice", "uid": "u-a", "groups": ["team", "system:authenticated"], "extra": {"scopes": ["x"]}}


def command(kind: str = "Job", *, own: str = "team", author: str | None = None, **target: Any) -> dict[str, Any]:
    api = "batch.volcano.sh/v1alpha1" if kind == "Job" else "scheduling.volcano.sh/v1beta1"
    body: dict[str, Any] = {
        "metadata": {"name": "c", "namespace": own},
        "action": "AbortJob" if kind == "Job" else "CloseQueue",
        "target": {"apiVersion": api, "kind": kind, "name": "t", "uid": "u-t", **target},
    }
    if author is not None:
        body["metadata"]["annotations"] = {keys.COMMAND_AUTHOR: author}
    return body


def test_the_recorded_author_reads_back_whole() -> None:
    who = bus.author(command(author=bus.record(EDITOR)))
    assert who == bus.Author("alice", "u-a", ("team", "system:authenticated"), {"scopes": ("x",)})


def test_a_record_is_canonical_json() -> None:
    assert bus.record(EDITOR) == bus.record(dict(reversed(list(EDITOR.items()))))
    assert json.loads(bus.record({"username": "bob"})) == {"username": "bob", "uid": "", "groups": [], "extra": {}}


@pytest.mark.parametrize("user", [None, {}, {"username": ""}, {"username": 3}, ["alice"]])
def test_a_request_without_a_user_records_no_author(user: Any) -> None:
    with pytest.raises(errors.InvalidObjectError, match="names no user"):
        bus.record(user)


@pytest.mark.parametrize("recorded", [None, "", "not json", "[1]", '{"uid": "x"}', '{"username": ""}'])
def test_a_command_without_a_readable_author_is_refused(recorded: str | None) -> None:
    with pytest.raises(errors.ForbiddenError, match="no author recorded by admission"):
        bus.author(command(author=recorded))


def test_a_queue_command_asks_for_update_on_the_cluster_scoped_queue() -> None:
    review = bus.access_review(bus.order(command("Queue")), bus.Author("alice", "u-a", ("team",), {"k": ("v",)}))
    assert review["kind"] == "SubjectAccessReview" and review["apiVersion"] == "authorization.k8s.io/v1"
    assert review["spec"] == {
        "user": "alice",
        "uid": "u-a",
        "groups": ["team"],
        "extra": {"k": ["v"]},
        "resourceAttributes": {"verb": "update", "group": "scheduling.volcano.sh", "resource": "queues", "name": "t"},
    }


def test_a_job_command_asks_for_update_on_the_job_in_the_commands_namespace() -> None:
    review = bus.access_review(bus.order(command()), bus.Author("alice"))
    assert review["spec"] == {
        "user": "alice",
        "resourceAttributes": {
            "verb": "update",
            "group": "batch.volcano.sh",
            "resource": "jobs",
            "namespace": "team",
            "name": "t",
        },
    }


def test_a_job_in_another_namespace_is_refused_outright() -> None:
    with pytest.raises(errors.ForbiddenError, match="in another namespace: a Command acts only on Jobs in its own"):
        bus.order(command(namespace="other"))
    assert bus.order(command(namespace="team")).namespace == "team"


def test_a_uid_that_is_not_the_object_found_is_refused() -> None:
    order = bus.order(command())
    bus.same_target(order, {"metadata": {"uid": "u-t"}})
    with pytest.raises(errors.ForbiddenError, match="target uid u-t is not Job team/t"):
        bus.same_target(order, {"metadata": {"uid": "u-other"}})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"metadata": {"annotations": {keys.COMMAND_AUTHOR: '{"username":"root"}'}}}, "cannot be changed"),
        ({"metadata": {}}, "cannot be changed"),
        ({"action": "ResumeJob"}, "action cannot be changed"),
        ({"target": {"kind": "Queue", "name": "default"}}, "target cannot be changed"),
    ],
)
def test_an_update_keeps_author_action_and_target(change: dict[str, Any], message: str) -> None:
    old = command(author=bus.record(EDITOR))
    with pytest.raises(errors.ForbiddenError, match=message):
        bus.unchanged(old, {**old, **change})
    bus.unchanged(old, {**old, "metadata": {**old["metadata"], "labels": {"a": "b"}}})
