"""Parked gangs: kube-scheduler's unschedulable and backoff queues, for whole PodGroups. No I/O.

A gang whose verdict says it cannot be scheduled now (an ``Unschedulable`` condition, and no
operation of the cycle touched its pods) is *parked*: the next cycles hand it to the core in
``SchedulerConfig.parked``, and the core's allocate leaves it out at no cost per pod (enqueue
still decides it, at a cost that does not grow with its pods), while it still counts for queue
shares (its last verdict stands).
It is let go, and tried again, when:

- something it could use changed (``Cache.generation`` moved: a node, a pod leaving or
  finishing, a queue, a PodGroup's spec, a PriorityClass) and its backoff has passed, the
  backoff being ``first`` seconds doubled per attempt that failed in a row, at most ``most``
  (``watching.Backoff``, as every other backoff here)
  (kube-scheduler's podInitialBackoffSeconds 1 and podMaxBackoffSeconds 10: an event moves a
  pod to the backoff queue, not straight back);
- ``most`` seconds went by without such an event (kube-scheduler flushes its unschedulable
  queue after a while too; ours is short, as our events are coarser than its per-plugin hints);
- it was waiting for pods of its own (any reason but ``NotEnoughResources``, e.g.
  ``NotEnoughTasks``: fewer pods than minMember) and a new one came (``Cache.take_grown``): at
  once, as a gang whose pods are being created must not wait for a backoff per pod.

The attempts of a gang are forgotten once a verdict no longer parks it, or it is gone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping

from bridge import defaults
from bridge.k8s import watching

__all__ = ["WAITS_FOR_ROOM", "Parked", "Parking"]

WAITS_FOR_ROOM = "NotEnoughResources"  # the one reason a new pod of its own cannot cure


@dataclasses.dataclass(frozen=True, slots=True)
class Parked:
    ready: float  # not let go by an event before this (its backoff)
    until: float  # let go at this time whatever happens
    generation: int  # ``Cache.generation`` as the cycle that parked it saw it
    members: bool  # a new pod of its own lets it go


class Parking:
    def __init__(self, *, first: float = defaults.PARK_BACKOFF_FIRST, most: float = defaults.PARK_BACKOFF_MOST) -> None:
        self.most = most
        self.backoff = watching.Backoff(first=first, most=most)
        self._parked: dict[str, Parked] = {}
        self._delays: dict[str, float] = {}  # per gang: its backoff after the attempts failed in a row

    def __len__(self) -> int:
        return len(self._parked)

    def current(self, now: float, generation: int, grown: Collection[str]) -> frozenset[str]:
        """The gangs to leave out of the cycle starting at ``now``; the others are let go."""
        for job, p in list(self._parked.items()):
            event = p.generation != generation and now >= p.ready
            if event or now >= p.until or (p.members and job in grown):
                del self._parked[job]
        return frozenset(self._parked)

    def park(self, jobs: Mapping[str, str], now: float, generation: int) -> None:
        """Park each gang of ``jobs`` (key → the reason of its Unschedulable condition) after a
        cycle that decided at ``now`` on a cache at ``generation``."""
        for job, reason in jobs.items():
            backoff = self._delays[job] = self.backoff.next(self._delays.get(job, 0.0))
            self._parked[job] = Parked(now + backoff, now + self.most, generation, reason != WAITS_FOR_ROOM)

    def forget(self, jobs: Iterable[str]) -> None:
        """These gangs were placed, or are gone: no longer parked, their attempts forgotten."""
        for job in jobs:
            self._parked.pop(job, None)
            self._delays.pop(job, None)

    def keep_only(self, present: Collection[str]) -> None:
        """Forget every gang not in ``present`` (the PodGroups the cache holds)."""
        self.forget([job for job in self._delays if job not in present])
