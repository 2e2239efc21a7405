"""Which scheduler cycle bound which pod, and whether each gang went out in one cycle.

A gang is bound as one when its first ``minMember`` binds all came in the same cycle (Volcano's
all-or-nothing: the gang is committed in one session, or not at all). Members beyond minMember
(Spark executors joining a running driver's group) may come in later cycles.

A bind whose answer was lost (the connection dropped after the request went out, so the binder
reports ``binding failed: <transport error>``) may still have been carried out: the pod then
ends bound with no recorded success, or with a later "success" that was the 409 of its own
earlier bind. ``binds(unanswered=True)`` counts such a pod from its first unanswered attempt;
callers use it only once they have seen every pod end bound, where no other scheduler binds.

``BindLog.record`` is a ``Scheduler(on_cycle=...)`` callback: it runs on the scheduler's loop
thread while the test thread reads, hence the lock.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping

from scheduler.io import loop


@dataclasses.dataclass(frozen=True, slots=True)
class Bind:
    cycle: int
    group: str | None  # the PodGroup, "namespace/name", as the cycle saw the pod's annotation


# How the binder words a bind whose request went out and whose answer never came.
UNANSWERED = "binding failed: "


class BindLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._binds: dict[str, Bind] = {}
        self._failed: list[str] = []
        self._unanswered: dict[str, Bind] = {}

    def record(self, report: loop.CycleReport) -> None:
        with self._lock:
            for pod in report.outcome.bound:
                # The first bind of a name wins: a pod re-created under the same name is a later member.
                self._binds.setdefault(pod, Bind(report.cycle, report.groups.get(pod)))
            for pod, why in report.outcome.failed:
                self._failed.append(f"{pod} ({report.groups.get(pod)}) in cycle {report.cycle}: {why}")
                if why.startswith(UNANSWERED) and pod not in self._binds:
                    self._unanswered.setdefault(pod, Bind(report.cycle, report.groups.get(pod)))

    def binds(self, *, unanswered: bool = False) -> dict[str, Bind]:
        """Pod ("namespace/name") -> its first bind; with ``unanswered``, a bind whose answer was
        lost before any recorded success counts as that pod's bind."""
        with self._lock:
            if not unanswered:
                return dict(self._binds)
            return {
                **self._binds,
                **{p: b for p, b in self._unanswered.items() if p not in self._binds or b.cycle < self._binds[p].cycle},
            }

    def failed(self) -> list[str]:
        """The binds that failed, oldest first: why a gang may have gone out piecemeal."""
        with self._lock:
            return list(self._failed)


def split_gangs(binds: Mapping[str, Bind], min_members: Mapping[str, int]) -> list[str]:
    """What is wrong, one line per PodGroup whose first minMember binds are not all from one cycle."""
    problems = []
    for group, minimum in sorted(min_members.items()):
        members = sorted((b.cycle, pod) for pod, b in binds.items() if b.group == group)
        gang = members[:minimum]
        listed = ", ".join(f"{pod} in cycle {cycle}" for cycle, pod in members)
        if len(gang) < minimum:
            problems.append(
                f"PodGroup {group} (minMember {minimum}): only {len(gang)} binds recorded ({listed or 'none'})"
            )
        elif len({cycle for cycle, _ in gang}) > 1:
            problems.append(
                f"PodGroup {group} (minMember {minimum}) was not bound as one gang: its first {minimum} binds "
                f"came in cycles {sorted({cycle for cycle, _ in gang})} (all binds: {listed})"
            )
    return problems
