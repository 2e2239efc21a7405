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
