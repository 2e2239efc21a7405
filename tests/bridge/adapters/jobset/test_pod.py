"""A JobSet's pod on the native backend gets back the schedulingGroup its controller dropped."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import errors, keys
from bridge.adapters import base
from bridge.adapters.jobset import pod as jobset_pod

POD = jobset_pod.JobSetPodAdapter()
NATIVE = base.Context(namespace="team", backend="native")


def pod(annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "ds-launcher-0-0",
            "namespace": "team",
            "labels": {jobset_pod.JOBSET_NAME: "ds"},
            "annotations": annotations or {},
        },
        "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
    }


def test_a_later_stages_pod_joins_its_stages_native_group() -> None:
    got = POD.admit(pod({keys.GROUP_NAME: "ds", keys.NATIVE_GROUP: "ds-stage-2"}), NATIVE)
    assert got is not None
    spec = got.desired["spec"]
    assert spec["schedulingGroup"] == {"podGroupName": "ds-stage-2"}
    assert {"name": keys.QUEUE_GATE} in spec["schedulingGates"] and spec["schedulerName"] == "default-scheduler"


def test_a_first_stages_pod_joins_the_group_named_as_ours() -> None:
    got = POD.admit(pod({keys.GROUP_NAME: "ds"}), NATIVE)
    assert got is not None and got.desired["spec"]["schedulingGroup"] == {"podGroupName": "ds"}


@pytest.mark.parametrize(
    ("annotations", "spec", "ctx"),
    [
        ({keys.GROUP_NAME: "ds"}, {}, base.Context(namespace="team")),  # volcano: the template had it all
        ({}, {}, NATIVE),  # a JobSet made before us: not ours
        ({keys.GROUP_NAME: "ds"}, {"schedulingGroup": {"podGroupName": "ds"}}, NATIVE),  # kept it
        ({keys.GROUP_NAME: "ds"}, {"schedulerName": "their-scheduler"}, NATIVE),  # the user's choice
    ],
)
def test_nothing_to_complete(annotations: dict[str, str], spec: dict[str, Any], ctx: base.Context) -> None:
    assert POD.admit(pod(annotations, **spec), ctx) is None


def test_its_quantities_are_judged_even_when_nothing_is_completed() -> None:
    bad = pod(containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1e-999999999"}}}])
    with pytest.raises(errors.BridgeError):
        POD.admit(bad, base.Context(namespace="team"))
