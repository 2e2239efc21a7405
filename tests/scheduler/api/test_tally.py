"""tally: a session's per-job counts and sums, made in bulk, equal counting pod by pod."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from scheduler import configure
from scheduler.api import building, snapshot
from scheduler.framework import session
from tests.builders import scheduler as b
from tests.support import scenarios

S = snapshot.TaskStatus


def _pods() -> list[dict[str, Any]]:
    pods = [
        b.pod("run", group="a", task="w", node="n1", cpu="2"),
        b.pod("bound", group="a", task="w", node="n2", phase="Pending", cpu="1"),
        b.pod("done", group="a", task="ps", node="n1", phase="Succeeded"),
        b.pod("failed", group="b", node="n1", phase="Failed"),
        b.pod("wait", group="b", task="w"),
        b.pod("idle", group="b", task="ps", cpu=None, memory=None),  # BestEffort
        b.pod("lost", group="b", node="gone", cpu="3"),  # on a node the snapshot does not have
        b.pod("other", group="c", node="n2", cpu="500m", memory="3Gi"),
    ]
    leaving = b.pod("leaving", group="c", node="n2", cpu="4")
    leaving["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
    return [*pods, leaving]


def test_counts_and_sums_equal_pod_by_pod() -> None:
    snap = building.build(
        nodes=[b.node("n1"), b.node("n2")],
        pods=_pods(),
        podgroups=[b.podgroup("a"), b.podgroup("b", queue="q2"), b.podgroup("c"), b.podgroup("empty")],
        queues=[b.queue(), b.queue("q2")],
    )
    ssn = session.Session(snap, configure.default(), scenarios.NOW)
    tasks = list(snap.tasks.values())

    def count(keep: Any, by_name: bool = False) -> collections.Counter[Any]:
        return collections.Counter((t.job, t.task_name) if by_name else t.job for t in tasks if keep(t))

    assert ssn.counts.ready == count(lambda t: t.status in snapshot.READY)
    assert ssn.counts.task_ready == count(lambda t: t.status in snapshot.READY, by_name=True)
    assert ssn.counts.valid_total == count(lambda t: t.status not in (S.FAILED, S.RELEASING))
    assert ssn.counts.valid == count(lambda t: t.status not in (S.FAILED, S.RELEASING), by_name=True)
    assert ssn.counts.pending == count(lambda t: t.status is S.PENDING)
    assert ssn.counts.pending_best_effort == count(lambda t: t.status is S.PENDING and t.best_effort)
    assert ssn.counts.task_pending_best_effort == count(lambda t: t.status is S.PENDING and t.best_effort, by_name=True)
    assert ssn.status == {t.key: t.status for t in tasks}
    assert ssn.row == {"ns/run": 0, "ns/bound": 1, "ns/done": 0, "ns/failed": 0, "ns/other": 1, "ns/leaving": 1}
    for key in snap.jobs:
        held = [ssn.vector(t.request) for t in tasks if t.job == key and t.status in (S.BOUND, S.RUNNING)]
        assert np.array_equal(ssn.allocated.job[key], sum(held, np.zeros(len(snap.dims))))
    assert ssn.allocated.job["ns/a"][0] == 3000  # run + bound; the succeeded pod holds nothing
    assert ssn.allocated.job["ns/b"][0] == 3000  # "lost" runs on an unknown node but is charged
    assert np.array_equal(ssn.allocated.of_queue("default"), ssn.allocated.job["ns/a"] + ssn.allocated.job["ns/c"])
    assert np.array_equal(ssn.allocated.of_queue("q2"), ssn.allocated.job["ns/b"])
    assert not ssn.allocated.of_queue("nowhere").any()  # a queue no job names holds nothing
