"""Objects that do not fit what their adapter reads are denied naming the member, never an
internal error; the cases are the ones the fuzz (tests/reliability/test_fuzz.py) found."""

from __future__ import annotations

import base64
import json
from typing import Any

import jsonpatch
import pytest

from bridge import keys, queues
from bridge.adapters import registry
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import admission as support

SPARK = ("sparkoperator.k8s.io", "v1beta2", "SparkApplication")
SPARK_PATH = "/mutate/sparkoperator-k8s-io-sparkapplication"
JOB = ("batch.volcano.sh", "v1alpha1", "Job")
JOB_PATH = "/mutate/batch-volcano-sh-job"


def _with(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    node = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    ("kind", "path", "obj", "message"),
    [
        (
            SPARK,
            SPARK_PATH,
            _with(spark.app(batchScheduler="volcano"), ("spec", "executor"), "big"),
            "SparkApplication $.spec.executor: expected object, got str",
        ),
        (
            SPARK,
            SPARK_PATH,
            _with(spark.app(batchScheduler="volcano"), ("spec", "driver", "annotations"), ["a"]),
            "SparkApplication $.spec.driver.annotations: expected object, got array",
        ),
        (
            support.TF,
            support.TF_PATH,
            _with(kf.tfjob("t", Worker=kf.replica(1)), ("spec", "tfReplicaSpecs", "Worker", "template"), "x"),
            "TFJob $.spec.tfReplicaSpecs.Worker.template: expected object, got str",
        ),
        (
            support.TF,
            support.TF_PATH,
            _with(kf.tfjob("t", Worker=kf.replica(1)), ("spec", "runPolicy"), {"schedulingPolicy": {"queue": {}}}),
            "TFJob $.spec.runPolicy.schedulingPolicy.queue: expected str, got object",
        ),
        (
            JOB,
            JOB_PATH,
            _with(vcjob.simple("v"), ("spec", "queue"), {"replicas": True}),
            "Job $.spec.queue: expected str, got object",
        ),
        (
            JOB,
            JOB_PATH,
            _with(vcjob.simple("v"), ("metadata", "labels"), {"a": "b", "app.kubernetes.io/name": 5}),
            'Job $.metadata.labels["app.kubernetes.io/name"]: expected str, got int',
        ),
        (
            JOB,
            JOB_PATH,
            _with(vcjob.simple("v"), ("metadata", "annotations"), "x"),
            "Job $.metadata.annotations: expected object, got str",
        ),
        (
            JOB,
            JOB_PATH,
            _with(vcjob.simple("v"), ("spec", "policies"), [{"events": 0.5, "action": "RestartJob"}]),
            "Job $.spec.policies[0].events: expected array, got float",
        ),
        (
            JOB,
            JOB_PATH,
            _with(vcjob.simple("v"), ("spec", "volumes"), [{"mountPath": ["/a"]}]),
            "Job $.spec.volumes[0].mountPath: expected str, got array",
        ),
    ],
)
def test_a_member_of_the_wrong_json_type_is_denied_naming_it(
    kind: tuple[str, str, str], path: str, obj: dict[str, Any], message: str
) -> None:
    for operation in ("CREATE", "UPDATE"):
        out = support.answer(support.review(obj, kind=kind, operation=operation), path)
        assert out["allowed"] is False and out["status"]["code"] == 400, out
        assert out["status"]["message"] == f"volcano-bridge: {message}"


def test_an_object_being_deleted_is_allowed_even_when_it_does_not_fit() -> None:
    dying = _with(spark.app(batchScheduler="volcano"), ("spec", "executor"), "big")
    dying["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    out = support.answer(support.review(dying, kind=SPARK, operation="UPDATE", old=dying), SPARK_PATH)
    assert out == {"uid": "u-1", "allowed": True}  # its finalizers must be able to come off


def test_members_set_to_null_are_as_good_as_absent() -> None:
    app = _with(spark.app(batchScheduler="volcano"), ("spec", "executor"), None)
    app["spec"]["sparkConf"] = None
    out = support.answer(support.review(app, kind=SPARK), SPARK_PATH)
    assert out["allowed"] is True, out
    patched = jsonpatch.apply_patch(app, json.loads(base64.b64decode(out["patch"])))
    assert patched["spec"]["executor"]["annotations"] == {keys.GROUP_NAME: "spark-pi-pg"}
    assert patched["spec"]["sparkConf"] == {"spark.kubernetes.scheduler.name": "volcano"}


def test_an_update_whose_old_object_does_not_fit_is_judged_as_a_create() -> None:
    facts = support.Facts(default=queues.QueueFacts(), gpu=queues.QueueFacts(state="Closed"))
    job = kf.tfjob("t", Worker=kf.replica(1))
    job["spec"]["runPolicy"] = {"schedulingPolicy": {"queue": "gpu"}}
    good_old = json.loads(json.dumps(job))
    unchanged = support.answer(
        support.review(job, kind=support.TF, operation="UPDATE", old=good_old), support.TF_PATH, facts
    )
    assert unchanged["allowed"] is True, unchanged  # the queue was left as it was: not judged again
    bad_old = _with(json.loads(json.dumps(job)), ("spec", "tfReplicaSpecs"), "x")
    out = support.answer(support.review(job, kind=support.TF, operation="UPDATE", old=bad_old), support.TF_PATH, facts)
    assert out["allowed"] is False and out["status"]["code"] == 403, out  # the queue judged, as on CREATE
    assert "queue 'gpu' is Closed" in out["status"]["message"]


@pytest.mark.parametrize("path", [SPARK_PATH, JOB_PATH])
def test_an_object_nested_past_the_recursion_limit_is_denied_not_an_internal_error(path: str) -> None:
    """Adapters that copy the whole object (a Kubeflow job's is stamped without a copy: allowed)."""
    adapter = registry.by_path(path)
    assert adapter is not None
    reg = adapter.registration
    kind = (reg.group, reg.versions[0], reg.kind)
    seeds = {SPARK_PATH: spark.app(batchScheduler="volcano"), JOB_PATH: vcjob.simple("v")}
    obj = seeds[path]
    deep: Any = {}
    for _ in range(600):  # under the parsers' limits, past what copying the object can walk
        deep = {"a": deep}
    obj["spec"]["extra"] = deep
    out = support.answer(support.review(obj, kind=kind), path)
    assert out["allowed"] is False and out["status"]["code"] == 400, out
    assert out["status"]["message"] == "volcano-bridge: the object is nested too deeply to review (hundreds of levels)"


@pytest.mark.parametrize("path", ["/mutate/spark-apache-org-pod", "/mutate/kubeflow-org-pod"])
def test_a_pod_named_by_generate_name_fits(path: str) -> None:
    """Pods created with ``generateName`` reach admission without a name (Deployments' pods, and
    anything a controller names that way): the shape check must let them through."""
    pod = {
        "metadata": {"generateName": "web-", "namespace": "team-a", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    out = support.answer(support.review(pod, kind=support.POD), path)
    assert out["allowed"] is True and "patch" not in out
