"""Volcano's events and retries: PodFailed → RestartJob up to maxRetry, TaskFailed from in-place
restarts past a task's maxRetry, Unknown from the PodGroup, Pending at creation, creation failures."""

from __future__ import annotations

from typing import Any

import pytest

from bridge import defaults, errors
from bridge.adapters.vcjob import spec
from bridge.vcjobcontrol import creation, lifecycle
from tests.builders import vcjob as jobs
from tests.builders.vcjob import pod

NOW = "2026-05-01T12:00:00Z"


def one_task(max_retry: int = 2, **task: Any) -> dict[str, Any]:
    job = jobs.tf()
    job["spec"]["tasks"] = [
        {
            "name": "worker",
            "replicas": 2,
            "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
            **task,
        }
    ]
    job["spec"]["policies"] = [{"event": "PodFailed", "action": "RestartJob"}]
    job["spec"]["minAvailable"] = 0
    job["spec"]["maxRetry"] = max_retry
    return spec.defaulted(job)


def test_a_new_job_enters_pending_with_a_transition_time() -> None:
    job = one_task()
    job.pop("status", None)
    plan = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
    assert plan.status["state"] == {"phase": "Pending", "lastTransitionTime": NOW}
    assert plan.status["conditions"] == [{"status": "Pending", "lastTransitionTime": NOW}]
    assert plan.message == "", "no Event for entering Pending, as Volcano"
    job["status"] = plan.status
    again = lifecycle.step(job, [], lifecycle.Request(), now="2026-05-01T12:00:09Z")
    assert again.status["state"]["lastTransitionTime"] == NOW and len(again.status["conditions"]) == 1


def test_pod_failed_restarts_the_job_until_max_retry_then_fails() -> None:
    """maxRetry 2: RestartJob twice; the second finds retryCount at maxRetry and the job fails."""
    job = one_task(max_retry=2)
    job["status"] = {"state": {"phase": "Running"}, "version": 0, "retryCount": 0}
    for attempt in (1, 2):
        version = job["status"]["version"]
        pods = [pod(job, "worker", 0, "Failed", exit_code=1, version=version), pod(job, "worker", 1, version=version)]
        request = lifecycle.detect(job, "Running", pods[0], pods, deleted=False)
        assert request.event == "PodFailed" and lifecycle.action_for(job, request) == "RestartJob"
        plan = lifecycle.step(job, pods, request, now=NOW)
        assert plan.phase == "Restarting" and plan.status["retryCount"] == attempt
        # Not the last retry: every pod goes; the last one keeps the failed pod to look at.
        kept = {pods[0]["metadata"]["name"]} if attempt == 2 else set()
        assert set(plan.delete) == {p["metadata"]["name"] for p in pods} - kept
        job["status"] = plan.status
        after = lifecycle.step(job, [], lifecycle.Request(), now=NOW)
        job["status"] = after.status
        if attempt == 1:
            assert after.phase == "Pending"
            job["status"] = {**job["status"], "state": {"phase": "Running"}}
    assert job["status"]["state"]["phase"] == "Failed" and job["status"]["retryCount"] == 2


def test_task_failed_is_raised_when_in_place_restarts_exceed_the_task_max_retry() -> None:
    job = one_task(maxRetry=2)
    assert spec.tasks(job)[0].max_retry == 2
    two = [pod(job, "worker", 0, restarts=1), pod(job, "worker", 1, restarts=1)]
    assert lifecycle.detect(job, "Running", two[0], two, deleted=False) == lifecycle.Request(), "2 is not > 2"
    three = [pod(job, "worker", 0, restarts=2), two[1]]
    request = lifecycle.detect(job, "Running", three[0], three, deleted=False)
    assert (request.event, request.task) == ("TaskFailed", "worker")
    assert spec.tasks(one_task())[0].max_retry == 3, "unset (or 0) means 3"
    unlimited = one_task(maxRetry=-1)
    many = [pod(unlimited, "worker", 0, restarts=99)]
    assert lifecycle.detect(unlimited, "Running", many[0], many, deleted=False) == lifecycle.Request()
    with pytest.raises(errors.InvalidObjectError, match="maxRetry must be an integer >= -1"):
        spec.validate(one_task(maxRetry=-2))


def test_task_completed_needs_every_pod_of_the_task_succeeded() -> None:
    job = one_task()
    first = [pod(job, "worker", 0, "Succeeded"), pod(job, "worker", 1)]
    assert lifecycle.detect(job, "Running", first[0], first, deleted=False) == lifecycle.Request()
    both = [first[0], pod(job, "worker", 1, "Succeeded")]
    assert lifecycle.detect(job, "Running", both[1], both, deleted=False).event == "TaskCompleted"


def test_a_podgroup_turning_unknown_raises_unknown_through_the_job_policies() -> None:
    job = one_task()
    job["spec"]["policies"] = [{"event": "Unknown", "action": "RestartJob"}]
    group = {"status": {"phase": "Unknown"}}
    request = lifecycle.detect_group("Running", group)
    assert request.event == "Unknown" and lifecycle.action_for(job, request) == "RestartJob"
    assert lifecycle.detect_group("Unknown", group) == lifecycle.Request()
    assert lifecycle.detect_group("Pending", {"status": {"phase": "Running"}}) == lifecycle.Request()


def test_a_job_of_too_many_pods_is_refused_naming_the_limit() -> None:
    job = one_task()
    job["spec"]["tasks"][0]["replicas"] = defaults.VCJOB_MAX_PODS + 1
    with pytest.raises(errors.InvalidObjectError, match=f"at most {defaults.VCJOB_MAX_PODS} pods per Job"):
        spec.validate(spec.defaulted(job))
    job["spec"]["tasks"][0]["replicas"] = defaults.VCJOB_MAX_PODS
    job["spec"]["tasks"][0]["minAvailable"] = 1
    assert spec.validate(job) == []


def test_creation_failures_note_the_apiserver_message_and_back_off() -> None:
    refused = [creation.Failure("j-w-0", 403, 'no PriorityClass with name "nope" was found')]
    status = creation.noted({"state": {"phase": "Pending", "lastTransitionTime": NOW}}, refused)
    assert status["state"]["phase"] == "Pending" and status["state"]["reason"] == "FailedCreatePod"
    assert 'failed to create pod j-w-0, err: no PriorityClass with name "nope" was found' in status["state"]["message"]
    many = [creation.Failure(f"p-{i}", 422, "invalid") for i in range(5)]
    assert creation.message(many).endswith("and 2 more")
    assert creation.retry_after(1, refused) == defaults.VCJOB_CREATE_RETRY_CLIENT
    assert creation.retry_after(2, refused) == 2 * defaults.VCJOB_CREATE_RETRY_CLIENT, "doubled per failed attempt"
    assert creation.retry_after(20, refused) == defaults.VCJOB_CREATE_RETRY_MOST, "at most five minutes apart"
    fault = [creation.Failure("p", 503, "unavailable")]
    assert creation.retry_after(1, fault) == defaults.VCJOB_CREATE_RETRY_FIRST < defaults.VCJOB_CREATE_RETRY_CLIENT
    # No answer (a template the apiserver chokes on times out) waits as long as a refusal.
    timeout = [creation.Failure("q", 0, "TimeoutError")]
    assert creation.retry_after(1, timeout) == defaults.VCJOB_CREATE_RETRY_CLIENT
    assert not creation.Failure("p", 409, "exists").refused and not creation.Failure("p", 429, "later").refused
    assert creation.message(refused, 20.0).endswith("; next attempt in 20 s")
    assert creation.noted({}, refused, 20.0)["state"]["message"].endswith("next attempt in 20 s")
    assert creation.cleared(status)["state"] == {"phase": "Pending", "lastTransitionTime": NOW}
    # Once every pod exists the note goes; the phase and its time stay.
    job = one_task()
    job["status"] = status
    pods = [pod(job, "worker", 0, "Pending"), pod(job, "worker", 1, "Pending")]
    plan = lifecycle.step(job, pods, lifecycle.Request(), now="2026-05-01T12:01:00Z")
    assert plan.status["state"] == {"phase": "Pending", "lastTransitionTime": NOW}
    still = lifecycle.step(job, pods[:1], lifecycle.Request(), now="2026-05-01T12:01:00Z")
    assert still.status["state"]["reason"] == "FailedCreatePod"
