"""``views.View``: lists and watch events hold only the shape's members, pages keep their token."""

from __future__ import annotations

from typing import Any, TypedDict

import msgspec
import orjson
import pytest

from bridge.k8s import views


class Meta(TypedDict, total=False):
    name: str
    resourceVersion: str


class Thing(TypedDict, total=False):
    metadata: Meta
    spec: Any


VIEW = views.View(Thing)


def test_a_list_keeps_the_shape_and_the_page_token() -> None:
    body = {
        "kind": "ThingList",
        "metadata": {"resourceVersion": "12", "continue": "abc", "remainingItemCount": 3},
        "items": [{"metadata": {"name": "a", "managedFields": [{}]}, "spec": {"x": [1, {"y": 2}]}, "status": {}}],
    }
    assert VIEW.list(orjson.dumps(body)) == {
        "metadata": {"resourceVersion": "12", "continue": "abc"},
        "items": [{"metadata": {"name": "a"}, "spec": {"x": [1, {"y": 2}]}}],
    }
    assert VIEW.list(b'{"metadata": {"resourceVersion": "3"}, "items": []}') == {
        "metadata": {"resourceVersion": "3"},
        "items": [],
    }


def test_an_object_that_does_not_fit_is_an_error_not_a_guess() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"metadata\.name"):
        VIEW.event(orjson.dumps({"type": "ADDED", "object": {"metadata": {"name": 5}}}))
    with pytest.raises(ValueError):
        VIEW.list(b"{not json")


def test_a_bookmark_is_read_before_its_object_meets_the_shape() -> None:
    """A pod bookmark carries ``spec.containers: null``, which the scheduler's pod view refuses."""
    from scheduler.io import reads

    line = orjson.dumps(
        {
            "type": "BOOKMARK",
            "object": {"kind": "Pod", "metadata": {"resourceVersion": "77"}, "spec": {"containers": None}},
        }
    )
    event = reads.PODS.event(line)
    assert event["type"] == "BOOKMARK"
    assert event["object"]["metadata"] == {"resourceVersion": "77"}
    error = reads.PODS.event(b'{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}')
    assert error["object"]["code"] == 410
    with pytest.raises(msgspec.ValidationError, match=r"spec\.containers"):
        reads.PODS.event(orjson.dumps({"type": "MODIFIED", "object": {"spec": {"containers": None}}}))


def test_an_item_decodes_through_the_shape_and_whole_keeps_everything() -> None:
    raw = orjson.dumps({"metadata": {"name": "a", "uid": "u"}, "spec": 1, "status": {}})
    assert VIEW.item(raw) == {"metadata": {"name": "a"}, "spec": 1}
    assert views.WHOLE.item(raw) == {"metadata": {"name": "a", "uid": "u"}, "spec": 1, "status": {}}
    assert views.WHOLE.event(b'{"type":"ADDED","object":{"x":1}}') == {"type": "ADDED", "object": {"x": 1}}


def test_too_deep_is_undecodable_for_both() -> None:
    deep = b'{"metadata":{"name":"d"},"spec":' + b'{"a":' * 2000 + b"1" + b"}" * 2000 + b"}"
    for decode in (VIEW.item, views.WHOLE.item):
        with pytest.raises(views.UNDECODABLE):
            decode(deep)
