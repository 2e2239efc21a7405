"""Correcting a PodGroup that exists already: table cases of (existing, desired) -> merge patch.

``None`` means unchanged. The patch always carries the resourceVersion it was computed from.
"""

from __future__ import annotations

from typing import Any

import pytest

from bridge import podgroups

OWNER = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "j", "uid": "u-job", "controller": True}


def ours(**spec: Any) -> dict[str, Any]:
    group = podgroups.build(
        name="j", namespace="ns", min_member=3, queue="default", min_resources={"cpu": "3", "memory": "3Gi"}
    )
    group["spec"].update(spec)
    group["metadata"]["ownerReferences"] = [OWNER]
    return group


def existing(spec: dict[str, Any], *, labels: dict[str, str] | None = None, owners: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "j", "namespace": "ns", "resourceVersion": "7"}
    if labels is not None:
        meta["labels"] = labels
    if owners is not None:
        meta["ownerReferences"] = owners
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec}


CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool, dict[str, Any] | None]] = [
    (
        "our own group, unchanged",
        existing(ours()["spec"], labels={"vbridge.io/managed-by": "volcano-bridge"}, owners=[OWNER]),
        ours(),
        False,
        None,
    ),
    (
        "operator-made group with another minMember and no minResources: ours win, we become an owner",
        existing({"minMember": 1, "queue": "default"}, owners=[]),
        ours(),
        False,
        {
            "metadata": {"resourceVersion": "7", "ownerReferences": [OWNER]},
            "spec": {"minMember": 3, "minResources": {"cpu": "3", "memory": "3Gi"}},
        },
    ),
    (
        "a group with extra labels, annotations and spec fields: all kept, nothing to write",
        {
            **existing({**ours()["spec"], "networkTopology": {"mode": "hard"}}, labels={"team": "a"}, owners=[OWNER]),
        },
        ours(),
        False,
        None,
    ),
    (
        "minResources with a key we do not want: nulled in the merge patch",
        existing(
            {**ours()["spec"], "minResources": {"cpu": "3", "memory": "3Gi", "nvidia.com/gpu": "1"}}, owners=[OWNER]
        ),
        ours(),
        False,
        {
            "metadata": {"resourceVersion": "7"},
            "spec": {"minResources": {"nvidia.com/gpu": None, "cpu": "3", "memory": "3Gi"}},
        },
    ),
    (
        "a queue of ours left unset never clears the group's",
        existing({**ours()["spec"], "queue": "gpu"}, owners=[OWNER]),
        {**ours(), "spec": {k: v for k, v in ours()["spec"].items() if k != "queue"}},
        False,
        None,
    ),
    (
        "fill only (a user's template made it): only the empty owned fields are filled",
        existing({"minMember": 5, "queue": "spark", "minResources": {}}, owners=[]),
        ours(priorityClassName="high"),
        True,
        {
            "metadata": {"resourceVersion": "7", "ownerReferences": [OWNER]},
            "spec": {"minResources": {"cpu": "3", "memory": "3Gi"}, "priorityClassName": "high"},
        },
    ),
    (
        "a second controller owner is added as a plain owner",
        existing(ours()["spec"], owners=[{**OWNER, "uid": "u-driver", "kind": "Pod"}]),
        ours(),
        False,
        {
            "metadata": {
                "resourceVersion": "7",
                "ownerReferences": [{**OWNER, "uid": "u-driver", "kind": "Pod"}, {**OWNER, "controller": False}],
            }
        },
    ),
]


@pytest.mark.parametrize(
    ("current", "desired", "fill_only", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_correction(
    current: dict[str, Any], desired: dict[str, Any], fill_only: bool, expected: dict[str, Any] | None
) -> None:
    assert podgroups.correction(current, desired, fill_only=fill_only) == expected


def test_build_puts_our_label_first_and_leaves_out_what_is_unset() -> None:
    group = podgroups.build(name="g", namespace="ns", min_member=1, queue="q", labels={"team": "a"})
    assert group["metadata"]["labels"] == {"vbridge.io/managed-by": "volcano-bridge", "team": "a"}
    assert group["spec"] == {"minMember": 1, "queue": "q"}


def test_describe_is_how_events_write_a_group() -> None:
    group = {
        "metadata": {"name": "pi-pg"},
        "spec": {"minMember": 3, "queue": "ml", "minResources": {"cpu": "3", "memory": "6144Mi"}},
    }
    assert podgroups.describe(group) == "PodGroup pi-pg: minMember 3, queue ml, minResources cpu 3, memory 6Gi"
    group["spec"] |= {"minTaskMember": {"worker": 2, "ps": 1}, "priorityClassName": "high", "minResources": {}}
    assert podgroups.describe(group) == (
        "PodGroup pi-pg: minMember 3, queue ml, minTaskMember ps 1, worker 2, priorityClassName high, "
        "minResources nothing"
    )
