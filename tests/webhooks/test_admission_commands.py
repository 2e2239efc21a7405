"""Admission of bus.volcano.sh Commands: the author recorded from userInfo on CREATE, whatever the
request carried; author, action and target held on UPDATE."""

from __future__ import annotations

import base64
import json
from typing import Any

from bridge import bus, keys
from tests.support import admission as support

BUS = ("bus.volcano.sh", "v1alpha1", "Command")
PATH = "/mutate/bus-volcano-sh-command"
ALICE = {"username": "alice", "uid": "u-a", "groups": ["team-a-editors", "system:authenticated"]}


def command(annotations: dict[str, str] | None = None, action: str = "CloseQueue") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "default-closequeue-x", "namespace": "team-a"}
    if annotations is not None:
        meta["annotations"] = annotations
    target = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "default", "uid": "q"}
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": meta,
        "action": action,
        "target": target,
    }


def patched(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response["allowed"] is True, response
    out: list[dict[str, Any]] = json.loads(base64.b64decode(response["patch"]))
    return out


def test_a_create_records_the_requests_user() -> None:
    ops = patched(support.answer(support.review(command(), kind=BUS, user=ALICE), PATH))
    assert ops == [{"op": "add", "path": "/metadata/annotations", "value": {keys.COMMAND_AUTHOR: bus.record(ALICE)}}]


def test_a_forged_author_is_overwritten_and_other_annotations_kept() -> None:
    forged = command({keys.COMMAND_AUTHOR: json.dumps({"username": "system:admin"}), "note": "mine"})
    ops = patched(support.answer(support.review(forged, kind=BUS, user=ALICE), PATH))
    assert ops == [
        {"op": "replace", "path": "/metadata/annotations/vbridge.io~1command-author", "value": bus.record(ALICE)}
    ]


def test_a_create_without_a_user_is_denied() -> None:
    response = support.answer(support.review(command(), kind=BUS), PATH)
    assert response["allowed"] is False and "names no user" in response["status"]["message"]


def test_an_update_that_changes_the_author_or_the_target_is_denied() -> None:
    made = command({keys.COMMAND_AUTHOR: bus.record(ALICE)})
    forged = command({keys.COMMAND_AUTHOR: bus.record({"username": "admin", "groups": ["system:masters"]})})
    denied = support.answer(support.review(forged, kind=BUS, operation="UPDATE", old=made, user=ALICE), PATH)
    assert denied["allowed"] is False and denied["status"]["code"] == 403
    assert "command-author is written by admission and cannot be changed" in denied["status"]["message"]
    added = support.answer(support.review(made, kind=BUS, operation="UPDATE", old=command(), user=ALICE), PATH)
    assert added["allowed"] is False, "an author added to a Command made while the webhook was down"
    moved = command({keys.COMMAND_AUTHOR: bus.record(ALICE)}, action="OpenQueue")
    answer = support.answer(support.review(moved, kind=BUS, operation="UPDATE", old=made, user=ALICE), PATH)
    assert answer["allowed"] is False and "action cannot be changed" in answer["status"]["message"]


def test_an_update_that_keeps_them_is_allowed_unchanged() -> None:
    made = command({keys.COMMAND_AUTHOR: bus.record(ALICE)})
    labelled = {**made, "metadata": {**made["metadata"], "labels": {"a": "b"}}}
    response = support.answer(support.review(labelled, kind=BUS, operation="UPDATE", old=made, user=ALICE), PATH)
    assert response["allowed"] is True and "patch" not in response
