"""backfill: place BestEffort tasks (no requests) of admitted jobs on the best feasible node.

Gang already counts pending BestEffort members as ready. A job's BestEffort tasks are still
placed in one statement, committed only when every one of them found a node, so a gang made
only of BestEffort pods (a Volcano Job whose templates ask for nothing) binds at once, in one
cycle, or not at all; and only when the job is then ready, so a BestEffort member (an MPI
launcher) is never bound ahead of the rest of a gang that allocate could not place.
"""

from __future__ import annotations

from scheduler.framework import placement, session, statement, tiers

__all__ = ["ADMITTED", "execute"]

ADMITTED = ("Inqueue", "Running", "Unknown")


def execute(ssn: session.Session, plugins: tiers.Tiers) -> None:
    placer = placement.Placer(ssn, plugins)
    # Only jobs with pending BestEffort tasks have anything to do here (nothing else places
    # those, and this count follows them); filtering before sorting keeps the order.
    todo = [key for key in ssn.snapshot.jobs if ssn.counts.pending_best_effort[key] > 0]
    for key in sorted(todo, key=plugins.job_order):
        if ssn.phase[key] not in ADMITTED or key in ssn.diagnostics.invalid or key in ssn.never:
            continue
        stmt = statement.Statement(ssn)
        failed = False
        for task_key in ssn.pending_tasks(key):
            task = ssn.task(task_key)
            if not task.best_effort:
                continue
            choice = placer.place(task, pipeline=False)
            if choice is None:
                ssn.diagnostics.fit_errors[task_key] = placer.explain(task)
                failed = True
                continue
            stmt.allocate(task_key, choice[1])
        # Volcano dispatches only a ready job's allocations: no lone launcher of an unplaced gang.
        if not failed and plugins.job_ready(key):
            stmt.commit()
        else:
            stmt.discard()
