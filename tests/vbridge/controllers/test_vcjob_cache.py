"""The Volcano Job controller's cache: our own writes stand until the watch catches up, created
pods count until seen, deleted ones count as terminating, relisted stubs are attributed."""

from __future__ import annotations

from typing import Any

from bridge import patching
from vbridge.controllers import vcjob_cache


def job(rv: str, phase: str = "") -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": "j", "uid": "u", "resourceVersion": rv},
        "status": {"state": {"phase": phase}},
    }


def pod(name: str, phase: str = "Running", rv: str = "1", **meta: Any) -> dict[str, Any]:
    labels = {"volcano.sh/job-name": "j", "volcano.sh/task-spec": "w"}
    return {
        "metadata": {
            "namespace": "ns",
            "name": name,
            "labels": labels,
            "annotations": labels,
            "resourceVersion": rv,
            "ownerReferences": [{"uid": "u"}],
            **meta,
        },
        "status": {"phase": phase},
    }


def test_our_write_stands_until_the_watch_brings_a_newer_job() -> None:
    cache = vcjob_cache.Cache()
    cache.on_job("ADDED", job("10", "Running"))
    cache.wrote_job(job("12", "Restarting"))
    cache.on_job("MODIFIED", job("11", "Running"))  # an echo from before our write
    assert cache.jobs["ns/j"]["status"]["state"]["phase"] == "Restarting"
    cache.on_job("MODIFIED", job("13", "Pending"))
    assert cache.jobs["ns/j"]["status"]["state"]["phase"] == "Pending"
    cache.on_job("DELETED", job("14"))
    assert "ns/j" not in cache.jobs


def test_created_pods_count_until_seen_and_deleted_ones_are_terminating() -> None:
    cache = vcjob_cache.Cache()
    cache.creating("ns/j", ["j-w-0", "j-w-1"], now=0.0)
    assert cache.in_flight("ns/j", now=1.0) == {"j-w-0", "j-w-1"}
    cache.not_created("ns/j", "j-w-1")
    change = cache.on_pod("ADDED", pod("j-w-0", "Pending"))
    assert change is not None and change.before is None and cache.in_flight("ns/j", now=1.0) == set()
    cache.creating("ns/j", ["j-w-2"], now=0.0)
    assert cache.in_flight("ns/j", now=1000.0) == set(), "an expectation expires"
    cache.deleting("ns/j", "j-w-0")
    [seen] = cache.pods("ns/j", "u")
    assert seen["metadata"]["deletionTimestamp"], "ours being deleted count as terminating"
    assert cache.pods("ns/j", "another-uid") == []


def test_a_relisted_deletion_stub_is_attributed_to_its_job_and_counts_are_kept() -> None:
    cache = vcjob_cache.Cache()
    cache.on_pod("ADDED", pod("j-w-0"))
    cache.on_pod("MODIFIED", pod("j-w-0", "Succeeded", rv="2"))
    assert cache.succeeded("ns/j", "w") == 1
    change = cache.on_pod("DELETED", {"metadata": {"namespace": "ns", "name": "j-w-0"}})
    assert change is not None and change.job == "ns/j" and change.deleted and change.before == "Succeeded"
    assert change.obj["metadata"]["labels"]["volcano.sh/job-name"] == "j", "the pod as last held"
    assert cache.succeeded("ns/j", "w") == 0
    assert cache.on_pod("DELETED", {"metadata": {"namespace": "ns", "name": "other"}}) is None


def test_a_status_patch_removes_what_the_new_status_lacks() -> None:
    old = {
        "state": {"phase": "Pending", "reason": "FailedCreatePod"},
        "taskStatusCount": {"w": {"phase": {"Running": 2}}},
    }
    new = {"state": {"phase": "Pending"}, "taskStatusCount": {"w": {"phase": {"Succeeded": 2}}}}
    assert patching.merge_patch(old, new) == {
        "state": {"phase": "Pending", "reason": None},
        "taskStatusCount": {"w": {"phase": {"Succeeded": 2, "Running": None}}},
    }
