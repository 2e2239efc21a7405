"""Volcano Jobs that fail, stall or overreach, against the real apiserver, our scheduler and
simulated nodes (``sim.vbridge.io/exit-code`` and ``run-seconds`` make pods fail or succeed).

- PodFailed → RestartJob restarts the job up to maxRetry, then it is Failed;
- a new job is Pending (with a transition time) before anything runs;
- pods the apiserver refuses are reported (Warning FailedCreatePod, the reason in the status)
  and tried again with backoff: a missing PriorityClass, once made, lets the job run;
- ``root`` and jobs of absurd size are denied at admission;
- pod creation is paced by the controller's pool, and a job's events are coalesced.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import defaults
from bridge.k8s import client, kubeconfigs
from tests.integration.test_vcjobs import create_job, env, get_job, phase, pods_of, scheduler
from tests.support import apiserver, bridgethread, schedthread
from vbridge.controllers import vcjob_create
from vbridge.controllers import vcjobs as vcjob_controller
from vbridge.localcluster import cluster
from vbridge.nodesim import EXIT_CODE, RUN_SECONDS

pytestmark = pytest.mark.integration
__all__ = ["env", "scheduler"]  # fixtures, shared with test_vcjobs
Env = tuple[k8s.ApiClient, str, schedthread.SchedThread]


def job(name: str, replicas: int = 2, *, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    pod_spec.update(spec.pop("pod", {}))
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "tasks": [
                {
                    "name": "work",
                    "replicas": replicas,
                    "template": {"metadata": {"annotations": annotations or {}}, "spec": pod_spec},
                }
            ],
            **spec,
        },
    }


def job_events(api: k8s.ApiClient, ns: str, name: str, reason: str) -> list[Any]:
    return [
        e
        for e in k8s.CoreV1Api(api).list_namespaced_event(ns).items
        if e.involved_object.kind == "Job" and e.involved_object.name == name and e.reason == reason
    ]


def state(api: k8s.ApiClient, ns: str, name: str) -> dict[str, Any]:
    return dict((get_job(api, ns, name).get("status") or {}).get("state") or {})


def test_pod_failed_restarts_the_job_up_to_max_retry_then_it_fails(env: Env) -> None:
    api, ns, _ = env
    failing = job(
        "flaky",
        annotations={EXIT_CODE: "1", RUN_SECONDS: "1"},
        maxRetry=2,
        policies=[{"event": "PodFailed", "action": "RestartJob"}],
    )
    create_job(api, ns, failing)
    apiserver.eventually(lambda: phase(api, ns, "flaky") == "Failed", what="the job to fail", timeout=120)
    status = get_job(api, ns, "flaky")["status"]
    assert status["retryCount"] == 2, "two RestartJobs: the second finds retryCount at maxRetry"
    history = [c["status"] for c in status["conditions"]]
    assert history.count("Restarting") == 2 and history[0] == "Pending" and history[-1] == "Failed"
    assert len(job_events(api, ns, "flaky", "RestartJob")) >= 2
    left = pods_of(api, ns, "flaky")
    assert left and all(p.status.phase == "Failed" for p in left.values()), "the last retry keeps the failed pod"


def test_a_new_job_is_pending_with_a_transition_time_before_it_can_run(env: Env) -> None:
    api, ns, _ = env
    big = {"name": "c", "image": "x", "resources": {"requests": {"cpu": "500"}}}  # fits no node
    create_job(api, ns, job("too-big", 1, pod={"containers": [big]}))
    apiserver.eventually(lambda: phase(api, ns, "too-big") == "Pending", what="Pending")
    status = get_job(api, ns, "too-big")["status"]
    assert status["state"]["lastTransitionTime"] and status["conditions"][0]["status"] == "Pending"
    assert status["minAvailable"] == 1 and pods_of(api, ns, "too-big") == {}


def test_pods_the_apiserver_refuses_are_reported_and_retried_until_they_can_be_made(env: Env) -> None:
    api, ns, _ = env
    sched = k8s.SchedulingV1Api(api)
    pc = f"late-{ns}"[:63]
    create_job(api, ns, job("late", 1, pod={"priorityClassName": pc}))
    events = apiserver.eventually(lambda: job_events(api, ns, "late", "FailedCreatePod"), what="FailedCreatePod")
    assert events[0].type == "Warning" and f"no PriorityClass with name {pc} was found" in events[0].message
    now = state(api, ns, "late")
    assert now["phase"] == "Pending" and now["reason"] == "FailedCreatePod" and pc in now["message"]
    sched.create_priority_class(k8s.V1PriorityClass(metadata=k8s.V1ObjectMeta(name=pc), value=10))
    try:
        apiserver.eventually(lambda: phase(api, ns, "late") == "Running", what="the job to run", timeout=90)
        assert "reason" not in state(api, ns, "late") or state(api, ns, "late")["reason"] != "FailedCreatePod"
    finally:
        sched.delete_priority_class(pc)


def test_an_invalid_template_is_reported_with_the_apiservers_message_and_not_retried_tightly(env: Env) -> None:
    api, ns, _ = env
    resources = {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}  # 422: requests above limits
    create_job(api, ns, job("invalid", 1, pod={"containers": [{"name": "c", "image": "x", "resources": resources}]}))
    first = apiserver.eventually(lambda: job_events(api, ns, "invalid", "FailedCreatePod"), what="FailedCreatePod")
    assert "must be less than or equal to cpu limit" in first[0].message
    time.sleep(8)
    attempts = len(job_events(api, ns, "invalid", "FailedCreatePod"))
    assert attempts <= 3, (
        f"{attempts} attempts in 8 s: a refusal waits {defaults.VCJOB_CREATE_RETRY_CLIENT} s, doubling"
    )
    assert phase(api, ns, "invalid") == "Pending"


def test_root_and_jobs_of_absurd_size_are_denied(env: Env) -> None:
    api, ns, _ = env

    def denied(body: dict[str, Any]) -> str:
        with pytest.raises(k8s.ApiException) as exc:
            create_job(api, ns, body)
        return str(exc.value.body)

    root = denied(job("to-root", queue="root"))
    assert "can not submit job to root queue" in root
    usable = re.search(r"queues open to namespace '[^']*': ([^\"]*)", denied(job("nowhere", queue="no-such-queue")))
    assert usable and "root" not in usable.group(1).split(", "), "root is never offered"
    huge = denied(job("huge", 100_000))
    assert f"at most {defaults.VCJOB_MAX_PODS} pods per Job" in huge and "100000 pods" in huge


def _controller(bridge: bridgethread.BridgeThread) -> vcjob_controller.VcJobController:
    """The bridge thread's controller: the ``self`` of its running ``run`` coroutine."""
    found: dict[int, vcjob_controller.VcJobController] = {}
    for task in asyncio.all_tasks(bridge.loop):
        coro = task.get_coro()
        frame = getattr(coro, "cr_frame", None)
        if frame is not None and isinstance(frame.f_locals.get("self"), vcjob_controller.VcJobController):
            found[id(frame.f_locals["self"])] = frame.f_locals["self"]
    assert len(found) == 1, found
    return next(iter(found.values()))


def test_a_large_job_is_created_through_the_bounded_pool_and_its_events_coalesced(
    env: Env, bridge: bridgethread.BridgeThread
) -> None:
    api, ns, _ = env
    controller = _controller(bridge)
    controller.pool.most_in_flight = 0
    before = controller.syncs
    replicas = 120
    body = job(
        "wide",
        replicas,
        annotations={RUN_SECONDS: "2"},
        policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
    )
    create_job(api, ns, body)
    apiserver.eventually(lambda: phase(api, ns, "wide") == "Completed", what="the job to complete", timeout=180)
    assert 1 < controller.pool.most_in_flight <= defaults.VCJOB_CREATE_IN_FLIGHT
    # Each pod is created, bound, runs and succeeds: 4+ events a pod. Coalesced, far fewer syncs.
    syncs = controller.syncs - before
    assert syncs < 2 * replicas, f"{syncs} syncs for {replicas} pods"
    assert get_job(api, ns, "wide")["status"]["succeeded"] == replicas


def test_the_pool_never_has_more_calls_in_flight_than_its_bound(
    control_plane: cluster.LocalCluster, namespace: str
) -> None:
    async def main() -> tuple[int, list[Any]]:
        async with client.Client(kubeconfigs.load(control_plane.kubeconfig), connections=32) as api:
            pool = vcjob_create.Pool(api, vcjob_create.Pace(in_flight=4))
            bodies = (
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p-{i}"},
                    "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "x"}]},
                }
                for i in range(40)
            )
            outcome = await pool.create(namespace, bodies, job=f"{namespace}/p")
            await pool.delete(namespace, [f"p-{i}" for i in range(40)], job=f"{namespace}/p")
            return pool.most_in_flight, outcome.failures

    most, failures = asyncio.run(main())
    assert failures == [] and 1 < most <= 4
