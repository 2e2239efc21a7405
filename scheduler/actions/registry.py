"""The actions this scheduler has, by their ``volcano-scheduler.conf`` name, listed explicitly.

``ACTIONS`` maps each name to its ``execute(session, tiers)``; ``cycle.schedule`` runs the
configured ones in order, and ``scheduler.configure`` derives the action names a conf may use
from its keys (an unknown action is an error, as in Volcano).
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.actions import allocate, backfill, enqueue, gangpreempt, gangreclaim, preempt, reclaim
from scheduler.framework import config, session, tiers

__all__ = ["ACTIONS", "ARGUMENTS", "Action"]

Action = Callable[[session.Session, tiers.Tiers], None]

ACTIONS: dict[str, Action] = {
    "enqueue": enqueue.execute,
    "allocate": allocate.execute,
    "backfill": backfill.execute,
    "preempt": preempt.execute,
    "reclaim": reclaim.execute,
    "gangpreempt": gangpreempt.execute,
    "gangreclaim": gangreclaim.execute,
}

# Actions that take arguments (the conf's ``configurations``): each checks its own, at start-up.
ARGUMENTS: dict[str, Callable[[config.PluginOption], object]] = {
    "gangpreempt": gangpreempt.allow_whole,
    "gangreclaim": gangpreempt.allow_whole,
}
