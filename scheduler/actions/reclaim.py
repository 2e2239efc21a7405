"""reclaim: a starving job of a queue below its deserved share takes back capacity from others.

Victims are running, preemptable tasks of *other* queues that are ``reclaimable`` (absent
means true) and that the plugins allow (proportion: the victim's queue is above its deserved
share and stays at or above its guarantee; gang: only members above minMember; conformance:
no critical pods). Like preempt, everything is pipelined and committed only if the whole
gang is pipelined.
"""

from __future__ import annotations

from scheduler.actions import preempt
from scheduler.api import snapshot
from scheduler.framework import placement, session, tiers

__all__ = ["candidates", "execute"]


def candidates(ssn: session.Session, queue: str | None) -> list[snapshot.Task]:
    """Running, preemptable tasks of the queues other than ``queue`` (None: of every queue) that
    are ``reclaimable``."""
    queues = ssn.snapshot.queues
    return [
        t
        for t in ssn.snapshot.tasks.values()
        if (victim_queue := ssn.job(t.job).queue) != queue
        and victim_queue in queues
        and queues[victim_queue].reclaimable
        and t.preemptable
        and ssn.status[t.key] is snapshot.TaskStatus.RUNNING
    ]


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    for job in preempt.starving(ssn, plugins):
        queue = ssn.job(job).queue
        if plugins.overused(queue):
            continue
        victims = candidates(ssn, queue)
        if not victims:
            continue
        preempt.run(ssn, plugins, placer, job, victims, action="reclaim", reason="Reclaimed")
