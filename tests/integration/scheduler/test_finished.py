"""A job that runs to its end says nothing more: its PodGroup stays Completed, with no Warning,
when the pods are removed afterwards (a TTL, an operator's cleanPodPolicy, a Volcano Job's
CompleteJob), against a real apiserver and kube-controller-manager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.support import apiserver, schedbed, schedthread

pytestmark = pytest.mark.integration
Nodes = Callable[..., list[str]]
Run = Callable[..., schedthread.SchedThread]


def _warnings(api: k8s.ApiClient, ns: str, group: str) -> list[str]:
    """The Warning Events on PodGroup ``group``, by their messages."""
    return [
        e.message
        for e in schedbed.events(api, ns)
        if e.involved_object.kind == "PodGroup" and e.involved_object.name == group and e.type == "Warning"
    ]


def _batch_job(name: str, group: str, scheduler: str, count: int) -> dict[str, Any]:
    """A batch/v1 Job of ``count`` one-second pods in PodGroup ``group``, deleted (with its pods)
    by the TTL controller as soon as it finishes."""
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    annotations = {apiserver.GROUP_NAME: group, "sim.vbridge.io/run-seconds": "1"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": count,
            "completions": count,
            "ttlSecondsAfterFinished": 0,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {"schedulerName": scheduler, "restartPolicy": "Never", "containers": [container]},
            },
        },
    }


def test_a_job_run_to_completion_whose_pods_are_deleted_stays_completed_without_a_warning(
    api: k8s.ApiClient, ns: str, make_nodes: Nodes, run_scheduler: Run
) -> None:
    make_nodes(2, cpu="4", memory="16Gi")
    sched = run_scheduler()
    k8s.BatchV1Api(api).create_namespaced_job(ns, _batch_job("work", "work", sched.scheduler_name, 2))
    schedbed.podgroup(api, ns, "work", 2)
    apiserver.eventually(lambda: schedbed.phase(api, ns, "work") == "Completed", 60, "the gang to complete")
    before = _warnings(api, ns, "work")
    # The TTL controller deletes the finished Job, the garbage collector its pods.
    apiserver.eventually(lambda: not schedbed.placement(api, ns), 60, "the finished Job's pods to be removed")
    apiserver.eventually(
        lambda: (
            sched.scheduler is not None and not any(k.startswith(f"{ns}/") for k in sched.scheduler.cache.store["pods"])
        ),
        30,
        "the scheduler to see the pods gone",
    )
    sched.cycles.next(3)  # three cycles decided without the pods
    assert _warnings(api, ns, "work") == before, "no Warning once the job has finished"
    status = schedbed.get_pg(api, ns, "work")["status"]
    assert status["phase"] == "Completed", status
    assert [c["type"] for c in status["conditions"]] == ["Scheduled"]
