"""Every watcher we run, in a child process of its own, while every watched kind changes each
second: what ``bridge.k8s.watching.STATS`` counted for each watch (``watching.where``).

A child process, because ``STATS`` is process-wide: the session's own watchers (the bridge,
the node simulator) watch the same paths and would add to the counts. ``python -m
tests.support.watchendurance KUBECONFIG NAMESPACE TIMEOUT INTERVALS`` prints one JSON line.

The watchers, on one client whose watches the server ends every ``TIMEOUT`` seconds: the
scheduler's cache (pods and nodes through its views, PodGroups, Queues, PriorityClasses whole),
the facts cache of the webhook and the reconcilers, every reconciler ``vbridge.controllers.wiring``
builds (Volcano Jobs, their pods and PodGroups, Commands, Spark pods; the generic reconcilers'
kinds have no CRD on the test bed) and the node simulator. The watch cache sends a bookmark only
once its kind moved past the version a watch started from (cacher.go), so each second a pod is
made and the one before deleted, and the namespace and one object of every other kind are
relabelled. It runs until every watch has seen ``INTERVALS`` bookmarks and normal ends per
watcher (or a deadline), then waits for the last pod to reach the scheduler's cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

from bridge import defaults, keys
from bridge import facts as cluster_facts
from bridge.adapters.vcjob import names
from bridge.k8s import client, kubeconfigs, paths, watching
from scheduler.io import cache as sched_cache
from tests.builders import vcjob
from tests.support import watchcounts
from vbridge.controllers import wiring
from vbridge.nodesim import simulator

ROOT = pathlib.Path(__file__).resolve().parents[2]
PODS = paths.resource("v1", "pods")
# Every watch these watchers make: the scheduler's five, the facts' namespaces, the Volcano Job
# controller's three, Commands, the Spark reconciler's pods, the node simulator's.
EXPECTED = {
    *(paths.resource(version, plural) for version, plural in sched_cache.KINDS.values()),
    paths.resource("v1", "namespaces"),
    paths.resource(defaults.BATCH_API, "jobs"),
    watching.where(PODS, {"labelSelector": names.JOB_NAME}),
    watching.where(paths.resource(defaults.PODGROUP_API, "podgroups"), {"labelSelector": names.JOB_NAME}),
    paths.resource(defaults.BUS_API, "commands"),
    watching.where(PODS, {"labelSelector": keys.SPARK_ROLE}),
    watching.where(PODS, {"fieldSelector": "spec.nodeName!="}),
}


def patience(timeout: int, intervals: int) -> float:
    """Seconds to wait for every watch to cross ``intervals`` bookmark intervals: on a loaded
    machine some bookmarks come late or are folded into the watch's end (seen: 7 of 10 in
    56 s), and the wait ends as soon as every watch has crossed, so it may be generous."""
    return timeout * intervals * 4 + 60


def long_enough(c: dict[str, int], intervals: int) -> bool:
    """Each watcher of a watch (one per first list) through ``intervals`` bookmarks and ends."""
    watchers = max(c["list:first"], 1)
    return c["bookmarks"] >= intervals * watchers and c["resume:end"] >= intervals * watchers


def _objects(ns: str, tag: str) -> list[tuple[str, dict[str, Any]]]:
    """(collection, body): one object of every watched kind but pods, to relabel each second."""
    meta = {"name": tag}

    def body(api_version: str, kind: str, **rest: Any) -> dict[str, Any]:
        return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}

    target = {"apiVersion": defaults.BATCH_API, "kind": "Job", "name": "absent", "uid": "absent"}
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
            body(defaults.BUS_API, "Command", action="AbortJob", target=target),
        ),
    ]


@contextlib.asynccontextmanager
async def _churning(api: client.Client, ns: str) -> AsyncIterator[list[str]]:
    """Each second, until the block ends: a pod made and the one before deleted, the namespace and
    one object of every other kind relabelled. Yields the pods made; the objects go afterwards."""
    tag = "watch-" + uuid.uuid4().hex[:6]
    made: list[str] = []
    objects = _objects(ns, tag)
    for collection, body in objects:
        await api.request("POST", collection, body=body)
    touched = [*(f"{c}/{tag}" for c, _ in objects), paths.resource("v1", "namespaces", name=ns)]
    pods = paths.resource("v1", "pods", namespace=ns)
    container = {"name": "c", "image": "busybox"}

    async def churn() -> None:
        while True:
            name = f"{tag}-{len(made)}"
            body = {"metadata": {"name": name}, "spec": {"schedulerName": "nobody", "containers": [container]}}
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


async def _crossed(before: watching.Stats, intervals: int, timeout: float) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if all(long_enough(watchcounts.gained(before, w), intervals) for w in EXPECTED):
            return True
        await asyncio.sleep(0.5)
    return False


async def run(kubeconfig: pathlib.Path, ns: str, timeout: int, intervals: int) -> dict[str, Any]:
    before = watching.STATS.copy()
    async with client.Client(kubeconfigs.load(kubeconfig), watch_timeout=timeout) as api:
        facts = cluster_facts.Facts()
        cache = sched_cache.Cache(api)
        reconcilers = wiring.reconcilers(api, facts, scheduler_name="nobody", templates_by_name={})
        work = [cache.run(), facts.run(api), simulator.Simulator(api, []).serve(), *(r.run() for r in reconcilers)]
        tasks = [asyncio.create_task(w) for w in work]
        try:
            async with asyncio.timeout(30):
                while not (cache.synced.is_set() and facts.synced and watchcounts.listed(before) >= EXPECTED):
                    await asyncio.sleep(0.1)
            async with _churning(api, ns) as made:
                crossed = await _crossed(before, intervals, patience(timeout, intervals))
                last = f"{ns}/{made[-1]}"
                async with asyncio.timeout(10):  # what changed reaches the cache
                    while last not in cache.store["pods"]:
                        await asyncio.sleep(0.05)
                held = sorted(key for key in cache.store["pods"] if key.startswith(f"{ns}/"))
        finally:
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "crossed": crossed,
        "counts": {w: watchcounts.gained(before, w) for w in sorted(EXPECTED)},
        "made": made,
        "held": held,
        "ended": [repr(r) for r in results if not isinstance(r, asyncio.CancelledError)],
    }


def in_child(kubeconfig: pathlib.Path, ns: str, timeout: int, intervals: int) -> dict[str, Any]:
    """:func:`run` in a child process; what it found."""
    out = subprocess.run(
        [sys.executable, "-m", "tests.support.watchendurance", str(kubeconfig), ns, str(timeout), str(intervals)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=patience(timeout, intervals) + 120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    found: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


if __name__ == "__main__":
    kubeconfig, namespace, seconds, intervals = sys.argv[1:5]
    print(json.dumps(asyncio.run(run(pathlib.Path(kubeconfig), namespace, int(seconds), int(intervals)))))
