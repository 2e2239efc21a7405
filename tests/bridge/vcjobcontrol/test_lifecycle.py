"""The Job state machine: events from pod changes, policy actions, phases, kills and creations."""

from __future__ import annotations

from typing import Any

import pytest

from bridge.vcjobcontrol import lifecycle
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod

NOW = "2026-05-01T12:00:00Z"


def running(job: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
    tasks = [(t["name"], i) for t in job["spec"]["tasks"] for i in range(t["replicas"])]
    return [pod(job, t, i, **kw) for t, i in tasks]


def test_a_new_job_creates_every_pod_and_stays_pending_until_the_gang_runs() -> None:
    job = jobs.mpi()
    plan = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
    assert plan.create == (("mpimaster", 0), ("mpiworker", 0), ("mpiworker", 1))
    assert plan.phase == "Pending" and plan.delete == ()
    assert plan.status["minAvailable"] == 3 and plan.status["version"] == 0 and plan.status["retryCount"] == 0
    two = lifecycle.step(job, running(job)[:2], lifecycle.Request(), now=NOW)
    assert two.phase == "Pending" and two.create == (("mpiworker", 1),)
    three = lifecycle.step(job, running(job), lifecycle.Request(), now=NOW)
    assert three.phase == "Running" and three.create == ()
    assert three.status["running"] == 3 and three.status["state"]["lastTransitionTime"] == NOW
    assert three.status["taskStatusCount"] == {
        "mpimaster": {"phase": {"Running": 1}},
        "mpiworker": {"phase": {"Running": 2}},
    }


def test_master_completion_raises_task_completed_and_completes_the_job() -> None:
    job = jobs.mpi(state={"phase": "Running"})
    pods = running(job)
    pods[0] = pod(job, "mpimaster", 0, "Succeeded")
    request = lifecycle.detect(job, "Running", pods[0], pods, deleted=False)
    assert (request.event, request.task) == ("TaskCompleted", "mpimaster")
    assert lifecycle.action_for(job, request) == "CompleteJob"  # the task's own policy
    plan = lifecycle.step(job, pods, request, now=NOW)
    assert plan.phase == "Completing" and plan.delete == ("lm-mpi-job-mpiworker-0", "lm-mpi-job-mpiworker-1")
    assert plan.status["terminating"] == 2 and plan.status["succeeded"] == 1
    # The workers are being deleted: still Completing; once gone, Completed with the kill's reason.
    job["status"] = plan.status
    terminating = [pods[0], *(pod(job, "mpiworker", i, deleting=True) for i in range(2))]
    assert lifecycle.step(job, terminating, lifecycle.Request(), now=NOW).phase == "Completing"
    done = lifecycle.step(job, [pods[0]], lifecycle.Request(event="PodEvicted", task="mpiworker"), now=NOW)
    assert done.phase == "Completed" and done.status["state"]["reason"] == "CompleteJob"
    assert [c["status"] for c in done.status["conditions"]] == ["Completing", "Completed"]


def test_eviction_restarts_the_whole_job_with_retry_count_and_version_raised() -> None:
    job = jobs.tf(state={"phase": "Running"}, version=0, retryCount=0)
    pods = running(job)
    gone = pods.pop(1)  # worker-0 deleted by someone else
    request = lifecycle.detect(job, "Running", gone, pods, deleted=True)
    assert request.event == "PodEvicted" and lifecycle.action_for(job, request) == "RestartJob"
    plan = lifecycle.step(job, pods, request, now=NOW)
    assert plan.phase == "Restarting" and plan.status["retryCount"] == 1 and plan.status["version"] == 1
    assert set(plan.delete) == {"tensorflow-dist-mnist-ps-0", "tensorflow-dist-mnist-worker-1"}
    job["status"] = plan.status
    # The killed pods' own deletions are news from version 0: they sync, never restart again.
    echo = lifecycle.detect(job, "Running", pods[0], pods, deleted=True)
    assert lifecycle.action_for(job, echo) == "SyncJob"
    still = [pod(job, "ps", 0, deleting=True)]
    assert lifecycle.step(job, still, echo, now=NOW).phase == "Restarting"
    pending = lifecycle.step(job, [], echo, now=NOW)
    assert pending.phase == "Pending" and pending.create == ()
    job["status"] = pending.status
    again = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
    assert len(again.create) == 3


def test_restarts_stop_at_max_retry() -> None:
    job = jobs.tf(state={"phase": "Restarting"}, retryCount=3, version=3)
    plan = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
    assert plan.phase == "Failed"


@pytest.mark.parametrize(
    ("policies", "request_", "action"),
    [
        ([{"event": "*", "action": "AbortJob"}], lifecycle.Request(event="PodFailed", task="ps"), "AbortJob"),
        (
            [{"exitCode": 137, "action": "RestartTask"}],
            lifecycle.Request(event="PodFailed", exit_code=137),
            "RestartTask",
        ),
        ([{"exitCode": 137, "action": "RestartTask"}], lifecycle.Request(event="PodFailed", exit_code=1), "SyncJob"),
        ([{"events": ["TaskFailed"], "action": "TerminateJob"}], lifecycle.Request(event="TaskFailed"), "TerminateJob"),
        ([{"event": "*", "action": "AbortJob"}], lifecycle.Request(), "SyncJob"),
        ([{"event": "*", "action": "AbortJob"}], lifecycle.Request(action="ResumeJob"), "ResumeJob"),
    ],
)
def test_policies_map_events_and_exit_codes_to_actions(
    policies: list[dict[str, Any]], request_: lifecycle.Request, action: str
) -> None:
    job = jobs.tf()
    job["spec"]["policies"] = policies
    assert lifecycle.action_for(job, request_) == action


def test_task_policies_win_over_job_policies() -> None:
    job = jobs.tf()
    job["spec"]["policies"] = [{"event": "TaskCompleted", "action": "AbortJob"}]
    assert lifecycle.action_for(job, lifecycle.Request(event="TaskCompleted", task="worker")) == "CompleteJob"
    assert lifecycle.action_for(job, lifecycle.Request(event="TaskCompleted", task="ps")) == "AbortJob"


def test_every_failed_pod_raises_pod_failed_with_its_exit_code() -> None:
    job = jobs.tf()  # admission made each task's minAvailable its replicas: no slack at all
    pods = running(job)
    pods[1] = pod(job, "worker", 0, "Failed", exit_code=3)
    first = lifecycle.detect(job, "Running", pods[1], pods, deleted=False)
    assert (first.event, first.exit_code, first.task) == ("PodFailed", 3, "worker")
    pods[2] = pod(job, "worker", 1, "Failed", exit_code=4)
    second = lifecycle.detect(job, "Running", pods[2], pods, deleted=False)
    assert (second.event, second.exit_code) == ("PodFailed", 4), "TaskFailed is about restarts, not failures"
    assert lifecycle.detect(job, "Failed", pods[2], pods, deleted=False) == lifecycle.Request(), "no transition"


def test_running_job_completes_or_fails_when_every_pod_has_finished() -> None:
    job = jobs.tf(state={"phase": "Running"})
    ok = [pod(job, t, i, "Succeeded") for t, i in (("ps", 0), ("worker", 0), ("worker", 1))]
    assert lifecycle.step(job, ok, lifecycle.Request(), now=NOW).phase == "Completed"
    bad = [*ok[:2], pod(job, "worker", 1, "Failed")]
    assert lifecycle.step(job, bad, lifecycle.Request(), now=NOW).phase == "Failed"
    job["spec"]["minSuccess"] = 1
    assert lifecycle.step(job, running(job)[:1] + ok[1:2], lifecycle.Request(), now=NOW).phase == "Completed"


def test_abort_keeps_finished_pods_and_resume_restarts() -> None:
    job = jobs.tf(state={"phase": "Running"})
    pods = [pod(job, "ps", 0), pod(job, "worker", 0, "Succeeded"), pod(job, "worker", 1)]
    plan = lifecycle.step(job, pods, lifecycle.Request(action="AbortJob"), now=NOW)
    assert plan.phase == "Aborting" and plan.delete == ("tensorflow-dist-mnist-ps-0", "tensorflow-dist-mnist-worker-1")
    job["status"] = plan.status
    aborted = lifecycle.step(job, pods[1:2], lifecycle.Request(), now=NOW)
    assert aborted.phase == "Aborted" and aborted.delete == ()
    job["status"] = aborted.status
    resumed = lifecycle.step(job, pods[1:2], lifecycle.Request(action="ResumeJob"), now=NOW)
    assert resumed.phase == "Restarting" and resumed.delete == ("tensorflow-dist-mnist-worker-0",)
    assert resumed.status["retryCount"] == 1 and resumed.status["version"] == 2


def test_finished_jobs_ignore_actions_and_stop_stragglers() -> None:
    job = jobs.mpi(state={"phase": "Completed"})
    pods = [pod(job, "mpimaster", 0, "Succeeded"), pod(job, "mpiworker", 0)]
    plan = lifecycle.step(job, pods, lifecycle.Request(action="RestartJob"), now=NOW)
    assert plan.phase == "Completed" and plan.delete == ("lm-mpi-job-mpiworker-0",) and plan.create == ()
