"""``vbridge translate`` offline: admitted object, PodGroup, patch, notes; queues are not checked."""

from __future__ import annotations

from bridge import translating
from tests.builders import kubeflow as kf
from tests.builders import spark


def test_a_job_gets_its_patch_and_podgroup_without_a_queue_check() -> None:
    job = kf.tfjob("mnist", Worker=kf.replica(2, kf.container("tf", "1", "1Gi")))
    job["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "nowhere"}
    out = translating.translate(job)
    assert out.error is None and out.converted is None and out.desired is not None
    assert out.podgroup is not None and out.podgroup["spec"]["queue"] == "nowhere"  # offline: not checked
    assert out.podgroup["spec"]["minMember"] == 2
    assert any(op["path"].endswith("/schedulerName") for op in out.patch)


def test_not_ours_unknown_kinds_and_denials_are_outcomes() -> None:
    yunikorn = translating.translate(spark.app(batchScheduler="yunikorn"))
    assert yunikorn.desired is None and yunikorn.notes == ("not for gang scheduling: admitted unchanged",)
    unknown = translating.translate({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert unknown.notes == ("volcano-bridge does not handle v1 Secret",)
    bad = translating.translate(spark.app(batchScheduler="volcano", executor={"instances": -1}))
    assert bad.error is not None and "must not be negative" in bad.error


def test_namespace_labels_opt_an_application_in() -> None:
    app = spark.app(batchScheduler=None)
    assert translating.translate(app).desired is None
    opted = translating.translate(app, namespace_labels={"vbridge.io/gang-scheduling": "enabled"}, scheduler_name="g")
    assert opted.podgroup is not None and opted.podgroup["metadata"]["name"] == "spark-pi-pg"
    assert opted.desired is not None and opted.desired["spec"]["driver"]["schedulerName"] == "g"
