"""``shapes.misfit``: why an object does not fit its kind's shape, naming the member."""

from __future__ import annotations

from bridge.adapters import shapes
from tests.builders import jobset as js
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob


def test_an_object_that_fits_has_no_misfit_and_null_is_as_good_as_absent() -> None:
    job = kf.tfjob("t", Worker=kf.replica(1))
    assert shapes.misfit(job, shapes.KubeflowJob) is None
    job["spec"]["runPolicy"] = None
    job["metadata"]["labels"] = None
    assert shapes.misfit(job, shapes.KubeflowJob) is None
    assert shapes.misfit({"spec": "anything"}, None) is None  # no shape: nothing checked


def test_the_map_key_named_is_the_one_whose_value_misfits() -> None:
    job = kf.tfjob("t", PS=kf.replica(1), Worker=kf.replica(1))
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = {"name": "c"}
    assert shapes.misfit(job, shapes.KubeflowJob) == (
        "$.spec.tfReplicaSpecs.Worker.template.spec.containers: expected array, got object"
    )


def test_list_indexes_and_keys_that_are_not_names_are_spelled_out() -> None:
    job = vcjob.simple("v")
    job["spec"]["tasks"].append(dict(job["spec"]["tasks"][0], name="second"))
    job["spec"]["tasks"][1] = {**job["spec"]["tasks"][1], "template": {"spec": {"containers": [{"name": ["c"]}]}}}
    assert (
        shapes.misfit(job, shapes.VolcanoJob)
        == "$.spec.tasks[1].template.spec.containers[0].name: expected str, got array"
    )
    job = vcjob.simple("v")
    job["spec"]["tasks"][0]["template"]["metadata"]["annotations"] = {"a.b/c d": 1}
    assert shapes.misfit(job, shapes.VolcanoJob) == (
        '$.spec.tasks[0].template.metadata.annotations["a.b/c d"]: expected str, got int'
    )


def test_a_jobsets_nested_job_and_pod_templates_are_shaped() -> None:
    job = js.deepspeed("ds")
    assert shapes.misfit(job, shapes.JobSet) is None
    job["spec"]["replicatedJobs"][1]["dependsOn"] = {"name": "node"}
    assert shapes.misfit(job, shapes.JobSet) == "$.spec.replicatedJobs[1].dependsOn: expected array, got object"
    job = js.deepspeed("ds")
    job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"] = "node"
    assert shapes.misfit(job, shapes.JobSet) == (
        "$.spec.replicatedJobs[0].template.spec.template: expected object, got str"
    )


def test_a_spark_connect_server_template_of_the_wrong_type_is_named() -> None:
    body = spark.connect()
    assert shapes.misfit(body, shapes.SparkConnect) is None
    body["spec"]["server"]["template"]["spec"]["containers"] = {"name": "c"}
    assert shapes.misfit(body, shapes.SparkConnect) == (
        "$.spec.server.template.spec.containers: expected array, got object"
    )
    assert shapes.misfit({"spec": {"sparkConf": ["a=b"]}}, shapes.SparkConnect) == (
        "$.spec.sparkConf: expected object, got array"
    )
