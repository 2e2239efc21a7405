"""Victim bundles for the gang-level actions (Volcano's gangpreempt / gangreclaim). Pure.

A bundle is what is evicted as one decision, per victim job:

- a *safe* bundle holds the job's surplus: running replicas above its ``minMember`` (and above
  each task's ``minTaskMember``), cheapest first (lowest task priority, newest); a job already
  below ``minMember`` is all surplus (evicting more breaks nothing that is not broken);
- a *whole* bundle holds every evictable task of the job: choosing it evicts all of it. A job
  whose running tasks are not all candidates (one is ``volcano.sh/preemptable: "false"``, or a
  plugin keeps it) has no whole bundle, so a gang is never left running below ``minMember``
  (``whole``: that bundle alone, for the native backend's reclaim, which evicts whole groups only).

``ordered`` sorts as Volcano does: safe before whole; then, for preempt, the victim job that
job order puts last first, and for reclaim the victim queue nearest the reclaimer first (where
a plugin orders victim queues); then the best relief per disruption (``roi``: what the bundle
frees of the preemptor's need, over what it destroys, a safe bundle destroying nothing); then
by job name. ``allowed`` keeps what the plugins permit: a safe bundle shrinks, a whole one stays
whole or goes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.api import snapshot
from scheduler.framework import session

__all__ = ["LIVE", "Bundle", "Vector", "allowed", "cheapest_first", "of_job", "ordered", "roi", "whole"]

Vector = npt.NDArray[np.float64]
LIVE = (snapshot.TaskStatus.RUNNING, snapshot.TaskStatus.BOUND, snapshot.TaskStatus.ALLOCATED)


@dataclasses.dataclass(frozen=True, slots=True)
class Bundle:
    job: str
    whole: bool
    tasks: tuple[snapshot.Task, ...]
    why: str  # for events and explain: "surplus above minMember 2" or "the whole job (minMember 4)"


def cheapest_first(tasks: Iterable[snapshot.Task]) -> list[snapshot.Task]:
    """Lowest task priority first, then the newest (the one that has run least)."""
    return sorted(tasks, key=lambda t: (t.priority, tuple(-ord(c) for c in t.created), t.key))


def of_job(ssn: session.Session, job: str, candidates: Sequence[snapshot.Task]) -> list[Bundle]:
    """The safe and whole bundles of ``job`` from its ``candidates`` (running, evictable tasks)."""
    info = ssn.job(job)
    tasks = cheapest_first(candidates)
    surplus = ssn.counts.ready[job] - info.min_member
    if surplus < 0:
        return [Bundle(job, False, tuple(tasks), f"{job} is already below minMember {info.min_member}")]
    per_task = {name: ssn.counts.task_ready[(job, name)] - minimum for name, minimum in info.min_task_member.items()}
    safe = []
    for task in tasks:
        if surplus > 0 and per_task.get(task.task_name, 1) > 0:
            safe.append(task)
            surplus -= 1
            if task.task_name in per_task:
                per_task[task.task_name] -= 1
    out = []
    if safe:
        out.append(Bundle(job, False, tuple(safe), f"surplus of {job} above minMember {info.min_member}"))
    if len(safe) < len(tasks) and (everything := whole(ssn, job, tasks)) is not None:
        out.append(everything)
    return out


def whole(ssn: session.Session, job: str, candidates: Sequence[snapshot.Task]) -> Bundle | None:
    """Every one of ``job``'s ``candidates`` as one whole bundle, or None when some task the job
    runs is no candidate (then the job cannot go whole: it would be left below minMember)."""
    info = ssn.job(job)
    keys = {t.key for t in candidates}
    live = [t for t in info.by_priority if ssn.status[t.key] in LIVE]
    if not candidates or not all(t.key in keys for t in live):
        return None
    return Bundle(job, True, tuple(cheapest_first(candidates)), f"the whole of {job} (minMember {info.min_member})")


def allowed(bundles: Sequence[Bundle], permitted: set[str]) -> list[Bundle]:
    """Bundles rebuilt from the plugins' answer: safe ones shrink, whole ones stay whole or go."""
    out = []
    for bundle in bundles:
        kept = tuple(t for t in bundle.tasks if t.key in permitted)
        if bundle.whole and len(kept) < len(bundle.tasks):
            continue
        if kept:
            out.append(dataclasses.replace(bundle, tasks=kept))
    return out


def roi(ssn: session.Session, bundle: Bundle, need: Vector) -> float:
    """Volcano's bundle score: Σ min(freed, need)/need over Σ destroyed/need, asked dimensions only."""
    asked = need > 0
    if not asked.any():
        return math.inf
    freed = sum((ssn.vector(t.request) for t in bundle.tasks), np.zeros(len(need)))
    local = float(np.sum(np.minimum(freed[asked], need[asked]) / need[asked]))
    if not bundle.whole:
        return math.inf if local > 0 else 0.0
    job = ssn.job(bundle.job)
    destroyed = sum((ssn.vector(t.request) for t in job.by_priority if ssn.status[t.key] in LIVE), np.zeros(len(need)))
    cost = float(np.sum(destroyed[asked] / need[asked]))
    return math.inf if cost == 0 else local / cost


def ordered(
    ssn: session.Session, bundles: Sequence[Bundle], need: Vector, policy: Callable[[Bundle], Any]
) -> list[Bundle]:
    """Safe first, then ``policy`` (a sort key: victim job or victim queue order), best roi, name."""
    scored = [(b, roi(ssn, b, need)) for b in bundles]
    scored.sort(key=lambda br: (br[0].whole, policy(br[0]), -br[1], br[0].job))
    return [b for b, _ in scored]
