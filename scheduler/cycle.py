"""One scheduling cycle: ``schedule(snapshot, config, now) -> Plan``. Pure and deterministic.

``open_session`` builds a session over the snapshot and this cycle's plugins (the registry's
always-on ones, then the configured tiers'); ``schedule`` runs the configured actions, from
``actions.registry``, in order (``run``), and closes the session into a plan. Same inputs, same plan:
no clock, randomness, environment or globals are consulted; ``now`` is only used for the
Spark reservation timeout. ``on_commit`` is an optional sink for committed Allocates (the I/O
shell binds them early); it does not change the plan.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from bridge import defaults
from scheduler.actions import registry as action_registry
from scheduler.actions import ungate
from scheduler.api import plan, snapshot
from scheduler.framework import config, feasibility, session, tiers, verdicts
from scheduler.plugins import registry as plugin_registry

__all__ = ["open_session", "run", "schedule"]


def open_session(
    snap: snapshot.Snapshot,
    conf: config.SchedulerConfig,
    now: datetime.datetime,
    on_commit: Callable[[list[plan.Allocate]], None] | None = None,
) -> tuple[session.Session, tiers.Tiers]:
    """A session over ``snap`` with this cycle's plugins built and opened, and the jobs that can
    never run here set aside before any action: those no node could hold
    (``framework.feasibility``) and those the snapshot holds (``Job.held``: an unsound spec or
    queue, a queue that does not admit the namespace)."""
    ssn = session.Session(snap, conf, now, on_commit)
    plugins = tiers.Tiers(conf, ssn, plugin_registry.PLUGINS, plugin_registry.ALWAYS)
    held = {key: job.held[1] for key, job in snap.jobs.items() if job.held is not None}
    ssn.never_fits({**feasibility.unrunnable(ssn, plugins), **held})
    return ssn, plugins


def run(ssn: session.Session, plugins: tiers.Tiers) -> plan.Plan:
    """The configured actions, in order, over an open session; then the session closed into a
    plan. On the native backend the actions are ``actions.registry.NATIVE``'s, ``actions.ungate``
    follows them, and the plan leaves the pods' verdicts to kube-scheduler (``ungate.hand_over``)."""
    native = ssn.config.backend == defaults.NATIVE
    table = action_registry.NATIVE if native else action_registry.ACTIONS
    for name in ssn.config.actions:
        table[name](ssn, plugins)
    if not native:
        return verdicts.close(ssn)
    ungate.execute(ssn, plugins)
    return ungate.hand_over(verdicts.close(ssn), ssn.snapshot)


def schedule(
    snap: snapshot.Snapshot,
    conf: config.SchedulerConfig,
    now: datetime.datetime,
    on_commit: Callable[[list[plan.Allocate]], None] | None = None,
) -> plan.Plan:
    """The cycle's plan. ``on_commit``, when given, is also handed each committed statement's
    Allocates as soon as it commits (the plan still lists them): the caller may start binding
    them while the cycle goes on. It must not touch the snapshot."""
    ssn, plugins = open_session(snap, conf, now, on_commit)
    return run(ssn, plugins)
