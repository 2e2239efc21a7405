"""The Volcano Job controller paces itself to the apiserver, on the real apiserver with our
scheduler and the simulated nodes (4 nodes of 8 cpu). Pod calls are counted by the apiserver
itself (``apiserver_request_total``, ``vcjobs.pod_calls``); each test runs alone in its
namespace, so the calls in a window are this test's.

- a 10,000-replica job with a gang of 10 gets waves sized to what the scheduler places, not
  10,000 pods;
- a job deleted in the middle of a 10,000-pod gang's creation stops creating within 2 s, also
  when a finalizer holds it with a deletionTimestamp;
- a template the apiserver refuses costs one call per attempt (slow start), attempts back off
  per job, and none follows the job's deletion.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kubernetes import client as k8s

from bridge import defaults
from tests.integration.test_vcjob_faults import job, job_events, state
from tests.support import apiserver, schedthread, vcjobs

pytestmark = pytest.mark.integration
scheduler = vcjobs.scheduler  # the fixtures
env = vcjobs.env
Env = tuple[k8s.ApiClient, str, schedthread.SchedThread]
HOLD = "test.vbridge.io/hold"  # a finalizer nobody serves: the job stays with its deletionTimestamp
ONE_CPU = {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}


def posts(api: k8s.ApiClient, code: str = "201") -> int:
    return vcjobs.pod_calls(api)[("POST", code)]


def delete_job(api: k8s.ApiClient, ns: str, name: str) -> None:
    k8s.CustomObjectsApi(api).delete_namespaced_custom_object(*vcjobs.VC, ns, "jobs", name)


def counts(api: k8s.ApiClient, ns: str, name: str) -> tuple[int, int]:
    """(pods of the job, of which placed: bound to a node)."""
    pods = vcjobs.pods_of(api, ns, name).values()
    return len(pods), sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))


def test_a_huge_job_with_a_small_gang_gets_waves_the_cluster_can_place_not_every_pod(env: Env) -> None:
    api, ns, _ = env
    before, twice = posts(api), posts(api, "409")
    body = job("huge", 10_000, minAvailable=10, pod=ONE_CPU)  # 32 cpu on the bed: 32 pods at most run
    body["spec"]["tasks"][0]["minAvailable"] = 10
    vcjobs.create_job(api, ns, body)
    seen: list[tuple[int, int]] = []

    def settled() -> bool:
        seen.append(counts(api, ns, "huge"))
        return len(seen) > 10 and seen[-1][0] >= defaults.VCJOB_WAVE_LEAST and len(set(seen[-10:])) == 1

    apiserver.eventually(settled, 90, lambda: f"the pod count to settle: {seen[-5:]}", every=0.5)
    total, placed = seen[-1]
    assert 0 < placed <= 32
    assert total <= placed + max(defaults.VCJOB_WAVE_LEAST, placed), (
        f"{total} pods with {placed} placed: beyond the gang, at most as many pending as placed (at least a wave)"
    )
    made = posts(api) - before
    assert made == total, f"{made} pod creates for {total} pods: none refused"
    assert posts(api, "409") == twice, "a pod asked for twice: the sync read stale pods"
    time.sleep(3)
    assert counts(api, ns, "huge")[0] == total, "no further wave while nothing more is placed"
    delete_job(api, ns, "huge")


@pytest.mark.parametrize("held", [False, True], ids=["deleted", "deletion-timestamp"])
def test_a_job_deleted_while_its_gang_is_being_created_stops_creating_within_2_s(env: Env, held: bool) -> None:
    """``held``: a finalizer keeps the job, with its deletionTimestamp, until the test lets it go."""
    api, ns, _ = env
    before = posts(api)
    body = job("gang", 10_000)  # minAvailable 10,000: one gang, made together
    if held:
        body["metadata"]["finalizers"] = [HOLD]
    vcjobs.create_job(api, ns, body)
    apiserver.eventually(lambda: posts(api) - before >= 150, 60, "creation under way", every=0.2)
    first, t1 = posts(api), time.monotonic()
    time.sleep(2)
    second, t2 = posts(api), time.monotonic()
    # The job's bucket: at most its burst plus its rate over the window (1 s more for the calls
    # already in flight at its start and the time the counter takes to read).
    most = defaults.VCJOB_JOB_BURST + defaults.VCJOB_JOB_QPS * (t2 - t1 + 1)
    assert 0 < second - first <= most, f"{second - first} pod creates in {t2 - t1:.1f} s for one job mid-gang"
    delete_job(api, ns, "gang")
    try:
        time.sleep(2)
        settled = posts(api)
        time.sleep(4)
        assert posts(api) == settled, f"{posts(api) - settled} pod creates 2 to 6 s after the job was deleted"
        assert len(vcjobs.pods_of(api, ns, "gang")) < 10_000
        if held:
            assert vcjobs.get_job(api, ns, "gang")["metadata"]["deletionTimestamp"]
    finally:
        if held:
            patch = {"metadata": {"finalizers": None}}
            k8s.CustomObjectsApi(api).patch_namespaced_custom_object(*vcjobs.VC, ns, "jobs", "gang", patch)


def test_a_refused_template_costs_one_call_per_attempt_backs_off_and_stops_at_deletion(env: Env) -> None:
    api, ns, _ = env
    resources = {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}  # 422: requests above limits
    invalid: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": resources}]}
    before = posts(api, "422")
    body = job("refused", 1_000, minAvailable=1, pod=invalid)  # a gang of 1: its group is admitted
    body["spec"]["tasks"][0]["minAvailable"] = 1
    vcjobs.create_job(api, ns, body)
    first = apiserver.eventually(lambda: job_events(api, ns, "refused", "FailedCreatePod"), what="FailedCreatePod")
    assert "must be less than or equal to cpu limit" in first[0].message and "next attempt in" in first[0].message
    # The status and the Event are written side by side, in no promised order.
    in_status = lambda: state(api, ns, "refused").get("reason") == "FailedCreatePod"  # noqa: E731
    apiserver.eventually(in_status, what="the reason in the job's status")
    time.sleep(2 * defaults.VCJOB_CREATE_RETRY_CLIENT + 2)  # attempts at 0, 5 and 15 s
    attempts = posts(api, "422") - before
    events = len(job_events(api, ns, "refused", "FailedCreatePod"))
    assert 2 <= attempts <= 3 and events == attempts, (
        f"{attempts} refused creates, {events} Events in 12 s for a 1,000-pod job: one call an attempt, "
        f"the next after {defaults.VCJOB_CREATE_RETRY_CLIENT} s, doubling"
    )
    delete_job(api, ns, "refused")
    after_delete = posts(api, "422")
    time.sleep(4 * defaults.VCJOB_CREATE_RETRY_CLIENT)  # past the next attempt's time
    assert posts(api, "422") == after_delete, "a create was tried after the job was deleted"
