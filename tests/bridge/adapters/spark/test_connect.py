"""SparkConnect beyond its golden cases: the conf the server's Spark sees, the queue a
reconciler keeps, when it is done, and the UPDATE the operator never makes (the stamps stay)."""

from __future__ import annotations

import pytest

from bridge import errors, keys, queues
from bridge.adapters import base
from bridge.adapters.spark import connect as spark_connect
from bridge.adapters.spark import sizing
from tests.builders import spark

ADAPTER = spark_connect.SparkConnectAdapter()
CTX = base.Context(namespace="team-a", queues={"default": queues.QueueFacts()})


def test_the_fields_outrank_spark_conf_as_the_operators_later_confs_do() -> None:
    spec = spark.connect(
        executor={"instances": 3, "memory": "1g"},
        sparkConf={"spark.executor.instances": "9", "spark.executor.memory": "8g", "spark.executor.cores": "2"},
    )["spec"]
    conf = spark_connect.spark_conf(spec)
    assert (conf["spark.executor.instances"], conf["spark.executor.memory"]) == ("3", "1g")
    assert conf["spark.executor.cores"] == "1"  # the field, though the conf says 2
    # 3 executors of 1 cpu and 1024 + 384 MiB, and the server's 1 cpu and 1Gi.
    assert spark_connect.min_resources(spec) == {"cpu": "4", "memory": "5248Mi"}


def test_dynamic_allocation_off_ignores_its_counts() -> None:
    spec = spark.connect(dynamicAllocation={"enabled": False, "minExecutors": 7})["spec"]
    assert "spark.dynamicAllocation.minExecutors" not in spark_connect.spark_conf(spec)
    assert sizing.executors_from_conf(spark_connect.spark_conf(spec))[0] == sizing.PodSize(2000, 1792)


def test_a_server_without_requests_counts_only_its_executors() -> None:
    body = spark.connect()
    del body["spec"]["server"]["template"]["spec"]["containers"][0]["resources"]
    assert spark_connect.min_resources(body["spec"]) == {"cpu": "2", "memory": "1792Mi"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (("executor", "cores"), 0, "spec.executor.cores must be a positive integer"),
        (("server", "cores"), "2", "spec.server.cores must be a positive integer"),
        (("server", "memory"), "a lot", "spec.server.memory"),
    ],
)
def test_sizes_spark_would_refuse_are_denied_naming_the_field(
    field: tuple[str, str], value: object, message: str
) -> None:
    body = spark.connect()
    body["spec"][field[0]][field[1]] = value
    with pytest.raises(errors.InvalidObjectError, match=message):
        ADAPTER.admit(body, CTX)


def test_a_reconciler_keeps_the_group_in_a_queue_closed_since() -> None:
    body = spark.connect()
    body["metadata"]["annotations"] = {keys.QUEUE_NAME: "closed-since"}
    with pytest.raises(errors.QueueError, match="does not exist"):
        ADAPTER.admit(body, CTX)
    group = ADAPTER.podgroup(body, base.Context(namespace="team-a", queues=None))
    assert group is not None and group["spec"]["queue"] == "closed-since"
    assert ADAPTER.queue_of(body, CTX) == "closed-since"


def test_a_user_stamp_is_replaced_and_the_server_scheduler_left_default_is_ours() -> None:
    body = spark.connect(sparkConf={f"spark.kubernetes.executor.annotation.{keys.GROUP_NAME}": "elsewhere"})
    body["spec"]["server"]["template"]["spec"]["schedulerName"] = "default-scheduler"
    admitted = ADAPTER.admit(body, CTX)
    assert admitted is not None
    spec = admitted.desired["spec"]
    assert spec["sparkConf"][f"spark.kubernetes.executor.annotation.{keys.GROUP_NAME}"] == spark_connect.group_name(
        "spark-connect"
    )
    assert spec["server"]["template"]["spec"]["schedulerName"] == "volcano"
    assert body["spec"]["server"]["template"]["spec"]["schedulerName"] == "default-scheduler"  # not mutated


@pytest.mark.parametrize(("state", "done"), [("", False), ("Ready", False), ("NotReady", False), ("Failed", True)])
def test_a_server_is_finished_only_when_failed(state: str, done: bool) -> None:
    assert ADAPTER.finished({**spark.connect(), "status": {"state": state}}) is done
