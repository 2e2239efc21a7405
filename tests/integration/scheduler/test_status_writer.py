"""The status writer on a real apiserver: its queue coalesces per object, is bounded by the
objects, goes out paced with PodGroups first, skips no-op writes, tells a pod again only when
its reason changes, and drops a write whose object changed under it (409). A failed bind's Event
and condition go through the same queue: the binder's path makes no status request.

The writer is driven by hand (``submit``, then ``flush``) over a cache that follows the
apiserver, with pods no scheduler takes (a scheduler name of nobody's).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s

from bridge.k8s import client, kubeconfigs, paths
from scheduler.api import plan
from scheduler.io import binder, status
from scheduler.io import cache as sched_cache
from tests.support import schedbed
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration
T = TypeVar("T")
PODS = 20
ROOM, SHORT = "NotEnoughResources", "NotEnoughTasks"


def verdicts(ns: str, message: str, cause: str = ROOM, pods: int = PODS) -> plan.Plan:
    condition = plan.Condition("Unschedulable", "True", cause, f"group: {message}")
    group = plan.PodGroupVerdict(f"{ns}/g", "Inqueue", (condition,), 0, 0, 0)
    told = tuple(
        plan.PodVerdict(f"{ns}/g-{i}", "Warning", "FailedScheduling", f"pod: {message}", cause) for i in range(pods)
    )
    return plan.Plan(operations=(), podgroups=(group,), queues=(), pods=told)


async def until(probe: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


def with_cache(
    lc: cluster.LocalCluster, ns: str, body: Callable[[sched_cache.Cache, client.Client], Awaitable[T]]
) -> T:
    """``body(cache, conn)`` once the cache holds the test's PodGroup and pods."""

    async def main() -> T:
        async with client.Client(kubeconfigs.load(lc.kubeconfig)) as conn:
            held = sched_cache.Cache(conn)
            task = asyncio.create_task(held.run())
            try:
                await held.synced.wait()
                await until(
                    lambda: f"{ns}/g" in held.store["podgroups"] and all(held.pod(f"{ns}/g-{i}") for i in range(PODS)),
                    "the cache to hold the test's objects",
                )
                return await body(held, conn)
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    return asyncio.run(main())


@pytest.fixture
def gang(api: k8s.ApiClient, ns: str) -> str:
    schedbed.podgroup(api, ns, "g", PODS)
    schedbed.pods(api, ns, "g", PODS, scheduler="nobody-" + uuid.uuid4().hex[:6])
    return ns


def scheduled(pod: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in (pod.get("status") or {}).get("conditions") or [] if c["type"] == "PodScheduled"), None)


def shows(held: sched_cache.Cache, ns: str, message: str) -> bool:
    """Whether the cache shows every pod's condition with ``message``."""
    return all((scheduled(held.pod(f"{ns}/g-{i}") or {}) or {}).get("message") == message for i in range(PODS))


def test_writes_coalesce_per_object_stay_bounded_and_go_out_paced_podgroups_first(
    lc: cluster.LocalCluster, api: k8s.ApiClient, gang: str
) -> None:
    ns = gang

    async def body(held: sched_cache.Cache, conn: client.Client) -> float:
        writer = status.StatusWriter(conn, held, qps=20.0, burst=1, in_flight=1)
        assert writer.submit(verdicts(ns, "first")) == 1 + 2 * PODS  # the group, a condition and an Event a pod
        for cycle in range(10):  # ten cycles more, each with a new message: one entry an object still
            writer.submit(verdicts(ns, f"cycle {cycle}"))
        assert len(writer.queue) == 1 + 2 * PODS
        assert writer.counts.coalesced == 10  # the group's (its message is news); the pods' are not
        start = time.monotonic()
        await writer.flush()
        elapsed = time.monotonic() - start
        assert writer.counts.requests == 2 + 2 * PODS  # the group's status and Event, then the pods'
        assert not writer.queue and writer.counts.dropped == 0
        return elapsed

    elapsed = with_cache(lc, ns, body)
    assert elapsed >= (2 + 2 * PODS - 1) / 20.0 * 0.95  # 20 a second after a burst of one
    group = schedbed.get_pg(api, ns, "g")
    condition = group["status"]["conditions"][0]
    assert condition["message"] == "group: cycle 9"  # the latest won
    pods = [k8s.CoreV1Api(api).read_namespaced_pod(f"g-{i}", ns) for i in range(PODS)]
    for pod in pods:
        (cond,) = [c for c in pod.status.conditions if c.type == "PodScheduled"]
        assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", "pod: first")
    # PodGroup status first: written before any pod's condition (resourceVersions are the store's order).
    assert int(group["metadata"]["resourceVersion"]) < min(int(p.metadata.resource_version) for p in pods)
    told = Counter(
        (e.involved_object.kind, e.involved_object.name) for e in schedbed.events(api, ns) if e.type == "Warning"
    )
    assert told == {("PodGroup", "g"): 1, **{("Pod", f"g-{i}"): 1 for i in range(PODS)}}


def test_no_op_writes_are_skipped_and_a_pod_is_told_again_only_when_its_reason_changes(
    lc: cluster.LocalCluster, api: k8s.ApiClient, gang: str
) -> None:
    ns = gang

    async def body(held: sched_cache.Cache, conn: client.Client) -> None:
        writer = status.StatusWriter(conn, held)
        await writer.write(verdicts(ns, "first"))
        await until(lambda: shows(held, ns, "pod: first"), "the watch to show the conditions")
        assert writer.submit(verdicts(ns, "first")) == 0  # as shown: nothing to write
        assert writer.submit(verdicts(ns, "a count moved")) == 1  # the group's message; no pod's
        await writer.flush()
        before = writer.counts.requests
        assert writer.submit(verdicts(ns, "short of pods", cause=SHORT)) == 1 + 2 * PODS  # a new reason
        await writer.flush()
        assert writer.counts.requests - before == 2 + 2 * PODS
        await until(lambda: shows(held, ns, "pod: short of pods"), "the watch to show the new conditions")
        assert writer.submit(verdicts(ns, "short of pods", cause=SHORT)) == 0
        # A leader that lost its Lease drops what it queued: nothing of it goes out.
        queued, requests = writer.submit(verdicts(ns, "lost the lease", cause="Other")), writer.counts.requests
        writer.clear()
        await writer.flush()
        assert queued and writer.counts.requests == requests and writer.counts.dropped == queued

    with_cache(lc, ns, body)
    told = Counter(e.involved_object.name for e in schedbed.events(api, ns) if e.involved_object.kind == "Pod")
    assert told == {f"g-{i}": 2 for i in range(PODS)}  # one per reason, not one per message


def test_a_write_whose_object_changed_meanwhile_is_dropped_and_decided_again(
    lc: cluster.LocalCluster, api: k8s.ApiClient, gang: str
) -> None:
    ns = gang
    core = k8s.CoreV1Api(api)

    async def body(held: sched_cache.Cache, conn: client.Client) -> None:
        writer = status.StatusWriter(conn, held)
        writer.submit(verdicts(ns, "stale", pods=1))
        core.patch_namespaced_pod("g-0", ns, {"metadata": {"labels": {"touched": "yes"}}})  # someone else's write
        await writer.flush()
        assert writer.counts.dropped == 1  # the condition's precondition failed: 409, dropped
        assert scheduled(held.pod(f"{ns}/g-0") or {}) is None
        await until(
            lambda: ((held.pod(f"{ns}/g-0") or {}).get("metadata") or {}).get("labels", {}).get("touched") == "yes",
            "the watch to show the label",
        )
        assert writer.submit(verdicts(ns, "fresh", pods=1)) == 2  # decided again: the group's message, the condition
        await writer.flush()
        assert writer.counts.dropped == 1

    with_cache(lc, ns, body)
    (cond,) = [c for c in core.read_namespaced_pod("g-0", ns).status.conditions if c.type == "PodScheduled"]
    assert cond.message == "pod: fresh"


def test_a_failed_bind_is_told_through_the_writer_s_queue(
    lc: cluster.LocalCluster, api: k8s.ApiClient, gang: str
) -> None:
    """g-0 is bound to no node (the apiserver refuses it: 422); g-1 was bound elsewhere by another
    writer first (409 "already assigned"). Both failures are queued, not written, by the bind;
    the writer then sends g-0's Event and PodScheduled=False SchedulerError, and g-1's Event only."""
    ns = gang

    async def body(held: sched_cache.Cache, conn: client.Client) -> dict[str, str]:
        writer = status.StatusWriter(conn, held)
        uids = [(held.pod(f"{ns}/g-{i}") or {})["metadata"]["uid"] for i in (0, 1)]
        path = paths.resource("v1", "pods", namespace=ns, name="g-1", subresource="binding")
        await conn.request("POST", path, body=binder.binding(plan.Allocate(f"{ns}/g-1", uids[1], "elsewhere")))
        ops = [plan.Allocate(f"{ns}/g-0", uids[0], ""), plan.Allocate(f"{ns}/g-1", uids[1], "ours")]
        outcome = await binder.Binder(conn, held, writer, retries=0).execute(ops)
        assert writer.counts.requests == 0 and len(writer.queue) == 3  # two Events, one condition
        assert not [e for e in schedbed.events(api, ns) if e.reason == "FailedScheduling"]
        await writer.flush()
        assert writer.counts.requests == 3 and writer.counts.dropped == 0
        return dict(outcome.failed)

    failed = with_cache(lc, ns, body)
    assert sorted(failed) == [f"{ns}/g-0", f"{ns}/g-1"] and "already assigned" in failed[f"{ns}/g-1"], failed
    told = {e.involved_object.name: e.message for e in schedbed.events(api, ns) if e.reason == "FailedScheduling"}
    assert told == {
        "g-0": f"failed to bind {ns}/g-0 to : {failed[f'{ns}/g-0']}",
        "g-1": f"failed to bind {ns}/g-1 to ours: {failed[f'{ns}/g-1']}",
    }
    conditions = {
        i: scheduled(api.sanitize_for_serialization(k8s.CoreV1Api(api).read_namespaced_pod(f"g-{i}", ns)))
        for i in (0, 1)
    }
    assert conditions[0] is not None
    assert (conditions[0]["status"], conditions[0]["reason"], conditions[0]["message"]) == (
        "False",
        "SchedulerError",
        told["g-0"],
    )
    assert conditions[1] is None or conditions[1]["status"] == "True"  # bound elsewhere: never False
