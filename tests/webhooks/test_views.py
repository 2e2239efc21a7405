"""A pod review decoded through the adapter's view gets the very answer the whole pod gets.

The view (``bridge.adapters.podview``) builds only the fields the pod adapters read; if an adapter
ever reads a field the view leaves out, these tests see a different answer.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

import hypothesis
import hypothesis.strategies as st
import pytest
import yaml

from bridge.adapters import base, registry
from tests.support import admission as support
from webhooks import admission, reviews

GOLDEN = pathlib.Path(__file__).parents[1] / "bridge" / "adapters" / "golden"
VIEWED = [a for a in registry.ADAPTERS if a.registration.view is not None]


@dataclasses.dataclass(frozen=True)
class WholeObject:
    """The same adapter without its view: the careful path, the whole object."""

    inner: base.Adapter

    @property
    def registration(self) -> base.Registration:
        return dataclasses.replace(self.inner.registration, view=None)

    def admit(self, obj: dict[str, Any], ctx: base.Context) -> base.Admission | None:
        return self.inner.admit(obj, ctx)

    def podgroup(self, obj: dict[str, Any], ctx: base.Context) -> dict[str, Any] | None:
        return self.inner.podgroup(obj, ctx)

    def finished(self, obj: dict[str, Any]) -> bool:
        return self.inner.finished(obj)


def both(raw: bytes, adapter: base.Adapter) -> tuple[dict[str, Any], dict[str, Any]]:
    viewed = json.loads(admission.handle(raw, adapter, support.Facts()))
    whole = json.loads(admission.handle(raw, WholeObject(adapter), support.Facts()))
    return viewed, whole


def test_only_pod_adapters_have_views() -> None:
    assert {a.registration.name for a in VIEWED} == {"spark.apache.org/pod", "kubeflow.org/pod", "jobset.x-k8s.io/pod"}


def test_the_view_leaves_out_what_the_adapters_do_not_read() -> None:
    pod = {"metadata": {"name": "p", "uid": "x", "managedFields": [{}]}, "spec": {"containers": [{"env": []}]}}
    request = reviews.parse(support.review(pod, kind=support.POD), VIEWED[0].registration.view)
    assert request.object == {"metadata": {"name": "p"}, "spec": {"containers": [{}]}}


GOLDEN_PODS = [p for p in sorted(GOLDEN.glob("*.yaml")) if yaml.safe_load(p.read_text())["input"].get("kind") == "Pod"]


@pytest.mark.parametrize("path", GOLDEN_PODS, ids=[p.stem for p in GOLDEN_PODS])
def test_golden_pods_get_the_same_answer_through_the_view(path: pathlib.Path) -> None:
    pod = yaml.safe_load(path.read_text())["input"]
    for adapter in VIEWED:
        viewed, whole = both(support.review(pod, kind=support.POD), adapter)
        assert viewed == whole


def test_what_does_not_fit_the_view_takes_the_careful_path() -> None:
    pod = {"metadata": {"name": "p", "labels": {"spark-role": 1}}, "spec": {}}
    for adapter in VIEWED:
        viewed, whole = both(support.review(pod, kind=support.POD), adapter)
        assert viewed == whole


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_labels = st.dictionaries(
    st.sampled_from(
        [
            "spark-role",
            "spark-app-selector",
            "sparkoperator.k8s.io/app-name",
            "sparkoperator.k8s.io/launched-by-spark-operator",
            "training.kubeflow.org/job-name",
            "training.kubeflow.org/replica-type",
            "training.kubeflow.org/job-role",
            "app",
        ]
    ),
    st.sampled_from(["driver", "executor", "true", "spark-1", "Worker", "x"]),
)
_annotations = st.dictionaries(
    st.sampled_from(["scheduling.k8s.io/group-name", "volcano.sh/task-spec", "vbridge.io/podgroup-template", "a/b"]),
    st.sampled_from(["spark-x-pg", "g", "spark-1-podgroup"]),
)
_args = st.one_of(
    st.none(),
    st.lists(st.sampled_from(["driver", "executor", "--conf", "a=b", "--properties-file", "/p"]), max_size=5),
)


_SPARK_DRIVER = {"spark-role": "driver", "spark-app-selector": "spark-1"}
_SPARK_EXECUTOR = {"spark-role": "executor", "spark-app-selector": "spark-1"}
_KUBEFLOW = {"training.kubeflow.org/job-name": "j", "training.kubeflow.org/replica-type": "Worker"}


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", **draw(st.dictionaries(st.sampled_from(["uid", "finalizers"]), _json))}
    profile = draw(st.sampled_from([_SPARK_DRIVER, _SPARK_EXECUTOR, _KUBEFLOW, {}]))
    if profile or draw(st.booleans()):
        meta["labels"] = {**profile, **draw(_labels)} if draw(st.booleans()) else dict(profile)
    if draw(st.booleans()):
        meta["annotations"] = draw(_annotations)
    containers = []
    for _ in range(draw(st.integers(0, 2))):
        container: dict[str, Any] = {"name": "c", "env": draw(_json)}
        if (args := draw(_args)) is not None:
            container["args"] = args
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers, "volumes": draw(_json)}
    if draw(st.integers(0, 3)):
        spec["schedulerName"] = draw(st.sampled_from(["volcano", "volcano", "default-scheduler", "yunikorn"]))
    if draw(st.booleans()):
        spec["schedulingGates"] = draw(st.lists(st.sampled_from([{"name": "vbridge.io/podgroup"}, {"name": "x"}])))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": draw(_json)}


@hypothesis.given(pods())
@hypothesis.settings(max_examples=300, deadline=None)
def test_any_pod_gets_the_same_answer_through_the_view(pod: dict[str, Any]) -> None:
    for adapter in VIEWED:
        viewed, whole = both(support.review(pod, kind=support.POD), adapter)
        assert viewed == whole


def test_deep_nesting_is_refused_on_either_path_not_raised() -> None:
    depth = 1500
    raw = support.review({"metadata": {"name": "p"}, "spec": {"x": "@@"}}, kind=support.POD).replace(
        b'"@@"', b"[" * depth + b'"x"' + b"]" * depth
    )
    for adapter in VIEWED:
        viewed, whole = both(raw, adapter)
        assert viewed == whole
        assert viewed["response"]["allowed"] is False
