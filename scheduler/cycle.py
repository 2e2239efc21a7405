"""One scheduling cycle: ``schedule(snapshot, config, now) -> Plan``. Pure and deterministic.

Opens a session over the snapshot, builds this cycle's plugin objects from the configured
tiers, runs the configured actions in order, and closes the session into a plan. Same
inputs, same plan: no clock, randomness, environment or globals are consulted; ``now`` is
only used for the Spark reservation timeout.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from scheduler import config, plan, session, snapshot, verdicts
from scheduler.actions import allocate, backfill, enqueue, preempt, reclaim
from scheduler.plugins import tiers

__all__ = ["ACTIONS", "schedule"]

ACTIONS: dict[str, Callable[[session.Session, tiers.Tiers], None]] = {
    "enqueue": enqueue.execute,
    "allocate": allocate.execute,
    "backfill": backfill.execute,
    "preempt": preempt.execute,
    "reclaim": reclaim.execute,
}


def schedule(snap: snapshot.Snapshot, conf: config.SchedulerConfig, now: datetime.datetime) -> plan.Plan:
    ssn = session.Session(snap, conf, now)
    plugins = tiers.Tiers(conf, ssn)
    for name in conf.actions:
        ACTIONS[name](ssn, plugins)
    return verdicts.close(ssn)
