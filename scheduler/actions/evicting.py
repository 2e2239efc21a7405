"""Shared by preempt and reclaim: make room for one task by evicting victims on one node.

Nodes are tried in row order among those that pass the task's predicates and hold
candidates. On a node, the plugins (``victims`` hook) decide which candidates may go; if
evicting all of them would not make room the node is skipped, otherwise the lowest-priority
victims are evicted until the task fits the node's future-idle resources, and the task is
pipelined there. Everything goes through the caller's statement, so it is undone if the
preemptor's gang cannot be completed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler.api import snapshot
from scheduler.framework import placement, session, statement, tiers

__all__ = ["make_room"]


def make_room(
    ssn: session.Session,
    plugins: tiers.Tiers,
    placer: placement.Placer,
    stmt: statement.Statement,
    task: snapshot.Task,
    candidates: Sequence[snapshot.Task],
    *,
    action: str,
    reason: str,
) -> bool:
    feasible = placer.feasible(task)
    by_row: dict[int, list[snapshot.Task]] = {}
    for victim in candidates:
        row = ssn.row.get(victim.key)
        if row is not None and feasible[row] and ssn.status[victim.key] is snapshot.TaskStatus.RUNNING:
            by_row.setdefault(row, []).append(victim)
    req = ssn.vector(task.request)
    asked = req > 0
    for row in sorted(by_row):
        # Cheapest first (lowest job priority, lowest task priority, newest), and asked in that
        # order, so plugins that allow only some (gang surplus, queue over-share) keep the cheap ones.
        ordered = sorted(by_row[row], key=lambda v: (ssn.job(v.job).priority, v.priority, _newest_first(v.created)))
        allowed = plugins.victims(task, ordered, action=action)
        freed = sum((ssn.vector(v.request) for v in allowed), np.zeros(len(ssn.dims)))
        if not allowed or np.any(ssn.nodes.future[row][asked] + freed[asked] < req[asked]):
            continue
        for victim in allowed:
            if np.all(ssn.nodes.future[row][asked] >= req[asked]):
                break
            message = f"{reason} to make room for {task.key} (PodGroup {task.job})"
            stmt.evict(victim.key, reason=reason, message=message)
        stmt.pipeline(task.key, row)
        return True
    return False


def _newest_first(created: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in created)
