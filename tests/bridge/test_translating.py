"""``vbridge translate`` offline: admitted object, PodGroup, patch, notes; queues are not checked."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from bridge import translating
from bridge.adapters.spark import submit
from tests.builders import kubeflow as kf
from tests.builders import spark

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
    assert yunikorn.desired is None
    assert yunikorn.skipped == "a SparkApplication for batchScheduler yunikorn, not volcano"
    unknown = translating.translate({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert unknown.skipped == "a Secret: not a kind volcano-bridge handles"
    assert unknown.current is not None and unknown.notes == ()
    bad = translating.translate(spark.app(batchScheduler="volcano", executor={"instances": -1}))
    assert bad.error is not None and "must not be negative" in bad.error


def test_namespace_labels_opt_an_application_in() -> None:
    app = spark.app(batchScheduler=None)
    assert translating.translate(app).desired is None
    opted = translating.translate(app, namespace_labels={"vbridge.io/gang-scheduling": "enabled"}, scheduler_name="g")
    assert opted.podgroup is not None and opted.podgroup["metadata"]["name"] == "spark-pi-pg"
    assert opted.desired is not None and opted.desired["spec"]["driver"]["schedulerName"] == "g"


def test_a_volcano_job_gets_its_podgroup_with_a_placeholder_uid() -> None:
    job = yaml.safe_load((ROOT / "examples" / "volcano-job-mpi.yaml").read_text())
    out = translating.translate(job)
    assert out.podgroup is not None and out.podgroup["metadata"]["name"] == f"lm-mpi-job-{translating.PLACEHOLDER_UID}"
    assert any("placeholder uid" in n for n in out.notes)
    assert "uid" not in (out.desired or {})["metadata"]  # the object as admitted has none
    job["metadata"]["uid"] = "u-1"
    known = translating.translate(job)
    assert known.podgroup is not None and known.podgroup["metadata"]["name"] == "lm-mpi-job-u-1"
    assert not any("placeholder" in n for n in known.notes)


def test_a_hand_written_podgroup_is_used_as_is() -> None:
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"}}
    out = translating.translate(group)
    assert (out.notes, out.current, out.desired, out.podgroup, out.error) == (
        (translating.PODGROUP_NOTE,),
        group,
        None,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        ({"kind": "Pod"}, "not a Kubernetes object: no apiVersion and kind"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": []}, "metadata must be a mapping, not list"),
        (
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "TFJob",
                "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [1]}}}}},
            },
            "this TFJob has a field of the wrong type or shape (AttributeError",
        ),
        ({"apiVersion": "kubeflow.org/v1alpha1", "kind": "TFJob", "spec": {"replicaSpecs": [1]}}, "wrong type"),
    ],
)
def test_malformed_objects_are_errors_not_exceptions(obj: dict[str, Any], error: str) -> None:
    out = translating.translate(obj)
    assert out.error is not None and error in out.error


SCRIPT = """#!/bin/sh
# a comment with spark-submit in it
exec "$SPARK_HOME"/bin/spark-submit --master k8s://https://api:6443 --deploy-mode cluster \\
  --name "My App" --conf spark.executor.instances=9 --num-executors 2 \\
  --conf=spark.kubernetes.namespace=team-a --executor-memory 2g \\
  --conf spark.kubernetes.driver.annotation.vbridge.io/podgroup-template=big \\
  --conf spark.kubernetes.scheduler.name=volcano --verbose \\
  local:///app/main.py --input 's3://b/x y' && echo done
"""


def test_submit_reads_the_command_line_as_spark_does() -> None:
    (sub,) = submit.parse(SCRIPT)
    assert isinstance(sub, submit.Submission) and sub.line == 3 and sub.cluster_mode and sub.on_kubernetes
    assert sub.conf["spark.executor.instances"] == "2"  # --num-executors outranks --conf
    assert sub.conf["spark.kubernetes.resource.type"] == "python"  # from the .py application
    assert (sub.resource, sub.arguments) == ("local:///app/main.py", ("--input", "s3://b/x y"))
    pod = submit.driver_pod(sub)
    assert pod["metadata"]["name"] == "my-app-driver" and pod["metadata"]["namespace"] == "team-a"
    assert pod["metadata"]["annotations"] == {"vbridge.io/podgroup-template": "big"}
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1433Mi"}  # +40%: Python


def test_a_spark_submit_script_gets_the_webhooks_stamps_and_the_reconcilers_group() -> None:
    (out,) = translating.translate_script(SCRIPT)
    assert out.error is None and out.line == 3 and out.current is None
    desired = out.desired or {}
    assert desired["spec"]["schedulingGates"] == [{"name": "vbridge.io/podgroup"}]
    assert "spark.kubernetes.executor.scheduler.name=volcano" in desired["spec"]["containers"][0]["args"]
    assert out.podgroup is not None and out.podgroup["metadata"]["namespace"] == "team-a"
    # the driver and 2 executors of 2048Mi, each with 40% overhead (Python)
    assert out.podgroup["spec"]["minResources"] == {"cpu": "3", "memory": f"{1433 + 2 * (2048 + 819)}Mi"}


@pytest.mark.parametrize(
    ("script", "skipped"),
    [
        ("spark-submit --master yarn app.jar\n", "a spark-submit to yarn, not to Kubernetes (k8s://…)"),
        ("spark-submit app.jar\n", "a spark-submit, no --master"),
        ("spark-submit --master k8s://h app.jar\n", "a client-mode spark-submit whose executors are not on scheduler"),
        ("spark-submit --master k8s://h --deploy-mode cluster app.jar\n", "a spark-submit pod not on"),
    ],
)
def test_spark_submits_nothing_gang_schedules_say_why(script: str, skipped: str) -> None:
    (out,) = translating.translate_script(script)
    assert out.skipped is not None and out.skipped.startswith(skipped), out


@pytest.mark.parametrize(
    ("script", "error"),
    [
        ("echo hi\n", "no spark-submit command line in it"),
        ("spark-submit --conf 'a=1\n", "cannot read this command line: No closing quotation"),
        ("spark-submit --conf novalue app.jar\n", "--conf 'novalue' is not KEY=VALUE"),
        ("spark-submit --master\n", "spark-submit option --master needs a value"),
        (
            "spark-submit --master k8s://h --deploy-mode cluster --driver-memory lots app.jar\n",
            "driver memory: 'lots' is not a JVM memory size",
        ),
    ],
)
def test_scripts_it_cannot_read_are_errors(script: str, error: str) -> None:
    (out,) = translating.translate_script(script)
    assert out.error is not None and error in out.error
