"""overcommit: admit a job only if its minResources fit what the cluster has not promised.

``idle = allocatable × overcommit factor − Σ used`` over all nodes; ``promised`` is the
minResources of Inqueue jobs plus, for admitted jobs that already hold pods, what their
minResources still owe (Volcano's GetInqueueResource) while they have members left to place.
A Spark job past its reservation
timeout owes nothing. A job without minResources is always admitted. This is what keeps two
big gangs from each grabbing half the cluster and deadlocking (Volcano #3373).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.framework import config, plugin, session
from scheduler.plugins import spark as spark_plugin

__all__ = ["Overcommit", "Vector", "promised"]

Vector = npt.NDArray[np.float64]


def promised(ssn: session.Session, job: str) -> Vector:
    """What an admitted job still reserves beyond the pods it holds."""
    info = ssn.job(job)
    held = ssn.holds.owed.get(job)
    if held is not None:
        return held.copy()  # a running Spark driver's executors, even before their pods exist
    if info.min_resources is None or ssn.phase[job] in ("Pending", "Completed"):
        return np.zeros(len(ssn.dims))
    if info.spark and spark_plugin.driver_started(ssn.snapshot, info) is not None:
        return np.zeros(len(ssn.dims))  # executors arrived, or the reservation timed out
    if not ssn.counts.pending[job]:
        return np.zeros(len(ssn.dims))  # nothing left to place: all members placed or finished
    return np.maximum(ssn.vector(info.min_resources) - ssn.allocated.job[job], 0)


class Overcommit(plugin.Plugin):
    name = "overcommit"

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        snap = ssn.snapshot
        total = snap.allocatable.sum(axis=0) * ssn.config.overcommit_factor
        self.idle = total - snap.used.sum(axis=0)
        self._inqueue: Vector | None = None
        self._permitted: str | None = None

    def enqueueable(self, job: str) -> bool:
        ssn = self.session
        info = ssn.job(job)
        if info.min_resources is None:
            return True
        if self._inqueue is None:
            self._inqueue = sum((promised(ssn, key) for key in ssn.snapshot.jobs), np.zeros(len(ssn.dims)))
        elif self._permitted is not None and ssn.phase[self._permitted] == "Inqueue":
            # The job permitted last time was admitted: it now counts as promised. Keeping a
            # running total avoids re-summing every job for every Pending job.
            self._inqueue = self._inqueue + promised(ssn, self._permitted)
        self._permitted = None
        want = ssn.vector(info.min_resources)
        asked = want > 0
        if np.all(self._inqueue[asked] + want[asked] <= self.idle[asked]):
            self._permitted = job
            return True
        return False
