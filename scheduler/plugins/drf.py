"""drf: dominant-resource fairness between jobs, as Volcano v1.15's ``drf`` plugin.

A job's dominant share is the largest, over the cluster's resources, of what the job holds
divided by the cluster's total (the sum of the nodes' allocatable; ``pods`` and resources the
cluster has none of take no part, as Volcano's ``ResourceNames``). What a job holds is what it
has allocated, bound or running plus what this cycle pipelined for it (Volcano's allocate
event fires for both).

- job order: lower dominant share first (after the plugins of earlier tiers and entries before
  it in its tier, as every order key);
- preempt: a running task may be evicted for a preemptor only if the preemptor's job, with the
  preemptor added, would not hold a larger share than the victim's job with the victim (and the
  victims chosen before it from that job) taken away: ``share(preemptor) ≤ share(victim) + δ``.

Volcano's namespace fair share left drf in v1.8; its queue order and reclaim exist only with
``enableHierarchy`` (HDRF over ``volcano.sh/hierarchy`` annotations), which this scheduler
refuses at start-up (``REFUSED``) instead of ignoring. Shares are computed once per cycle for
every job in one array operation and again only for the jobs a statement touched
(``Session.touched``), so drf in the default tiers costs the core next to nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api import resources, snapshot
from scheduler.framework import config, plugin, session

__all__ = ["MIN_RESOURCE", "REFUSED", "SHARE_DELTA", "Drf", "Vector"]

Vector = npt.NDArray[np.float64]
SHARE_DELTA = 0.000001  # Volcano's shareDelta: shares this close are equal
MIN_RESOURCE = 0.1  # Volcano's minResource: a total below it is no resource at all
# Options Volcano's drf has that this one does not carry out: the conf is refused with them.
REFUSED = {"enableHierarchy": "hierarchical DRF (HDRF, volcano.sh/hierarchy annotations) is not implemented"}


class Drf(plugin.Plugin):
    name = "drf"
    refused = REFUSED

    def __init__(self, option: config.PluginOption, ssn: session.Session) -> None:
        super().__init__(option, ssn)
        total = ssn.snapshot.allocatable.sum(axis=0)
        self._dims = np.array(
            [i for i, d in enumerate(ssn.dims) if d != resources.PODS and total[i] >= MIN_RESOURCE], dtype=np.intp
        )
        self._total = total[self._dims]
        held = ssn.allocated.matrix[:, self._dims]
        shares = (held / self._total).max(axis=1) if len(self._dims) and len(held) else np.zeros(len(held))
        self._opened: dict[str, float] = dict(zip(ssn.snapshot.columns.jobs, shares.tolist(), strict=True))

    def share(self, held: Vector) -> float:
        """The dominant share of ``held`` (a vector over the session's dimensions)."""
        if not len(self._dims):
            return 0.0
        return float((held[self._dims] / self._total).max())

    def held(self, job: str) -> Vector:
        """What ``job`` holds now: allocated, bound, running, and pipelined this cycle."""
        ssn = self.session
        out: Vector = ssn.allocated.job[job].copy()
        for task in ssn.snapshot.jobs[job].by_priority:
            if ssn.status[task.key] is snapshot.TaskStatus.PIPELINED:
                out += ssn.vector(task.request)
        return out

    def job_share(self, job: str) -> float:
        if job not in self.session.touched:
            return self._opened.get(job, 0.0)
        return self.share(self.held(job))

    def job_order(self, job: str) -> tuple[Any, ...]:
        return (self.job_share(job),)

    def victims(
        self, preemptor: snapshot.Task, candidates: Sequence[snapshot.Task], *, action: str
    ) -> list[snapshot.Task] | None:
        if action not in plugin.PREEMPTS:
            return None  # Volcano's drf judges reclaim only with enableHierarchy
        ssn = self.session
        mine = self.share(self.held(preemptor.job) + ssn.vector(preemptor.request))
        left: dict[str, Vector] = {}
        allowed = []
        for task in candidates:
            if task.job not in left:
                left[task.job] = self.held(task.job)
            left[task.job] -= ssn.vector(task.request)  # as Volcano: every candidate counts, victim or not
            theirs = self.share(left[task.job])
            if mine < theirs or abs(mine - theirs) <= SHARE_DELTA:
                allowed.append(task)
        return allowed
