"""The actions this scheduler has, by their ``volcano-scheduler.conf`` name, listed explicitly.

``ACTIONS`` maps each name to its ``execute(session, tiers)``; ``cycle.schedule`` runs the
configured ones in order, and ``scheduler.configure`` derives the action names a conf may use
from its keys (an unknown action is an error, as in Volcano). ``NATIVE`` is what the same names
run on the native backend (``configure.NATIVE_ACTIONS``): enqueue, and reclaim as
``nativereclaim`` (whole groups, admission only; for a conf's ``reclaim`` or ``gangreclaim``).
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.actions import allocate, backfill, enqueue, gangpreempt, gangreclaim, nativereclaim, preempt, reclaim
from scheduler.framework import config, session, tiers

__all__ = ["ACTIONS", "ARGUMENTS", "NATIVE", "Action"]

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

# The native backend's actions (kube-scheduler places): the queue half only.
NATIVE: dict[str, Action] = {
    "enqueue": enqueue.execute,
    "reclaim": nativereclaim.execute,
}

# Actions that take arguments (the conf's ``configurations``): each checks its own, at start-up.
ARGUMENTS: dict[str, Callable[[config.PluginOption], object]] = {
    "gangpreempt": gangpreempt.allow_whole,
    "gangreclaim": gangpreempt.allow_whole,
}
