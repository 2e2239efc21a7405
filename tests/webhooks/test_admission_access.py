"""Queue access on every admission path: UPDATEs that change the queue, PodGroups and Queues made
directly, and client-mode Spark executors that name their queue."""

from __future__ import annotations

import copy
from typing import Any

from bridge import queues
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob
from tests.support import admission as support

TF, TF_PATH = support.TF, support.TF_PATH
SPARK = ("sparkoperator.k8s.io", "v1beta2", "SparkApplication")
SPARK_PATH = "/mutate/sparkoperator-k8s-io-sparkapplication"
VCJOB = ("batch.volcano.sh", "v1alpha1", "Job")
VCJOB_PATH = "/mutate/batch-volcano-sh-job"
PG = ("scheduling.volcano.sh", "v1beta1", "PodGroup")
PG_PATH = "/mutate/scheduling-volcano-sh-podgroup"
QUEUE = ("scheduling.volcano.sh", "v1beta1", "Queue")
QUEUE_PATH = "/mutate/scheduling-volcano-sh-queue"
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
# team-a may use default and shared; finance takes only finance-* namespaces; closed was Open once.
FACTS = support.Facts(
    default=queues.QueueFacts(),
    shared=queues.QueueFacts(),
    finance=queues.QueueFacts(allowed=("finance-*",)),
    closed=queues.QueueFacts(state="Closed"),
)


def update(old: dict[str, Any], new: dict[str, Any], *, kind: tuple[str, str, str], path: str) -> dict[str, Any]:
    return support.answer(support.review(new, kind=kind, operation="UPDATE", old=old), path, FACTS)


def _annotated(obj: dict[str, Any], queue: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("annotations", {})[QUEUE_NAME] = queue
    return out


def test_a_job_update_that_moves_it_to_a_foreign_queue_is_denied_by_annotation_or_field() -> None:
    job = kf.tfjob("x", Worker=kf.replica(2))
    out = update(job, _annotated(job, "finance"), kind=TF, path=TF_PATH)
    assert out["allowed"] is False and out["status"]["code"] == 403
    assert "queue 'finance' does not admit namespace 'team-a'" in out["status"]["message"]
    moved = copy.deepcopy(job)
    moved["spec"]["runPolicy"] = {"schedulingPolicy": {"queue": "finance"}}
    assert update(job, moved, kind=TF, path=TF_PATH)["allowed"] is False
    app = spark.app(batchScheduler="volcano")
    foreign = spark.app(batchScheduler="volcano", batchSchedulerOptions={"queue": "finance"})
    out = update(app, foreign, kind=SPARK, path=SPARK_PATH)
    assert out["allowed"] is False and "does not admit namespace 'team-a'" in out["status"]["message"]


def test_a_job_update_that_keeps_its_queue_is_not_judged_again() -> None:
    """The queue closed after the job was admitted: editing something else must still pass."""
    job = _annotated(kf.tfjob("x", Worker=kf.replica(2)), "closed")
    relabelled = copy.deepcopy(job)
    relabelled["metadata"]["labels"] = {"team": "a"}
    assert update(job, relabelled, kind=TF, path=TF_PATH)["allowed"] is True
    # A move to another usable queue is judged, and passes.
    assert update(job, _annotated(job, "shared"), kind=TF, path=TF_PATH)["allowed"] is True
    out = update(job, _annotated(job, "missing"), kind=TF, path=TF_PATH)
    assert out["allowed"] is False and "queue 'missing' does not exist" in out["status"]["message"]


def test_a_job_being_deleted_is_let_through_so_its_finalizers_can_go() -> None:
    job = _annotated(kf.tfjob("x", Worker=kf.replica(2)), "finance")  # would be denied on CREATE
    going = copy.deepcopy(job)
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert update(job, going, kind=TF, path=TF_PATH) == {"uid": "u-1", "allowed": True}


def test_a_volcano_job_update_keeps_its_field_and_denies_a_foreign_one() -> None:
    job = vcjob.tf()
    job["spec"]["queue"] = "shared"  # as admission resolved it
    annotated = _annotated(job, "finance")  # an annotation added later moves nothing
    out = update(job, annotated, kind=VCJOB, path=VCJOB_PATH)
    assert out["allowed"] is True and "/spec/queue" not in str(out.get("patch", ""))
    moved = copy.deepcopy(job)
    moved["spec"]["queue"] = "finance"
    out = update(job, moved, kind=VCJOB, path=VCJOB_PATH)
    assert out["allowed"] is False and "queue 'finance' does not admit namespace 'team-a'" in out["status"]["message"]


def _podgroup(queue: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "team-a"},
        "spec": {"minMember": 1, "queue": queue, **spec},
    }


def test_a_podgroup_made_by_hand_may_name_only_a_queue_its_namespace_may_use() -> None:
    out = support.answer(support.review(_podgroup("finance"), kind=PG), PG_PATH, FACTS)
    assert out["allowed"] is False and out["status"]["code"] == 403
    assert out["status"]["message"] == (
        "volcano-bridge: queue 'finance' does not admit namespace 'team-a'; "
        "queues open to namespace 'team-a': default, shared"
    )
    assert support.answer(support.review(_podgroup("shared"), kind=PG), PG_PATH, FACTS) == {
        "uid": "u-1",
        "allowed": True,
    }
    # Closed queues still take groups (a reconciler keeps an admitted job's group); the scheduler holds them.
    assert support.answer(support.review(_podgroup("closed"), kind=PG), PG_PATH, FACTS)["allowed"] is True


def test_a_podgroup_update_is_judged_only_when_its_queue_changes() -> None:
    old = _podgroup("finance")  # made before finance was restricted
    assert update(old, _podgroup("finance", minMember=2), kind=PG, path=PG_PATH)["allowed"] is True
    assert update(_podgroup("shared"), _podgroup("finance"), kind=PG, path=PG_PATH)["allowed"] is False
    bad = update(old, _podgroup("finance", minMember=-1), kind=PG, path=PG_PATH)
    assert bad["allowed"] is False and "spec.minMember must be a non-negative integer" in bad["status"]["message"]


def test_a_client_mode_executor_naming_a_foreign_queue_is_denied() -> None:
    path = "/mutate/spark-apache-org-pod"
    executor = spark.submit_pod("executor", annotations={QUEUE_NAME: "finance"})
    out = support.answer(support.review(executor, kind=support.POD), path, FACTS)
    assert out["allowed"] is False and "queue 'finance' does not admit namespace 'team-a'" in out["status"]["message"]
    closed = spark.submit_pod("executor", annotations={QUEUE_NAME: "closed"})
    assert support.answer(support.review(closed, kind=support.POD), path, FACTS)["allowed"] is True


def test_queues_are_judged_as_cluster_scoped_objects() -> None:
    def queue(name: str, **spec: Any) -> bytes:
        body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
        return support.review({**body, "spec": spec}, kind=QUEUE, namespace="")

    assert support.answer(queue("ml", weight=1, parent="shared"), QUEUE_PATH, FACTS) == {"uid": "u-1", "allowed": True}
    for bad, message in [
        (queue("ml", parent="ml"), "a queue cannot parent itself"),
        (queue("ml", parent="nowhere"), "spec.parent 'nowhere' does not exist"),
        (queue("ml", capability={"cpu": "2"}, guarantee={"resource": {"cpu": "3"}}), "above the capability 2"),
        (queue("ml", capability={"cpu": "1e18"}, deserved={"cpu": "-1"}), "spec.deserved.cpu must not be negative"),
        (queue("ml", capability={"cpu": "1e400"}), "spec.capability.cpu '1e400' is above 2^63 - 1"),
    ]:
        out = support.answer(bad, QUEUE_PATH, FACTS)
        assert out["allowed"] is False and out["status"]["code"] == 400 and message in out["status"]["message"]
