"""bridge.patching: the patch turns the original into the desired body, and touches nothing else."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge import patching

KEYS = st.sampled_from(["a", "b", "c", "x/y", "m~n", "schedulerName", ""])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False), st.text(max_size=3)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=20,
)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=5)


@settings(max_examples=400, deadline=None)
@given(OBJECTS, OBJECTS)
def test_patch_applies_to_the_desired_body(original: dict[str, Any], desired: dict[str, Any]) -> None:
    before = copy.deepcopy(original)
    ops = patching.diff(original, desired)
    assert original == before, "diff must not change its input"
    assert jsonpatch.apply_patch(original, ops) == desired
    assert (ops == []) == (jsonpatch.JsonPatch.from_diff(original, desired).patch == [])


@settings(max_examples=200, deadline=None)
@given(OBJECTS, st.lists(st.tuples(st.lists(KEYS, min_size=1, max_size=3), JSON), max_size=3))
def test_copy_on_write_edits_patch_only_what_changed(original: dict[str, Any], edits: list[Any]) -> None:
    desired = original
    for path, value in edits:
        desired = patching.assoc(desired, path, value)
    ops = patching.diff(original, desired)
    assert jsonpatch.apply_patch(original, ops) == desired
    assert patching.diff(desired, desired) == []


def test_json_types_are_compared_as_json() -> None:
    assert patching.diff({"n": 1}, {"n": 1.0}) == [{"op": "replace", "path": "/n", "value": 1.0}]
    assert patching.diff({"n": 1}, {"n": True}) == [{"op": "replace", "path": "/n", "value": True}]
    assert patching.diff({"n": [1]}, {"n": [1]}) == []


def test_members_are_patched_in_member_order_with_escaped_pointers() -> None:
    original = {"metadata": {"name": "p", "labels": {"a/b": "1", "gone": "x"}}, "spec": {"gates": [{"name": "g"}]}}
    desired = {
        "metadata": {"name": "p", "labels": {"a/b": "2"}, "annotations": {"k": "v"}},
        "spec": {"gates": [], "schedulerName": "volcano"},
    }
    assert patching.diff(original, desired) == [
        {"op": "remove", "path": "/metadata/labels/gone"},
        {"op": "replace", "path": "/metadata/labels/a~1b", "value": "2"},
        {"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}},
        {"op": "remove", "path": "/spec/gates/0"},
        {"op": "add", "path": "/spec/schedulerName", "value": "volcano"},
    ]
