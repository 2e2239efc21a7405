"""backfill: place BestEffort tasks (no requests) of admitted jobs on the best feasible node.

Gang already counts pending BestEffort members as ready. A job's BestEffort tasks are still
placed in one statement, committed only when every one of them found a node, so a gang made
only of BestEffort pods (a Volcano Job whose templates ask for nothing) binds at once, in one
cycle, or not at all.
"""

from __future__ import annotations

from scheduler import placement, session, statement
from scheduler.plugins import tiers

__all__ = ["execute"]

ADMITTED = ("Inqueue", "Running", "Unknown")


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    for key in sorted(ssn.snapshot.jobs, key=plugins.job_order):
        if ssn.phase[key] not in ADMITTED or key in ssn.invalid:
            continue
        stmt = statement.Statement(ssn)
        placed = 0
        failed = False
        for task_key in ssn.pending_tasks(key):
            task = ssn.task(task_key)
            if not task.best_effort:
                continue
            choice = placer.place(task, pipeline=False)
            if choice is None:
                ssn.fit_errors[task_key] = placer.explain(task)
                failed = True
                continue
            stmt.allocate(task_key, choice[1])
            placed += 1
        if failed:
            stmt.discard()
            continue
        ssn.pending_best_effort[key] -= placed  # now counted as allocated instead
        stmt.commit()
