"""One review in, one answer out: bad input is always a clear answer, never an exception."""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
from typing import Any

import hypothesis
import hypothesis.strategies as st
import jsonpatch
import pytest

from bridge import errors, queues
from bridge import facts as cluster_facts
from bridge.adapters import base, registry
from tests.builders import kubeflow as kf
from tests.builders import spark
from tests.support import admission as support
from webhooks import admission

TF, TF_PATH, POD = support.TF, support.TF_PATH, support.POD
answer, review = support.answer, support.review


def test_mutation_is_a_json_patch_that_applies_and_is_idempotent() -> None:
    job = kf.tfjob("mnist", Worker=kf.replica(2, kf.container("tensorflow", "1", "1Gi")))
    job["metadata"].pop("namespace")
    first = answer(review(job, kind=TF), TF_PATH)
    assert first["allowed"] and first["uid"] == "u-1" and first["patchType"] == "JSONPatch"
    patched = jsonpatch.apply_patch(job, json.loads(base64.b64decode(first["patch"])))
    assert "namespace" not in patched["metadata"]
    assert patched["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] == "volcano"
    second = answer(review(patched, kind=TF), TF_PATH)
    assert second == {"uid": "u-1", "allowed": True}


def test_bad_objects_are_denied_with_a_message() -> None:
    bad = answer(review(kf.tfjob("x", Worker=kf.replica(-1)), kind=TF), TF_PATH)
    assert bad["allowed"] is False and bad["status"]["code"] == 400
    assert "replicas must be a non-negative integer" in bad["status"]["message"]
    wrong_type = answer(review({"metadata": {"name": "x"}, "spec": {"tfReplicaSpecs": ["Worker"]}}, kind=TF), TF_PATH)
    assert wrong_type["allowed"] is False and "tfReplicaSpecs" in wrong_type["status"]["message"]
    no_meta = answer(review({"spec": {}}, kind=TF), TF_PATH)
    assert no_meta["allowed"] is False and "no metadata" in no_meta["status"]["message"]


def test_queue_denial_is_403_naming_the_queues_to_use() -> None:
    app = spark.app(batchScheduler="volcano", batchSchedulerOptions={"queue": "gpu"})
    raw = review(app, kind=("sparkoperator.k8s.io", "v1beta2", "SparkApplication"))
    out = json.loads(
        admission.handle(
            raw,
            registry.by_path("/mutate/sparkoperator-k8s-io-sparkapplication"),
            support.Facts(default=queues.QueueFacts(), gpu=queues.QueueFacts(state="Closed")),
        )
    )["response"]
    assert out["allowed"] is False and out["status"]["code"] == 403
    assert out["status"]["message"] == (
        "volcano-bridge: queue 'gpu' is Closed, not Open: it takes no new jobs; "
        "queues open to namespace 'team-a': default"
    )


def test_unknown_versions_and_operations_are_allowed() -> None:
    old = answer(review({"metadata": {"name": "x"}}, kind=("kubeflow.org", "v1alpha1", "TFJob")), TF_PATH)
    assert old["allowed"] and "does not handle kubeflow.org/v1alpha1 TFJob" in old["warnings"][0]
    delete = answer(review(kf.tfjob("x", Worker=kf.replica(-1)), kind=TF, operation="DELETE"), TF_PATH)
    assert delete == {"uid": "u-1", "allowed": True}


def test_an_unknown_path_is_an_error_never_an_allow() -> None:
    """A mistyped URL in a Fail webhook must not turn every check into "allowed"."""
    out = answer(review({"metadata": {}}, kind=TF), "/mutate/not-installed")
    assert out["uid"] == "u-1" and out["allowed"] is False
    assert out["status"]["code"] == 404 and "no webhook at that path" in out["status"]["message"]


def test_a_body_nested_past_the_parsers_limits_is_denied_with_its_uid() -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    raw = b'{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"abc-1","object":' + nested
    out = json.loads(admission.handle(raw + b"}}", registry.by_path(TF_PATH), support.Facts()))["response"]
    assert out["uid"] == "abc-1" and out["allowed"] is False


def test_denials_do_not_echo_unbounded_input() -> None:
    job = kf.tfjob("x", Worker=kf.replica(1))
    job["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "q" * 100_000}  # named in the denial
    out = answer(review(job, kind=TF), TF_PATH)
    message = out["status"]["message"]
    assert out["allowed"] is False and "qqqq" in message and len(message) <= 1024


def test_malformed_reviews_are_denied_not_raised() -> None:
    for raw, expected in [
        (b"not json", "body is not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"kind": "Pod"}', "kind must be AdmissionReview"),
        (b'{"kind": "AdmissionReview", "request": {"uid": 5}}', "request.uid must be a str"),
        (b'{"kind": "AdmissionReview", "request": {"uid": "a", "kind": "x"}}', "request.kind must be a dict"),
    ]:
        out = json.loads(admission.handle(raw, registry.by_path(TF_PATH), support.Facts()))["response"]
        assert out["allowed"] is False and expected in out["status"]["message"], raw


@dataclasses.dataclass(frozen=True)
class Broken:
    """A registered adapter whose ``admit`` fails as a bug would (not with a BridgeError)."""

    registration: base.Registration
    failure: Exception

    def admit(self, obj: Any, ctx: base.Context) -> base.Admission | None:
        raise self.failure

    def podgroup(self, obj: Any, ctx: base.Context) -> dict[str, Any] | None:
        return None

    def finished(self, obj: Any) -> bool:
        return False

    def queue_of(self, obj: Any, ctx: base.Context) -> str | None:
        return None


def _by_path(path: str) -> base.Adapter:
    adapter = registry.by_path(path)
    assert adapter is not None
    return adapter


def test_a_bug_never_blocks_pods() -> None:
    broken = Broken(_by_path("/mutate/spark-apache-org-pod").registration, KeyError("boom"))
    raw = review(spark.submit_pod("driver"), kind=POD)
    out = json.loads(admission.handle(raw, broken, support.Facts()))["response"]
    assert out["allowed"] is True and "patch" not in out
    assert out["warnings"] == ["volcano-bridge internal error: KeyError: 'boom' (admitted without gang scheduling)"]


def test_a_bugs_log_line_says_where_not_what_the_object_held(caplog: pytest.LogCaptureFixture) -> None:
    secret = "tok-3f9c2d7e1b"
    broken = Broken(_by_path("/mutate/spark-apache-org-pod").registration, KeyError(f"env value {secret}"))
    with caplog.at_level(logging.DEBUG):
        admission.handle(review(spark.submit_pod("driver"), kind=POD), broken, support.Facts())
    assert "admission failed unexpectedly: KeyError" in caplog.text and "in admit" in caplog.text
    assert secret not in caplog.text


@pytest.mark.parametrize(
    "path", [a.registration.path for a in registry.ADAPTERS if a.registration.failure_policy == "Fail"]
)
def test_a_bug_blocks_fail_kinds_with_a_500_denial(path: str) -> None:
    """A Fail kind let through by our bug would run without its gang: denied, as if we were down."""
    reg = _by_path(path).registration
    broken = Broken(reg, RuntimeError("facts not synced"))
    raw = review({"metadata": {"name": "x"}, "spec": {}}, kind=(reg.group, reg.versions[0], reg.kind))
    out = json.loads(admission.handle(raw, broken, support.Facts()))["response"]
    assert out["allowed"] is False and out["uid"] == "u-1"
    assert out["status"]["code"] == 500
    assert out["status"]["message"] == "volcano-bridge internal error: RuntimeError: facts not synced"


def test_a_bridge_error_is_a_denial_with_its_code_whatever_the_policy() -> None:
    for path in ("/mutate/spark-apache-org-pod", TF_PATH):
        broken = Broken(_by_path(path).registration, errors.QueueError("queue 'x' does not exist"))
        reg = broken.registration
        raw = review({"metadata": {"name": "x"}}, kind=(reg.group, reg.versions[0], reg.kind))
        out = json.loads(admission.handle(raw, broken, support.Facts()))["response"]
        assert out["allowed"] is False and out["status"]["code"] == 403
        assert out["status"]["message"] == "volcano-bridge: queue 'x' does not exist"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    body=json_values,
    kind=st.sampled_from([TF, ("", "v1", "Pod"), ("sparkoperator.k8s.io", "v1beta2", "SparkApplication")]),
    path=st.sampled_from([a.registration.path for a in registry.ADAPTERS]),
)
def test_fuzz_any_object_gets_an_answer(body: Any, kind: tuple[str, str, str], path: str) -> None:
    out = json.loads(admission.handle(review(body, kind=kind), registry.by_path(path), support.Facts()))
    assert out["kind"] == "AdmissionReview" and out["response"]["uid"] == "u-1"
    assert isinstance(out["response"]["allowed"], bool)
    if not out["response"]["allowed"]:
        assert out["response"]["status"]["message"]


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(raw=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_fuzz_review_parser_never_raises_unexpected(raw: bytes) -> None:
    out = json.loads(admission.handle(raw, registry.by_path(TF_PATH), support.Facts()))
    assert out["response"]["allowed"] in (True, False)


def test_before_the_facts_are_synced_fail_kinds_are_denied_and_pods_pass() -> None:
    """An empty cache knows no queue: a job is refused (the apiserver retries), never admitted ungated."""
    unsynced = cluster_facts.Facts()
    assert unsynced.synced is False
    job = answer(review(kf.tfjob("x", Worker=kf.replica(1)), kind=TF), TF_PATH, unsynced)
    assert job["allowed"] is False and job["status"]["code"] == 403
    assert "queue 'default' does not exist" in job["status"]["message"]
    pod = answer(review(spark.submit_pod("driver"), kind=POD), "/mutate/spark-apache-org-pod", unsynced)
    assert pod["allowed"] is True and pod["patchType"] == "JSONPatch"
