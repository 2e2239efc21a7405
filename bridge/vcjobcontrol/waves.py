"""Which of a job's missing pods to create now: the gang first, the rest in waves. Pure.

Volcano's job controller waits until the scheduler's enqueue step admits the PodGroup (its
minResources: the gang's, not the job's) and then creates every pod of the job at once
(``syncJob``: one goroutine a pod). A 10,000-replica job with a small minAvailable is admitted
on a 440-slot cluster and gets 10,000 pods that cannot be placed: the apiserver stores them,
the scheduler looks at them every cycle and the controller makes them again on every restart.

Here, of the pods ``lifecycle.step`` finds missing (:func:`release`):

- the gang's are made together, however many (the scheduler must find the gang whole): each
  task's first ``minAvailable`` pods, and further pods in spec order until the job's
  ``minAvailable`` is reached (:func:`gang`);
- beyond the gang, a job holds at most ``limit`` pods that are not placed yet (not bound to a
  node, not running or finished; a pod created but not yet seen by the watch counts as not
  placed), where ``limit`` is as many as it has placed, at least ``least`` and at most ``most``
  (``bridge.defaults.VCJOB_WAVE_LEAST``, ``VCJOB_WAVE_MOST``). A job starts with a wave of
  ``least`` and doubles it as the scheduler places its pods, as kube's slow start does, and a
  full cluster stops it with at most ``most`` pending pods, enough to fill what the next
  finished pods free. The pod watch brings each placement, and with it the sync that makes the
  next wave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bridge import defaults
from bridge.adapters.vcjob import pods, spec

__all__ = ["Pod", "Slot", "gang", "placed", "release"]

Pod = Mapping[str, Any]
Slot = tuple[str, int]  # (task, index)


def placed(pod: Pod) -> bool:
    """Bound to a node, or past Pending: the scheduler is done with it."""
    if (pod.get("spec") or {}).get("nodeName"):
        return True
    return str((pod.get("status") or {}).get("phase") or "Pending") != "Pending"


def _terminating(pod: Pod) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def gang(job: Mapping[str, Any]) -> frozenset[Slot]:
    """The pods the gang needs: each task's first minAvailable, then enough more in spec order
    to reach the job's minAvailable."""
    chosen = [(t.name, i) for t in spec.tasks(job) for i in range(min(t.min_available, t.replicas))]
    need = int(job["spec"].get("minAvailable") or 0)
    if len(chosen) < need:
        taken = set(chosen)
        chosen += [s for s in pods.desired_names(job) if s not in taken][: need - len(chosen)]
    return frozenset(chosen)


def release(
    job: Mapping[str, Any],
    observed: Sequence[Pod],
    missing: Sequence[Slot],
    *,
    expected: int = 0,
    least: int = defaults.VCJOB_WAVE_LEAST,
    most: int = defaults.VCJOB_WAVE_MOST,
) -> tuple[Slot, ...]:
    """The pods of ``missing`` (in spec order) to create now; ``observed`` are the job's pods,
    ``expected`` those created that the watch has not shown yet."""
    the_gang = gang(job)
    first = [s for s in missing if s in the_gang]
    rest = [s for s in missing if s not in the_gang]
    done = sum(1 for p in observed if placed(p))
    waiting = expected + sum(1 for p in observed if not placed(p) and not _terminating(p))
    limit = min(most, max(least, done))
    room = max(0, limit - waiting - len(first))
    return tuple(first + rest[:room])
