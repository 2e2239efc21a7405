"""preempt: within a queue, a starving job evicts lower-priority running tasks, whole gang or nothing.

Preemptors are admitted jobs that are not yet pipelined, in queue then job order. Each pending
task first tries free or releasing resources, then evicting victims: running, preemptable
(annotation ``volcano.sh/preemptable`` not "false") tasks of the same queue that the plugins
allow (priority: strictly lower; gang: only members above minMember; conformance: no
critical pods). Every task is only pipelined; if the whole gang is then pipelined the
evictions are committed (the gang binds in a later cycle, once the victims are gone),
otherwise everything is rolled back.
"""

from __future__ import annotations

from scheduler.actions import evicting
from scheduler.api import snapshot
from scheduler.framework import placement, session, statement, tiers

__all__ = ["ADMITTED", "execute", "run", "starving"]

ADMITTED = ("Inqueue", "Running", "Unknown")


def starving(ssn: session.Session, plugins: tiers.Tiers) -> list[str]:
    """Admitted, valid jobs with pending work that are not pipelined, in queue and job order."""
    jobs = [
        key
        for key, job in ssn.snapshot.jobs.items()
        if ssn.phase[key] in ADMITTED
        and key not in ssn.never
        and job.queue in ssn.snapshot.queues
        and key not in ssn.diagnostics.invalid
        and any(not ssn.task(t).best_effort for t in ssn.pending_tasks(key))
        and not plugins.job_pipelined(key)
    ]
    return sorted(jobs, key=lambda k: (plugins.queue_order(ssn.job(k).queue), plugins.job_order(k)))


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    for job in starving(ssn, plugins):
        queue = ssn.job(job).queue
        candidates = [
            t
            for t in ssn.snapshot.tasks.values()
            if ssn.job(t.job).queue == queue and t.preemptable and ssn.status[t.key] is snapshot.TaskStatus.RUNNING
        ]
        if not candidates:
            continue
        run(ssn, plugins, placer, job, candidates, action="preempt", reason="Preempted")


def run(
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    job: str,
    candidates: list[snapshot.Task],
    *,
    action: str,
    reason: str,
) -> None:
    """Pipeline every pending task of ``job``, evicting where needed; commit only a whole gang."""
    stmt = statement.Statement(ssn)
    for key in ssn.pending_tasks(job):
        task = ssn.task(key)
        if task.best_effort:
            continue
        # Preemption trades within one queue, so the queue's share is unchanged; reclaim grows it.
        if action == "reclaim" and not plugins.preemptive(ssn.job(job).queue, task):
            break
        choice = placer.place(task)
        if choice is not None:
            stmt.pipeline(key, choice[1])
            continue
        others = [c for c in candidates if c.key != key]
        if not evicting.make_room(ssn, plugins, placer, stmt, task, others, action=action, reason=reason):
            break
    if plugins.job_pipelined(job) and stmt:
        ssn.diagnostics.evictions.setdefault(job, []).extend(stmt.evictions())
        stmt.commit()
    else:
        stmt.discard()
