"""enqueue: admit Pending PodGroups (Pending → Inqueue) while the cluster can hold them.

Queues take turns by queue order, jobs within a queue by job order. A job is admitted when
every plugin's ``enqueueable`` agrees: overcommit (minResources fits the overcommitted idle
capacity minus what admitted groups still reserve), proportion (the queue is Open and within
its real capability). Admitting one job at a time and counting it before the next is what
stops two big gangs from each taking half the cluster.
"""

from __future__ import annotations

from scheduler.framework import session, tiers

__all__ = ["execute"]


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    by_queue: dict[str, list[str]] = {}
    for key, info in ssn.snapshot.jobs.items():
        if ssn.phase[key] == "Pending" and info.queue in ssn.snapshot.queues:
            by_queue.setdefault(info.queue, []).append(key)
    for jobs in by_queue.values():
        jobs.sort(key=plugins.job_order, reverse=True)  # popped from the end
    while by_queue:
        queue = min(by_queue, key=plugins.queue_order)
        candidate = by_queue[queue].pop()
        if not by_queue[queue]:
            del by_queue[queue]
        if plugins.enqueueable(candidate):
            ssn.phase[candidate] = "Inqueue"
        else:
            ssn.diagnostics.job_errors[candidate] = _why_not(ssn, candidate)


def _why_not(ssn: session.Session, job: str) -> str:
    queue = ssn.snapshot.queues[ssn.job(job).queue]
    if queue.state != "Open":
        return f"queue {queue.name} is {queue.state} and takes no new PodGroups"
    return (
        f"PodGroup is pending: minResources {ssn.job(job).min_resources} do not fit the cluster or queue {queue.name}"
    )
