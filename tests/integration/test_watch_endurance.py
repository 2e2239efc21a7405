"""Every watcher we run lasts across many watch ends and bookmarks with no list after its first.

On the real apiserver, whose watch cache sends a bookmark about 2 s before each watch's
``timeoutSeconds`` deadline (cacheWatcher.nextBookmarkTime: min(now + 1 min, deadline - 2 s)),
with watches asked to end after ``TIMEOUT`` seconds (the client's ``watch_timeout``; production
asks for ``defaults.WATCH_TIMEOUT_SECONDS``). The cache sends a bookmark only when its kind has
changed since the version the watch started from (cacher.go: a bookmark older than the watch is
not sent), so every watched kind is changed each second: a pod made and one deleted, and one
object of every other kind relabelled.

The watchers, all in one process on one client: the scheduler's cache (pods and nodes through
its views, PodGroups, Queues, PriorityClasses whole), the facts cache of the webhook and the
reconcilers, every reconciler ``vbridge.controllers.wiring`` builds (Volcano Jobs, their pods and
PodGroups, Commands, Spark pods; the generic reconcilers' kinds have no CRD here) and the node
simulator. Each watch (``watching.where``: path and selectors) must cross ``INTERVALS`` bookmark
intervals (a bookmark, then a normal end, resumed) with zero lists but its first, no dropped
stream and nothing skipped, and the cache must hold what changed meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bridge import defaults, keys
from bridge import facts as facts_mod
from bridge.adapters.vcjob import names
from bridge.k8s import client, kubeconfigs, paths, watching
from scheduler.io import cache as cache_mod
from tests.builders import vcjob
from tests.support import watchcounts
from vbridge.controllers import wiring
from vbridge.localcluster import cluster
from vbridge.nodesim import simulator

pytestmark = pytest.mark.integration

TIMEOUT = 4  # seconds each watch is asked to stay open: a bookmark after ~2 s, then its end
INTERVALS = 5
PODS = paths.resource("v1", "pods")
# Every watch a run of these watchers makes (the scheduler's five, the facts' namespaces, the
# Volcano Job controller's three, Commands, the Spark reconciler's pods, the node simulator's).
EXPECTED = {
    *(paths.resource(version, plural) for version, plural in cache_mod.KINDS.values()),
    paths.resource("v1", "namespaces"),
    paths.resource(defaults.BATCH_API, "jobs"),
    watching.where(PODS, {"labelSelector": names.JOB_NAME}),
    watching.where(paths.resource(defaults.PODGROUP_API, "podgroups"), {"labelSelector": names.JOB_NAME}),
    paths.resource(defaults.BUS_API, "commands"),
    watching.where(PODS, {"labelSelector": keys.SPARK_ROLE}),
    watching.where(PODS, {"fieldSelector": "spec.nodeName!="}),
}


def _objects(ns: str, tag: str) -> list[tuple[str, dict[str, Any]]]:
    """(collection, body): one object of every watched kind but pods, to relabel each second."""
    meta = {"name": tag}

    def body(api_version: str, kind: str, **rest: Any) -> dict[str, Any]:
        return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}

    return [
        (paths.resource("v1", "nodes"), body("v1", "Node")),
        (paths.resource(defaults.QUEUE_API, "queues"), body(defaults.QUEUE_API, "Queue", spec={"weight": 1})),
        (
            paths.resource("scheduling.k8s.io/v1", "priorityclasses"),
            body("scheduling.k8s.io/v1", "PriorityClass", value=7),
        ),
        (
            paths.resource(defaults.PODGROUP_API, "podgroups", namespace=ns),
            body(defaults.PODGROUP_API, "PodGroup", spec={"minMember": 1}),
        ),
        (paths.resource(defaults.BATCH_API, "jobs", namespace=ns), {**vcjob.simple(tag, 1), "metadata": meta}),
        (
            paths.resource(defaults.BUS_API, "commands", namespace=ns),
            body(
                defaults.BUS_API,
                "Command",
                action="AbortJob",
                target={"apiVersion": defaults.BATCH_API, "kind": "Job", "name": "absent", "uid": "absent"},
            ),
        ),
    ]


@contextlib.asynccontextmanager
async def churning(api: client.Client, ns: str) -> AsyncIterator[list[str]]:
    """Each second, until the block ends: a pod made and the one before deleted, the namespace and
    one object of every other kind relabelled. Yields the pods made; the objects go afterwards."""
    tag = "watch-" + uuid.uuid4().hex[:6]
    made: list[str] = []
    objects = _objects(ns, tag)
    for collection, body in objects:
        await api.request("POST", collection, body=body)
    touched = [*(f"{c}/{tag}" for c, _ in objects), paths.resource("v1", "namespaces", name=ns)]
    pods = paths.resource("v1", "pods", namespace=ns)

    async def churn() -> None:
        while True:
            name = f"{tag}-{len(made)}"
            body = {
                "metadata": {"name": name},
                "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "i"}]},
            }
            await api.request("POST", pods, body=body)
            if made:
                await api.request("DELETE", f"{pods}/{made[-1]}", params={"gracePeriodSeconds": 0})
            made.append(name)
            label = {"metadata": {"labels": {"tick": str(len(made))}}}
            for path in touched:
                await api.request("PATCH", path, body=label, content_type=client.MERGE)
            await asyncio.sleep(1.0)

    task = asyncio.create_task(churn())
    try:
        yield made
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for collection, _ in objects[:3]:  # the cluster-scoped ones; the rest go with the namespace
            await api.request("DELETE", f"{collection}/{tag}")


def _long_enough(c: dict[str, int], intervals: int) -> bool:
    """Each watcher of a path (one per first list) through ``intervals`` bookmarks and ends."""
    watchers = max(c["list:first"], 1)
    return c["bookmarks"] >= intervals * watchers and c["resume:end"] >= intervals * watchers


async def _crossed(before: watching.Stats, intervals: int, timeout: float) -> None:
    """Until every expected watch has seen ``intervals`` bookmarks and as many normal ends."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        counts = {w: watchcounts.gained(before, w) for w in sorted(EXPECTED)}
        short = {w: c for w, c in counts.items() if not _long_enough(c, intervals)}
        if not short:
            return
        assert asyncio.get_running_loop().time() < deadline, f"not {intervals} bookmark intervals yet: {short}"
        await asyncio.sleep(0.5)


def test_every_watcher_crosses_bookmark_intervals_with_no_relist(
    control_plane: cluster.LocalCluster, namespace: str
) -> None:
    before = watching.STATS.copy()

    async def main() -> tuple[list[str], set[str]]:
        async with client.Client(kubeconfigs.load(control_plane.kubeconfig), watch_timeout=TIMEOUT) as api:
            facts = facts_mod.Facts()
            cache = cache_mod.Cache(api)
            reconcilers = wiring.reconcilers(api, facts, scheduler_name="nobody", templates_by_name={})
            work = [cache.run(), facts.run(api), simulator.Simulator(api, []).serve(), *(r.run() for r in reconcilers)]
            tasks = [asyncio.create_task(w) for w in work]
            try:
                async with asyncio.timeout(30):
                    while not (cache.synced.is_set() and facts.synced and watchcounts.listed(before) >= EXPECTED):
                        await asyncio.sleep(0.1)
                async with churning(api, namespace) as made:
                    await _crossed(before, INTERVALS, TIMEOUT * (INTERVALS + 4) + 20)
                    last = f"{namespace}/{made[-1]}"
                    async with asyncio.timeout(10):  # what changed reaches the cache
                        while last not in cache.store["pods"]:
                            await asyncio.sleep(0.05)
                    held = {key for key in cache.store["pods"] if key.startswith(f"{namespace}/")}
                return made, held
            finally:
                for task in tasks:
                    task.cancel()
                results = await asyncio.gather(*tasks, return_exceptions=True)
                assert all(isinstance(r, asyncio.CancelledError) for r in results), results  # none ended

    made, held = asyncio.run(main())
    counts = {w: watchcounts.gained(before, w) for w in sorted(EXPECTED)}
    for w, c in counts.items():
        print(w, c)
    for w, c in counts.items():
        assert c["list:gone"] == 0 and c["list:error"] == 0, (w, c)
        assert c["resume:dropped"] == 0 and c["skipped"] == 0, (w, c)
        assert _long_enough(c, INTERVALS), (w, c)
    # One first list per watcher: the scheduler's cache and the facts cache both watch Queues and
    # PriorityClasses; nodes only the scheduler.
    assert counts[paths.resource(defaults.QUEUE_API, "queues")]["list:first"] == 2
    assert counts[paths.resource("v1", "nodes")]["list:first"] == 1
    assert held == {f"{namespace}/{made[-1]}"}  # every deletion seen across the resumed watches
