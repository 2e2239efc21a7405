"""Every watcher we run lasts across many watch ends and bookmarks with no list after its first.

On the real apiserver, whose watch cache sends a bookmark about 2 s before each watch's
``timeoutSeconds`` deadline (cacheWatcher.nextBookmarkTime: min(now + 1 min, deadline - 2 s)),
with watches asked to end after ``TIMEOUT`` seconds (the client's ``watch_timeout``; production
asks for ``defaults.WATCH_TIMEOUT_SECONDS``). ``tests.support.watchendurance`` runs the scheduler's
cache, the facts cache, every reconciler and the node simulator in a child process while every
watched kind changes; each watch must cross ``INTERVALS`` bookmark intervals (a bookmark, then a
normal end, resumed) per watcher with zero lists but its first, no dropped stream, nothing
skipped, and the scheduler's cache must hold exactly the pod left of those made and deleted.
"""

from __future__ import annotations

import pytest

from bridge import defaults
from bridge.k8s import paths
from tests.support import watchendurance
from vbridge.localcluster import cluster

pytestmark = pytest.mark.integration

TIMEOUT = 4  # seconds each watch is asked to stay open: a bookmark after ~2 s, then its end
INTERVALS = 5


@pytest.mark.timeout(watchendurance.patience(TIMEOUT, INTERVALS) + 180)
def test_every_watcher_crosses_bookmark_intervals_with_no_relist(
    control_plane: cluster.LocalCluster, namespace: str
) -> None:
    found = watchendurance.in_child(control_plane.kubeconfig, namespace, TIMEOUT, INTERVALS)
    counts: dict[str, dict[str, int]] = found["counts"]
    for where, c in counts.items():
        print(where, c)
    assert not found["ended"], found["ended"]  # no watcher ended by itself
    assert found["crossed"], counts
    assert set(counts) == watchendurance.EXPECTED
    for where, c in counts.items():
        assert c["list:gone"] == 0 and c["list:error"] == 0, (where, c)
        assert c["resume:dropped"] == 0 and c["skipped"] == 0, (where, c)
        assert watchendurance.long_enough(c, INTERVALS), (where, c)
    # One first list per watcher: the scheduler's cache and the facts cache both watch Queues and
    # PriorityClasses; nodes only the scheduler.
    assert counts[paths.resource(defaults.QUEUE_API, "queues")]["list:first"] == 2
    assert counts[paths.resource("v1", "nodes")]["list:first"] == 1
    assert found["held"] == [f"{namespace}/{found['made'][-1]}"]  # every deletion seen across resumes
