"""Spark's promise: capacity owed to a running driver's executors stays held for them. Pure.

A Spark group (pods labelled ``spark-role`` or ``spark-app-selector``) has minMember 1 and
declares driver + executors in ``minResources``. The driver is the pod whose ``spark-role`` is
one of ``DRIVER_ROLES``: ``driver``, or ``connect-server`` (a SparkConnect's server, a client-mode
driver the spark-operator makes). Once the driver runs, what is still owed,
``minResources − what the group's pods hold``, is held for the executors until they arrive or
``spark_reservation_timeout`` seconds after the driver started (measured with the cycle's
``now``). While held, no other group may allocate into it (the session checks
``Session.held_against``) and enqueue counts it as taken; the group's own executors consume it.

``SparkHold`` is the plugin every session opens (``plugins.registry.ALWAYS``): once the
session is built, its ``on_session_open`` hands ``holds``, with the staged groups' holds
(``plugins.stages``), to ``Session.hold``.

The hold is cluster-wide per resource dimension, not pinned to nodes: executors are usually
created by the driver after it starts, so their shape is not known when the hold begins.
"""

from __future__ import annotations

import datetime

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot
from scheduler.framework import plugin, session
from scheduler.plugins import stages as stages_plugin

__all__ = ["DRIVER_ROLES", "SparkHold", "Vector", "driver_started", "holds", "in_reservation"]

Vector = npt.NDArray[np.float64]
DRIVER_ROLES = ("driver", "connect-server")


def driver_started(snap: snapshot.Snapshot, job: snapshot.Job) -> datetime.datetime | None:
    """Start time of the job's running driver, if it runs."""
    for key in job.tasks:
        task = snap.tasks[key]
        if task.spark_role in DRIVER_ROLES and task.status is snapshot.TaskStatus.RUNNING:
            return task.started or datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return None


def in_reservation(snap: snapshot.Snapshot, job: snapshot.Job, *, now: datetime.datetime, timeout: float) -> bool:
    """True while the job's executors are owed held capacity."""
    if not job.spark or job.min_resources is None:
        return False
    started = driver_started(snap, job)
    if started is None:
        return False
    return (now - started).total_seconds() < timeout


def holds(ssn: session.Session) -> dict[str, Vector]:
    """Owed capacity per Spark job in its reservation window (only jobs owed something)."""
    out: dict[str, Vector] = {}
    timeout = ssn.config.spark_reservation_timeout
    for key, job in ssn.snapshot.jobs.items():
        if job.min_resources is None or not in_reservation(ssn.snapshot, job, now=ssn.now, timeout=timeout):
            continue
        owed = np.maximum(ssn.vector(job.min_resources) - ssn.allocated.job[key], 0)
        if owed.any():
            out[key] = owed
    return out


class SparkHold(plugin.Plugin):
    """Holds what running Spark drivers' executors are owed, and staged groups' later stages
    (``plugins.stages``), for the whole cycle."""

    name = "spark"

    def on_session_open(self) -> None:
        self.session.hold({**stages_plugin.holds(self.session), **holds(self.session)})
