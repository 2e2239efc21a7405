"""Chosen calls failed: one request of the binder, the status writers or the reconcilers
answered 500, 409 or 429 (with and without Retry-After), and another writer acting just before
the scheduler's own bind or status write (a real 409 from a real conflict).

The scheduler and the bridge reach the apiserver through ``tests.support.faultproxy``; the
node simulator and the test's own client do not. Verdicts are counted from the apiserver
(``tests.support.accounting``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import NamedTuple

import pytest
from kubernetes import client as k8s

from tests.builders import vcjob
from tests.reliability import conftest
from tests.support import accounting, apiserver, faultproxy, proxiedbed, schedbed, schedthread
from vbridge.localcluster import cluster

pytestmark = [pytest.mark.reliability, pytest.mark.integration]
NAME = "rel-calls"
PG = "/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups"
JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/{ns}/jobs"


class Bed(NamedTuple):
    proxy: faultproxy.FaultProxy
    sched: schedthread.SchedThread
    nodes: list[str]


@pytest.fixture(scope="module")
def bed(rlc: cluster.LocalCluster, rapi: k8s.ApiClient) -> Iterator[Bed]:
    proxy = faultproxy.FaultProxy(rlc)
    proxy.start()
    try:
        with proxiedbed.running(
            rlc, rapi, proxy, name=NAME, prefix="calls", run_seconds=2.0, count=3, cpu="8", memory="32Gi"
        ) as running:
            yield Bed(proxy, running.sched, running.nodes)
    finally:
        proxy.stop()


def whole(api: k8s.ApiClient, ns: str, jobs: list[str], gangs: dict[str, int]) -> accounting.Tally | None:
    tally = accounting.count(api, [ns])
    done = all(tally.jobs.get(f"{ns}/{j}") == "Completed" for j in jobs)
    bound = all(len(schedbed.bound(api, ns, g)) == n for g, n in gangs.items())
    return tally if done and bound else None


@pytest.mark.timeout(300)
def test_r10_chosen_calls_answered_500_409_429(
    bed: Bed, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe, caplog: pytest.LogCaptureFixture
) -> None:
    """Each of these is answered by the proxy, never reaching the apiserver: the first two binds of
    gang a (500), two binds of gang b (429 with Retry-After: 1, the client's own retry) and two
    of gang c (429 without it: the binder's retry), one bind of gang d (a 409 with no conflict
    behind it), the first status write of gang a's PodGroup (500), the bridge's first PodGroup
    create and first pod create for the Volcano Job (500, 429) and its first job status write
    (409); and the connection of the PodScheduled=False write for a pod that fits no node is
    dropped. Every gang must end whole, the job Completed, nothing bound twice, the pod told why,
    and no scheduler cycle may fail."""
    proxy = bed.proxy
    binding = rf"/api/v1/namespaces/{rns}/pods/{{}}-\d+/binding"
    rules = {
        "bind 500": proxy.fail("POST", binding.format("a"), 500, times=2),
        "bind 429 Retry-After": proxy.fail("POST", binding.format("b"), 429, times=2, retry_after=1),
        "bind 429": proxy.fail("POST", binding.format("c"), 429, times=2),
        "bind 409": proxy.fail("POST", binding.format("d"), 409),
        "PodGroup status 500": proxy.fail("PATCH", PG.format(ns=rns) + "/a", 500),
        "PodGroup create 500": proxy.fail("POST", PG.format(ns=rns), 500),
        "pod create 429": proxy.fail("POST", f"/api/v1/namespaces/{rns}/pods", 429, retry_after=1),
        "job status 409": proxy.fail("PATCH", JOBS.format(ns=rns) + r"/job/status", 409),
        "pod condition dropped": proxy.drop("PATCH", f"/api/v1/namespaces/{rns}/pods/huge-0/status"),
    }
    schedbed.podgroup(rapi, rns, "huge", 1)
    schedbed.pods(rapi, rns, "huge", 1, scheduler=NAME, cpu="64")
    t0 = time.monotonic()
    body = vcjob.simple("job", 3, run_seconds=2.0)
    body["spec"]["schedulerName"] = NAME
    k8s.CustomObjectsApi(rapi).create_namespaced_custom_object(*accounting.VC, rns, "jobs", body)
    gangs = {g: 3 for g in "abcd"}
    for group, size in gangs.items():
        schedbed.podgroup(rapi, rns, group, size)
        schedbed.pods(rapi, rns, group, size, scheduler=NAME, cpu="500m", run_seconds=30.0)
    tally = apiserver.eventually(lambda: whole(rapi, rns, ["job"], gangs), 150, "every gang whole and the job done")
    proxy.clear()
    missed = [name for name, rule in rules.items() if len(rule.hits) < rule.times]
    assert not missed, f"faults never injected: {missed}"
    assert not tally.partial() and not tally.double_binds and not tally.orphan_pods, tally
    apiserver.eventually(lambda: schedbed.phase(rapi, rns, "a") == "Running", 30, "gang a's PodGroup Running")

    def unschedulable() -> bool:
        pod = k8s.CoreV1Api(rapi).read_namespaced_pod("huge-0", rns)
        return any(c.type == "PodScheduled" and c.status == "False" for c in (pod.status.conditions or []))

    apiserver.eventually(unschedulable, 30, "the pod that fits nowhere told why after the dropped write")
    failed = [r.getMessage() for r in caplog.records if "scheduling cycle failed" in r.getMessage()]
    assert not failed, failed
    told = [m for i in range(3) for m in failed_scheduling(rapi, rns, f"d-{i}")]
    assert told and all("409" in m and "being deleted" not in m for m in told), told
    observe(
        f"{sum(len(r.hits) for r in rules.values())} calls answered by the proxy ({', '.join(rules)}): 4 gangs "
        f"whole, the Volcano Job Completed, 0 partial, 0 double binds, 0 orphans in {time.monotonic() - t0:.0f} s"
    )


def bind_first(api: k8s.ApiClient, ns: str, node: str | None) -> faultproxy.Action:
    """Another writer: binds the pod to ``node`` (the scheduler's own choice when None) first."""

    def act(path: str, body: bytes) -> None:
        pod = path.rsplit("/", 2)[-2]
        target = node or json.loads(body)["target"]["name"]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod},
            "target": {"kind": "Node", "name": target},
        }
        k8s.CoreV1Api(api).create_namespaced_binding(ns, binding, _preload_content=False)

    return act


def failed_scheduling(api: k8s.ApiClient, ns: str, pod: str) -> list[str]:
    """The pod's FailedScheduling Events about its bind; not the gang's wait while the test is
    still creating its members ("2 of 3 pods exist: ...", the group's NotEnoughTasks)."""
    return [
        e.message
        for e in schedbed.events(api, ns)
        if e.reason == "FailedScheduling" and e.involved_object.name == pod and " pods exist" not in e.message
    ]


@pytest.mark.timeout(240)
def test_r11_a_member_bound_by_another_writer_just_before_the_schedulers_bind(
    bed: Bed, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """Gang s: just before the scheduler's bind of s-1 reaches the apiserver, another writer binds
    s-1 to the same node (the apiserver answers the scheduler 409 "already assigned"): that is a
    success, with no FailedScheduling. Gang o: another writer binds o-1 to a different node first:
    the pod stays there, the scheduler says so once (FailedScheduling, no PodScheduled=False), its
    cache follows the apiserver and the gang is whole."""
    same = bed.proxy.before("POST", f"/api/v1/namespaces/{rns}/pods/s-1/binding", bind_first(rapi, rns, None))
    schedbed.podgroup(rapi, rns, "s", 3)
    schedbed.pods(rapi, rns, "s", 3, scheduler=NAME, cpu="500m", run_seconds=60.0)
    apiserver.eventually(lambda: len(schedbed.bound(rapi, rns, "s")) == 3, 60, "gang s bound")
    assert same.hits, "the other writer never ran"
    assert not failed_scheduling(rapi, rns, "s-1"), failed_scheduling(rapi, rns, "s-1")

    def elsewhere(path: str, body: bytes) -> None:
        chosen = json.loads(body)["target"]["name"]
        bind_first(rapi, rns, next(n for n in bed.nodes if n != chosen))(path, body)

    other = bed.proxy.before("POST", f"/api/v1/namespaces/{rns}/pods/o-1/binding", elsewhere)
    schedbed.podgroup(rapi, rns, "o", 3)
    schedbed.pods(rapi, rns, "o", 3, scheduler=NAME, cpu="500m", run_seconds=60.0)
    apiserver.eventually(lambda: len(schedbed.bound(rapi, rns, "o")) == 3, 60, "gang o bound")
    assert other.hits, "the other writer never ran"
    said = apiserver.eventually(lambda: failed_scheduling(rapi, rns, "o-1"), 30, "o-1's FailedScheduling")
    assert "already assigned" in said[0], said
    pod = k8s.CoreV1Api(rapi).read_namespaced_pod("o-1", rns)
    conditions = {c.type: c.status for c in pod.status.conditions or []}
    assert conditions.get("PodScheduled") != "False", pod.status.conditions
    key = f"{rns}/o-1"
    apiserver.eventually(
        lambda: (
            bed.sched.scheduler is not None
            and (bed.sched.scheduler.cache.pod(key) or {}).get("spec", {}).get("nodeName") == pod.spec.node_name
        ),
        30,
        "the scheduler's cache shows o-1 where the other writer put it",
    )
    tally = accounting.count(rapi, [rns])
    assert not tally.partial() and not tally.double_binds, tally
    observe(
        "another writer bound s-1 to the scheduler's node just before its bind: 409 settled as success, no "
        f"FailedScheduling; o-1 bound elsewhere first: stays on {pod.spec.node_name}, one FailedScheduling "
        "'already assigned', no PodScheduled=False, cache follows; 2 gangs whole, 0 double binds"
    )


def rewrite(api: k8s.ApiClient, ns: str, name: str, phase: str) -> None:
    body = {"status": {"phase": phase, "conditions": [], "running": 0}}
    k8s.CustomObjectsApi(api).patch_namespaced_custom_object(*apiserver.PG, ns, "podgroups", name, body)


@pytest.mark.timeout(240)
def test_r14_a_podgroup_status_rewritten_by_another_writer_converges(
    bed: Bed, rapi: k8s.ApiClient, rns: str, observe: conftest.Observe
) -> None:
    """Another writer changes the PodGroup's status just before the scheduler's own write (a real
    409 on its resourceVersion precondition), and later rewrites the status of the Running group
    outright (phase Pending, no conditions): the scheduler's status comes back each time."""
    path = PG.format(ns=rns) + "/w"
    race = bed.proxy.before("PATCH", path, lambda p, b: rewrite(rapi, rns, "w", "Unknown"))
    schedbed.podgroup(rapi, rns, "w", 2)
    schedbed.pods(rapi, rns, "w", 2, scheduler=NAME, cpu="500m", run_seconds=120.0)
    apiserver.eventually(lambda: schedbed.phase(rapi, rns, "w") == "Running", 60, "the group Running after the race")
    assert race.hits, "the other writer never raced the scheduler"
    settled = lambda: (schedbed.get_pg(rapi, rns, "w").get("status") or {}).get("running") == 2  # noqa: E731
    apiserver.eventually(settled, 60, "both members running in the group's status")
    bed.sched.cycles.next(2)  # the scheduler has written what it wants: nothing left to write
    t0 = time.monotonic()
    rewrite(rapi, rns, "w", "Pending")
    apiserver.eventually(
        lambda: schedbed.phase(rapi, rns, "w") == "Running", 30, "the scheduler's status back after a rewrite"
    )
    took = time.monotonic() - t0
    running = (schedbed.get_pg(rapi, rns, "w").get("status") or {}).get("running")
    assert running == 2, running
    observe(
        f"a status write raced by another writer (409) re-decided and written; a rewrite of a Running group's "
        f"status to Pending corrected in {took:.1f} s (phase Running, running 2)"
    )
