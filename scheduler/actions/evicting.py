"""Shared by preempt and reclaim: make room for one task by evicting victims on one node.

Nodes are tried in row order among those that pass the task's predicates and hold
candidates. On a node, the plugins (``victims`` hook) decide which candidates may go; if
evicting all of them would not make room the node is skipped, otherwise the lowest-priority
victims are evicted until the task fits the node's future-idle resources, and the task is
pipelined there. Where a plugin orders the victims' queues (``victim_queue_order``: capacity's
queue tree, siblings before cousins), those go first on a node, and every node is tried: the
one whose farthest needed victim is nearest wins. Everything goes through the caller's statement, so it is undone if the
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
    mine = ssn.job(task.job).queue
    nearest = plugins.orders_victims
    best: tuple[tuple[object, ...], int, list[snapshot.Task]] | None = None
    for row in sorted(by_row):
        # Nearest queues first where a plugin orders them (capacity: the queue tree), then cheapest
        # (lowest job priority, lowest task priority, newest), and asked in that order, so plugins
        # that allow only some (gang surplus, queue over-share) keep the cheap ones.
        ordered = sorted(
            by_row[row],
            key=lambda v: (
                plugins.victim_queue_order(ssn.job(v.job).queue, mine) if nearest else (),
                ssn.job(v.job).priority,
                v.priority,
                _newest_first(v.created),
            ),
        )
        allowed = plugins.victims(task, ordered, action=action)
        freed = sum((ssn.vector(v.request) for v in allowed), np.zeros(len(ssn.dims)))
        if not allowed or np.any(ssn.nodes.future[row][asked] + freed[asked] < req[asked]):
            continue
        chosen, room = [], ssn.nodes.future[row].copy()
        for victim in allowed:
            if np.all(room[asked] >= req[asked]):
                break
            chosen.append(victim)
            room += ssn.vector(victim.request)
        if not nearest:
            best = ((), row, chosen)
            break
        # With queues ordered, the node whose farthest victim is nearest wins (row order on ties).
        farthest = max((plugins.victim_queue_order(ssn.job(v.job).queue, mine) for v in chosen), default=())
        if best is None or farthest < best[0]:
            best = (farthest, row, chosen)
    if best is None:
        return False
    _, row, chosen = best
    for victim in chosen:
        message = f"{reason} to make room for {task.key} (PodGroup {task.job})"
        stmt.evict(victim.key, reason=reason, message=message)
    stmt.pipeline(task.key, row)
    return True


def _newest_first(created: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in created)
