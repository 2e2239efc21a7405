"""The adapter contract beyond the golden cases: ``podgroup`` for the reconciler, ``finished``."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import errors, queues
from bridge.adapters import base, registry
from bridge.adapters.kubeflow import tfjob
from bridge.adapters.spark import application
from bridge.adapters.vcjob import adapter as vcjob_adapter
from bridge.adapters.vcjob import names
from tests.builders import kubeflow as kf
from tests.builders import spark, vcjob

CTX = base.Context(namespace="team-a", queues={"default": queues.QueueFacts()})
UNCHECKED = base.Context(namespace="team-a", queues=None)


def test_every_adapter_implements_the_contract() -> None:
    for adapter in registry.ADAPTERS:
        assert callable(adapter.admit) and callable(adapter.podgroup) and callable(adapter.finished)
        assert adapter.finished({}) is False


def test_a_reconciler_keeps_the_group_of_an_admitted_job_whatever_became_of_its_queue() -> None:
    job = kf.tfjob("x", Worker=kf.replica(2))
    job["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "closed-since"}
    group = tfjob.TFJobAdapter().podgroup(job, UNCHECKED)
    assert group is not None and group["spec"]["queue"] == "closed-since"
    with pytest.raises(errors.QueueError, match="does not exist"):
        tfjob.TFJobAdapter().admit(job, CTX)


def test_not_ours_is_none_for_podgroup_too() -> None:
    assert application.SparkApplicationAdapter().podgroup(spark.app(batchScheduler="yunikorn"), CTX) is None
    opted_out = kf.tfjob("x", Worker=kf.replica(1))
    opted_out["metadata"]["labels"] = {"vbridge.io/gang-scheduling": "disabled"}
    assert tfjob.TFJobAdapter().podgroup(opted_out, CTX) is None


@pytest.mark.parametrize(
    ("status", "done"),
    [
        ({}, False),
        ({"conditions": [{"type": "Running", "status": "True"}]}, False),
        ({"conditions": [{"type": "Succeeded", "status": "False"}]}, False),
        ({"conditions": [{"type": "Succeeded", "status": "True"}]}, True),
        ({"conditions": [{"type": "Failed", "status": "True"}]}, True),
    ],
)
def test_a_kubeflow_job_is_finished_by_its_conditions(status: dict[str, Any], done: bool) -> None:
    assert tfjob.TFJobAdapter().finished({**kf.tfjob("x", Worker=kf.replica(1)), "status": status}) is done


@pytest.mark.parametrize(("state", "done"), [("RUNNING", False), ("COMPLETED", True), ("FAILED", True)])
def test_a_spark_application_is_finished_by_its_state(state: str, done: bool) -> None:
    app = {**spark.app(batchScheduler="volcano"), "status": {"applicationState": {"state": state}}}
    assert application.SparkApplicationAdapter().finished(app) is done


def test_a_volcano_job_has_its_group_once_it_has_a_uid() -> None:
    adapter = vcjob_adapter.VolcanoJobAdapter()
    job = vcjob.mpi()
    group = adapter.podgroup(job, CTX)
    assert group is not None and group["metadata"]["name"] == names.podgroup(job) == "lm-mpi-job-u-1"
    without_uid = {**job, "metadata": {k: v for k, v in job["metadata"].items() if k != "uid"}}
    assert adapter.podgroup(without_uid, CTX) is None
    assert adapter.finished({**job, "status": {"state": {"phase": "Completed"}}})
    assert not adapter.finished({**job, "status": {"state": {"phase": "Running"}}})
