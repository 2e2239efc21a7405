"""backfill: place BestEffort tasks (no requests) of admitted jobs on the best feasible node.

Gang already counts pending BestEffort members as ready, so each is bound on its own.
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
        for task_key in ssn.pending_tasks(key):
            task = ssn.task(task_key)
            if not task.best_effort:
                continue
            choice = placer.place(task, pipeline=False)
            if choice is None:
                ssn.fit_errors[task_key] = placer.explain(task)
                continue
            stmt = statement.Statement(ssn)
            stmt.allocate(task_key, choice[1])
            ssn.pending_best_effort[key] -= 1  # now counted as allocated instead
            stmt.commit()
