"""What a long run saw finish, kept after the finished work is cleaned away.

A churn run that keeps every finished job, pod and PodGroup makes every cache grow, so its
memory is never flat; one that cleans up (Volcano Jobs with ``ttlSecondsAfterFinished``, plain
gangs deleted once all their pods succeeded, as an operator deletes what it finished) can no
longer count its results at the end. The ledger is fed ``accounting.Tally`` probes during the
run and remembers, for each job, the first terminal phase it was seen in, and for each plain
gang, that it finished with all of its ``minMember`` pods bound; :meth:`Ledger.observe` returns
the plain gangs now safe to delete. A job that vanished before it was seen terminal stays
unrecorded, so it counts as lost.
"""

from __future__ import annotations

import dataclasses

from tests.support import accounting


@dataclasses.dataclass
class Ledger:
    jobs: dict[str, str] = dataclasses.field(default_factory=dict)  # "ns/name" -> first terminal phase
    gangs: dict[str, int] = dataclasses.field(default_factory=dict)  # "ns/name" -> pods bound when finished
    deleted: set[str] = dataclasses.field(default_factory=set)  # plain gangs handed back for deletion

    def observe(self, tally: accounting.Tally, plain: set[str]) -> list[str]:
        """Record what ``tally`` shows finished; the plain gangs (of ``plain``) to delete now."""
        for job, phase in tally.jobs.items():
            if phase in accounting.TERMINAL:
                self.jobs.setdefault(job, phase)
        done = []
        for gang in plain - self.deleted:
            got = tally.groups.get(gang)
            states = tally.members.get(gang, [])
            if got is None or got[1] < got[0] or len(states) < got[0]:
                continue
            if all(": Succeeded on " in state for state in states):  # accounting.pod_state's form
                self.gangs[gang] = got[1]
                done.append(gang)
        self.deleted.update(done)
        return done

    def finished(self, jobs: list[str], gangs: list[str]) -> int:
        return sum(1 for j in jobs if j in self.jobs) + sum(1 for g in gangs if g in self.gangs)

    def missing(self, jobs: list[str], gangs: list[str]) -> list[str]:
        return [j for j in jobs if j not in self.jobs] + [g for g in gangs if g not in self.gangs]
