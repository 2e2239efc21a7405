"""Every watcher we run lasts across many watch ends and bookmarks with no list after its first.

On the real apiserver, whose watch cache sends a bookmark about 2 s before each watch's
``timeoutSeconds`` deadline (cacheWatcher.nextBookmarkTime: min(now + 1 min, deadline - 2 s)),
with watches asked to end after ``TIMEOUT`` seconds (the client's ``watch_timeout``; production
asks for ``defaults.WATCH_TIMEOUT_SECONDS``): the scheduler's cache (pods and nodes through its
views, PodGroups, Queues, PriorityClasses whole), the facts cache of the webhook and the
reconcilers, every reconciler ``vbridge.controllers.wiring`` builds (Volcano Jobs, their pods and
PodGroups, Commands, Spark pods, the kinds of the generic reconcilers whose CRDs exist) and the
node simulator, all in one process on one client, while pods come and go. Each watched path must
cross at least ``INTERVALS`` bookmark intervals (a bookmark, then a normal end, resumed) with
zero lists but its first, no dropped stream and nothing skipped; the cache must still hold what
changed during them.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from bridge import defaults
from bridge import facts as facts_mod
from bridge.k8s import client, kubeconfigs, paths, watching
from scheduler.io import cache as cache_mod
from tests.support import watchcounts
from vbridge.controllers import wiring
from vbridge.localcluster import cluster
from vbridge.nodesim import simulator

pytestmark = pytest.mark.integration

TIMEOUT = 4  # seconds each watch is asked to stay open: a bookmark after ~2 s, then its end
INTERVALS = 5
# The paths every run watches, whatever CRDs exist: the scheduler's five, the facts' namespaces,
# the Volcano Job controller's jobs and Commands.
REQUIRED = {
    *(paths.resource(version, plural) for version, plural in cache_mod.KINDS.values()),
    paths.resource("v1", "namespaces"),
    paths.resource(defaults.BATCH_API, "jobs"),
    paths.resource(defaults.BUS_API, "commands"),
}


def pod(name: str) -> dict[str, Any]:
    """A pod nobody schedules: it only comes and goes."""
    container = {"name": "c", "image": "busybox"}
    return {"metadata": {"name": name}, "spec": {"schedulerName": "nobody", "containers": [container]}}


async def _churn(api: client.Client, namespace: str, stop: asyncio.Event) -> list[str]:
    """A pod created and the one before it deleted each second until ``stop``; the names left."""
    path = paths.resource("v1", "pods", namespace=namespace)
    made: list[str] = []
    while not stop.is_set():
        name = f"churn-{len(made)}"
        await api.request("POST", path, body=pod(name))
        if made:
            await api.request("DELETE", f"{path}/{made[-1]}", params={"gracePeriodSeconds": 0})
        made.append(name)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
    return made


async def _crossed(before: watching.Stats, watched: set[str], intervals: int, timeout: float) -> None:
    """Until every watched path has seen ``intervals`` bookmarks and as many normal ends."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        counts = {path: watchcounts.gained(before, path) for path in sorted(watched)}
        short = {p: c for p, c in counts.items() if c["bookmarks"] < intervals or c["resume:end"] < intervals}
        if not short:
            return
        assert asyncio.get_running_loop().time() < deadline, f"not {intervals} bookmark intervals yet: {short}"
        await asyncio.sleep(0.5)


def test_every_watcher_crosses_bookmark_intervals_with_no_relist(
    control_plane: cluster.LocalCluster, namespace: str
) -> None:
    before = watching.STATS.copy()

    async def main() -> tuple[set[str], list[str], dict[str, Any]]:
        async with client.Client(kubeconfigs.load(control_plane.kubeconfig), watch_timeout=TIMEOUT) as api:
            facts = facts_mod.Facts()
            cache = cache_mod.Cache(api)
            reconcilers = wiring.reconcilers(api, facts, scheduler_name="nobody", templates_by_name={})
            work = [cache.run(), facts.run(api), simulator.Simulator(api, []).serve(), *(r.run() for r in reconcilers)]
            tasks = [asyncio.create_task(w) for w in work]
            try:
                async with asyncio.timeout(30):
                    await cache.synced.wait()
                    while not facts.synced or not watchcounts.listed(before) >= REQUIRED:
                        await asyncio.sleep(0.1)
                watched = watchcounts.listed(before)
                stop = asyncio.Event()
                churn = asyncio.create_task(_churn(api, namespace, stop))
                await _crossed(before, watched, INTERVALS, TIMEOUT * (INTERVALS + 4) + 20)
                stop.set()
                made = await churn
                last = made[-1]
                async with asyncio.timeout(10):  # the watch still delivers: the last pod reaches the cache
                    while f"{namespace}/{last}" not in cache.store["pods"]:
                        await asyncio.sleep(0.05)
                return watched, made, dict(cache.store["pods"])
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                for task in tasks:
                    assert not task.done() or task.cancelled(), f"a watcher ended: {task.exception()}"

    watched, made, pods = asyncio.run(main())
    assert watched >= REQUIRED
    counts = {path: watchcounts.gained(before, path) for path in sorted(watched)}
    for path, c in counts.items():
        print(path, c)
    for path, c in counts.items():
        assert c["list:gone"] == 0 and c["list:error"] == 0, (path, c)
        assert c["resume:dropped"] == 0 and c["skipped"] == 0, (path, c)
        assert c["bookmarks"] >= INTERVALS and c["resume:end"] >= INTERVALS, (path, c)
    # One first list per watcher: the scheduler's cache and the facts cache both watch Queues and
    # PriorityClasses, the Volcano Job controller and the node simulator both watch pods.
    assert counts[paths.resource(defaults.QUEUE_API, "queues")]["list:first"] == 2
    assert counts[paths.resource("v1", "nodes")]["list:first"] == 1
    mine = sorted(key for key in pods if key.startswith(f"{namespace}/"))
    assert mine == [f"{namespace}/{made[-1]}"]  # every deletion seen across the resumed watches
