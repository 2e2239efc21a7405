"""The stages' promise: once a staged group's first stage runs, the room of its later stages stays held. Pure.

A group whose pods arrive in stages (a JobSet: ``bridge.adapters.jobset.stages``) names its
first stage as the gang (minMember, minTaskMember) and the room of the whole as minResources; the
group's ``vbridge.io/stages`` annotation says which pods the later stages bring
(``snapshot.Job.stages``; each later stage is itself placed whole, ``plugins.gang``). Once the
first stage is ready (minMember pods allocated, running or succeeded), ``minResources − what the
group's pods hold`` is held for the group's own pods, as the Spark hold does for a driver's
executors (``plugins.spark``), until every pod of every stage has arrived and none is pending: a
newcomer never takes the room a running job's later stage needs, not even in the cycle its pods
arrive in (a gang not yet ready goes first). The hold has no timeout (a later stage may wait for
an earlier one to complete); it ends with the group, which its reconciler deletes once the job is
finished. Its capacity is counted by enqueue (``plugins.overcommit``) and kept from other groups'
allocations (``Session.held_against``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from scheduler.framework import session

__all__ = ["Vector", "holds"]

Vector = npt.NDArray[np.float64]


def holds(ssn: session.Session) -> dict[str, Vector]:
    """Owed room per staged job whose first stage runs and whose later pods are not all placed."""
    out: dict[str, Vector] = {}
    for key, job in ssn.snapshot.jobs.items():
        if not job.later or job.min_resources is None or job.held is not None:
            continue
        if ssn.counts.ready[key] < job.min_member:
            continue  # the first stage does not run (yet, or any more)
        if len(job.tasks) >= job.min_member + job.later and not ssn.counts.pending[key]:
            continue  # every stage arrived and was placed
        owed = np.maximum(ssn.vector(job.min_resources) - ssn.allocated.job[key], 0)
        if owed.any():
            out[key] = owed
    return out
