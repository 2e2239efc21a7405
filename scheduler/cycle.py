"""One scheduling cycle: ``schedule(snapshot, config, now) -> Plan``. Pure and deterministic.

Opens a session over the snapshot, builds this cycle's plugin objects from the configured
tiers, runs the configured actions in order, and closes the session into a plan. Same
inputs, same plan: no clock, randomness, environment or globals are consulted; ``now`` is
only used for the Spark reservation timeout. ``on_commit`` is an optional sink for committed
Allocates (the I/O shell binds them early); it does not change the plan.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from scheduler.actions import allocate, backfill, enqueue, preempt, reclaim
from scheduler.api import plan, snapshot
from scheduler.framework import config, session, tiers, verdicts

__all__ = ["ACTIONS", "schedule"]

ACTIONS: dict[str, Callable[[session.Session, tiers.Tiers], None]] = {
    "enqueue": enqueue.execute,
    "allocate": allocate.execute,
    "backfill": backfill.execute,
    "preempt": preempt.execute,
    "reclaim": reclaim.execute,
}


def schedule(
    snap: snapshot.Snapshot,
    conf: config.SchedulerConfig,
    now: datetime.datetime,
    on_commit: Callable[[list[plan.Allocate]], None] | None = None,
) -> plan.Plan:
    """The cycle's plan. ``on_commit``, when given, is also handed each committed statement's
    Allocates as soon as it commits (the plan still lists them): the caller may start binding
    them while the cycle goes on. It must not touch the snapshot."""
    ssn = session.Session(snap, conf, now, on_commit)
    plugins = tiers.Tiers(conf, ssn)
    for name in conf.actions:
        ACTIONS[name](ssn, plugins)
    return verdicts.close(ssn)
