"""enqueue: admit Pending PodGroups (Pending → Inqueue) while the cluster can hold them.

Queues take turns by queue order, jobs within a queue by job order. A job is admitted when it
can run here at all (``framework.feasibility``: a gang some of whose tasks no node could ever
hold is never admitted, so it reserves nothing) and every plugin's ``enqueueable`` agrees:
overcommit (minResources fits the overcommitted idle capacity minus what admitted groups still
reserve), proportion (the queue is Open and within its real capability). Admitting one job at
a time and counting it before the next is what stops two big gangs from each taking half the
cluster.

Parked jobs (``SchedulerConfig.parked``) are decided as the others: a decision costs the same
whatever the job's size (its minResources against idle room and its queue), and jobs are
admitted in order, each reserving room for the next, so leaving one out would change the
decisions after it. Allocate is where a parked job is skipped.

``decide`` is the decision for one job; ``refusals`` records who said no (``never`` or the
plugin's name) for the jobs left Pending, which ``tools.explain`` reports.
"""

from __future__ import annotations

from scheduler.framework import session, tiers

__all__ = ["NEVER", "decide", "execute", "why_not"]

NEVER = "never"  # the refusal of a job that can never run here


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
        refusal = decide(ssn, plugins, candidate)
        if refusal is None:
            ssn.phase[candidate] = "Inqueue"
        else:
            ssn.diagnostics.refusals[candidate] = refusal
            message = plugins.enqueue_message(candidate, refusal) if refusal != NEVER else None
            ssn.diagnostics.job_errors[candidate] = message or why_not(ssn, candidate, refusal)
            invalid = plugins.refuser_job_valid(candidate, refusal) if refusal != NEVER else None
            if invalid is not None:  # refused because it can never be scheduled as it is (capacity: not a leaf)
                ssn.diagnostics.invalid[candidate] = invalid


def decide(ssn: session.Session, plugins: tiers.Tiers, job: str) -> str | None:
    """None to admit ``job`` now, else who refuses it: ``NEVER`` or a plugin's name."""
    if job in ssn.never:
        return NEVER
    return plugins.enqueue_refusal(job)


def why_not(ssn: session.Session, job: str, refusal: str) -> str:
    """The message of a refusal, for the PodGroup's condition."""
    info = ssn.job(job)
    queue = ssn.snapshot.queues[info.queue]
    if refusal == NEVER:
        return ssn.never[job]
    if queue.state != "Open":
        return f"queue {queue.name} is {queue.state} and takes no new PodGroups"
    want = info.min_resources.human() if info.min_resources is not None else "nothing"
    if refusal == "overcommit":
        return (
            f"PodGroup is pending: minResources ({want}) do not fit what the cluster has not promised yet (overcommit)"
        )
    if refusal == "proportion":
        return f"PodGroup is pending: minResources ({want}) do not fit queue {queue.name}'s capability (proportion)"
    return f"PodGroup is pending: plugin {refusal} does not admit it"
